"""The answer to a command turn, computed without a model call (the turn's kind decides to use it)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from stepwise.commands.handlers import CommandRequest, ShownOnce, WithAppButton
from stepwise.commands.table import answer
from stepwise.history.models import StoredMessage

if TYPE_CHECKING:
    from collections.abc import Callable

    from stepwise.commands.new_topic import OpensTopic
    from stepwise.services import TurnServices
    from stepwise.turn_records.models import TurnMeta


def command_answer(
    meta: TurnMeta, command: str, services: TurnServices
) -> Callable[[str, str], str | ShownOnce | OpensTopic | WithAppButton]:
    """The text of the answer to the turn's `command`, given the reply's message id and time (a command such
    as /reset needs to know where its answer will be stored)."""

    def text(message_id: str, created_at: str) -> str | ShownOnce | OpensTopic | WithAppButton:
        reply_key = StoredMessage(
            id=message_id, chat_id=meta.chat_id, role="assistant", content="", created_at=created_at
        ).sort_key
        return answer(command, lambda args: CommandRequest(args, meta, services, reply_key))

    return text
