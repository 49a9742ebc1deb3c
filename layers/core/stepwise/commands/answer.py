"""The answer to a command turn, computed without a model call (the turn's kind decides to use it)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from stepwise.commands.handlers import CommandRequest, ShownOnce, WithAppButton, WithLinks
from stepwise.commands.new_topic import OpensTopic
from stepwise.commands.table import answer
from stepwise.history.models import StoredMessage
from stepwise.turn_records.models import AppButton, LinkButton, LinkButtons, NewToken, NewTopic, WithExtra

if TYPE_CHECKING:
    from collections.abc import Callable

    from stepwise.services import TurnServices
    from stepwise.turn_records.models import TurnMeta


def command_answer(
    meta: TurnMeta, command: str, services: TurnServices
) -> Callable[[str, str], str | WithExtra]:
    """The text of the answer to the turn's `command`, given the reply's message id and time (a command such
    as /reset needs to know where its answer will be stored), with what it brings besides its text."""

    def text(message_id: str, created_at: str) -> str | WithExtra:
        reply_key = StoredMessage(
            id=message_id, chat_id=meta.chat_id, role="assistant", content="", created_at=created_at
        ).sort_key
        answered = answer(command, lambda args: CommandRequest(args, meta, services, reply_key))
        if isinstance(answered, WithLinks) and not answered.links:
            return answered.text
        return answered if isinstance(answered, str) else _with_extra(meta, answered)

    return text


def _with_extra(meta: TurnMeta, answered: ShownOnce | OpensTopic | WithAppButton | WithLinks) -> WithExtra:
    """A `ShownOnce` text is sent with its new token (made by FinishTurn from the seed the reply keeps) and
    stored as its `kept` text; an `OpensTopic` text (/new) opens its topic; a `WithAppButton` text (/app) is
    sent with the button that opens the Mini App under its last chunk; a `WithLinks` text (/accounts) with its
    url buttons there, one a row."""
    match answered:
        case WithAppButton():
            return WithExtra(answered.text, AppButton(text=answered.button, url=answered.url))
        case WithLinks():
            buttons = [LinkButton(text=label, url=url) for label, url in answered.links]
            return WithExtra(answered.text, LinkButtons(buttons=buttons))
        case ShownOnce():
            kept = answered.kept.strip()
            token = NewToken(
                user_id=meta.user_id, connection=answered.connection, kept_text=kept, seed=answered.seed
            )
            return WithExtra(answered.text, token)
        case OpensTopic():
            topic = NewTopic(name=answered.name, named=answered.named, kept_text=answered.kept.strip())
            return WithExtra(answered.text, topic)
