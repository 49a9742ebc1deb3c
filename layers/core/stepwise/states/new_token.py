"""Sending a reply that shows a new token (`/connect <name>`): FinishTurn's first step for such a reply.

The token is made here, just before it is sent, from the seed the reply keeps and a key that is in no table
(`stepwise.connections.minting`); no table ever holds it. Its hash becomes the connection's, the reply goes
out with the token in its slot, and the seed is forgotten once every chunk is recorded as sent. A retried
FinishTurn makes the same token from the same seed, so a chunk sent again (Telegram's answer was lost) shows
the same token, and one that finds the seed gone sends nothing. A reply whose sending ends otherwise
(Telegram refuses it for good, FinishTurnUndelivered, or RecoverChat after the execution failed) forgets the
seed too; if not even its first chunk, which shows the token, reached the chat, its connection is revoked: no
token of it works, and the chat's history says so.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from stepwise.connections.minting import TOKEN_SLOT, token_from_seed
from stepwise.connections.models import token_hash
from stepwise.states.deliver import deliver_reply
from stepwise.telegram.errors import TelegramBadRequest, TelegramForbidden
from stepwise.turn_records.models import NewToken

if TYPE_CHECKING:
    from stepwise.services import TurnServices
    from stepwise.turn.ref import TurnRef
    from stepwise.turn_records.models import Reply

logger = logging.getLogger(__name__)


def deliver_new_token(turn: TurnRef, reply: Reply, services: TurnServices, deliver: bool) -> Reply:
    """Send the reply with its new token (when `deliver`), or give it up; returns the reply as it now stands:
    settled (its seed gone), revoked if its token never reached the chat. A settled reply sends
    nothing."""
    new = reply.extra
    assert isinstance(new, NewToken)
    seed = new.seed
    if seed is None:  # settled by an earlier attempt: delivered, or given up
        return reply
    connections = services.stores.connections
    if connections is None or services.stores.token_key is None:
        raise RuntimeError("a new token's reply needs the connections' store and the tokens' key")
    if deliver:
        token = token_from_seed(services.stores.token_key(), seed)
        if connections.activate(new.user_id, new.connection, turn.turn_id, token_hash(token)):
            shown = reply.model_copy(update={"text": reply.text.replace(TOKEN_SLOT, token)})
            try:
                deliver_reply(turn, shown, services)
            except (TelegramForbidden, TelegramBadRequest) as error:
                logger.warning("Telegram refused a new token's reply for good", extra={"error": str(error)})
            else:
                services.stores.turns.settle_token(turn.turn_id, revoked=False)
                return _current(turn, services)
        else:
            logger.warning("the new token's connection is gone: the token is not shown")
    # The token is in the reply's first lines, so it reached the chat if the first chunk did.
    if _current(turn, services).sent_chunks == 0:
        connections.revoke(new.user_id, new.connection, made_by=turn.turn_id)
        services.stores.turns.settle_token(turn.turn_id, revoked=True)
        logger.warning("a new token's reply never reached the chat: its connection is revoked")
    else:
        services.stores.turns.settle_token(turn.turn_id, revoked=False)
    return _current(turn, services)


def _current(turn: TurnRef, services: TurnServices) -> Reply:
    reply = services.stores.turns.get_reply(turn.turn_id)
    assert reply is not None
    return reply
