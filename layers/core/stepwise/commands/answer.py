"""CallModel's answer to a command turn: the table's answer becomes the turn's reply, without a model call."""

from __future__ import annotations

from typing import TYPE_CHECKING

from stepwise.commands.handlers import CommandRequest
from stepwise.commands.table import answer
from stepwise.history.models import StoredMessage
from stepwise.states.fixed_reply import reply_without_model

if TYPE_CHECKING:
    from stepwise.states.contracts import CallModelOutput
    from stepwise.states.services import TurnServices
    from stepwise.turn_records.models import TurnMeta


def answer_command(meta: TurnMeta, services: TurnServices) -> CallModelOutput:
    """Answer the turn's command and make the answer its reply; SendReply sends it and SaveTurn stores it like
    any reply. A retry keeps the first attempt's answer (and its message id and time)."""
    command = meta.command
    assert command is not None

    def text(message_id: str, created_at: str) -> str:
        reply_key = StoredMessage(
            id=message_id, chat_id=meta.chat_id, role="assistant", content="", created_at=created_at
        ).sort_key
        return answer(command, lambda args: CommandRequest(args, meta, services, reply_key))

    return reply_without_model(meta, services, "command", text)
