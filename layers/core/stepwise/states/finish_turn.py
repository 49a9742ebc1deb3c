"""FinishTurn: the end of every turn, in one state, step by step and idempotently: send the reply (resuming
where a retried attempt stopped), store it in the history, then free the chat and start the next turn.

Each step is safe to run again: chunks already sent are recorded and skipped, storing a message twice is a
no-op, and ending a turn twice finds its messages done already. A reply Telegram refuses for good (the user
blocked the bot, a request it will never accept) is logged and the turn still ends; a delivery that keeps
failing goes, after the state's retries, to `FinishTurnUndelivered` (the same function with `deliver` off).
A reply that shows a new token makes it as it sends it (`states.new_token`).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from stepwise.states.contracts.finish_turn import FinishTurnInput, FinishTurnOutput
from stepwise.states.deliver import deliver_reply, put_error_reply
from stepwise.states.new_token import deliver_new_token
from stepwise.states.policy import policy_for
from stepwise.states.save_turn import save_reply
from stepwise.states.topics import open_topic, rename_topic
from stepwise.telegram.errors import TelegramBadRequest, TelegramForbidden
from stepwise.turn_records.models import NewToken, NewTopic

if TYPE_CHECKING:
    from stepwise.inbox.sequencer import Ending
    from stepwise.services import Outbound, TurnServices
    from stepwise.turn.ref import TurnRef

logger = logging.getLogger(__name__)


def finish_turn(request: FinishTurnInput, services: TurnServices) -> FinishTurnOutput:
    """Send, save, finish; see the module docstring. A turn that does not end in the chat (a background job:
    it reports, `states.job_report`) ends as its policy says."""
    turn = request.turn
    if (ended := policy_for(turn).finish(request, services)) is not None:
        return ended
    if request.error is not None:
        put_error_reply(turn, request.error, services)
    reply = services.stores.turns.get_reply(turn.turn_id)
    sent = reply.sent_chunks if reply is not None else 0
    if reply is not None and isinstance(reply.extra, NewToken):
        reply = deliver_new_token(turn, reply, services, request.deliver)
        sent = reply.sent_chunks
    elif reply is not None and request.deliver:
        if isinstance(reply.extra, NewTopic):
            reply = open_topic(turn, reply, services)
        try:
            sent = deliver_reply(turn, reply, services)
        except (TelegramForbidden, TelegramBadRequest) as error:
            logger.warning("Telegram refused the reply for good; the turn ends", extra={"error": str(error)})
    elif reply is not None:
        logger.warning("the reply could not be delivered; the turn is saved and ends", extra={"sent": sent})
    ending: Ending = "answered"
    try:
        meta = services.stores.turns.get_meta(turn.turn_id)
    except KeyError:  # LoadContext never completed: its messages may not be stored, they are queued again
        meta, ending = None, "failed"
    user_id = meta.user_id if meta is not None else turn.user_id
    if meta is not None and meta.topic_name is not None and sent and request.deliver:
        rename_topic(meta, services)
    if meta is not None and meta.voice_reply and reply is not None and request.deliver:
        # voice: only a turn with a voice note or a spoken reply
        from stepwise.states.voice_reply import speak_reply

        speak_reply(meta, reply, services)
    saved = save_reply(turn, reply, user_id, services)
    next_turn = end_turn(turn, ending, services.outbound)
    return FinishTurnOutput(
        source=reply.source if reply is not None else None, sent_chunks=sent, saved=saved, next_turn=next_turn
    )


def end_turn(turn: TurnRef, ending: Ending, outbound: Outbound) -> str | None:
    """The turn is over: its messages are done ("answered"), or queued again ("failed": a turn whose
    LoadContext never completed, a bounded number of times, so the next turn answers them); the chat is free
    and the next turn starts if any wait. Returns the next turn's name. (A turn whose execution failed is
    recovered by `states.recovery`; a turn back from its approval wait takes the chat back in RunTools.)"""
    next_turn = outbound.sequencer().end_turn(turn.conversation, turn.turn_id, ending)
    logger.info("turn finished", extra={"ending": ending, "next_turn": next_turn})
    return next_turn
