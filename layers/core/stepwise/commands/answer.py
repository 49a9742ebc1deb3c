"""CallModel's answer to a command turn: the table's answer becomes the turn's reply, without a model call."""

from __future__ import annotations

from typing import TYPE_CHECKING

from stepwise.commands.handlers import CommandRequest
from stepwise.commands.table import answer
from stepwise.history.models import StoredMessage
from stepwise.ids import iso_utc
from stepwise.states.contracts import CallModelOutput
from stepwise.turn_records.models import ModelStep, Reply

if TYPE_CHECKING:
    from stepwise.states.services import TurnServices
    from stepwise.turn_records.models import TurnMeta


def answer_command(meta: TurnMeta, services: TurnServices) -> CallModelOutput:
    """Answer the turn's command and make the answer its reply; SendReply sends it and SaveTurn stores it like
    any reply. A retry keeps the first attempt's answer (and its message id and time)."""
    assert meta.command is not None
    existing = services.turns.steps(meta.turn_id)
    if existing:
        step = existing[0]
    else:
        message_id, created_at = services.new_id(), iso_utc(services.clock())
        reply_key = StoredMessage(
            id=message_id, chat_id=meta.chat_id, role="assistant", content="", created_at=created_at
        ).sort_key
        text = answer(meta.command, lambda args: CommandRequest(args, meta, services, reply_key))
        step = ModelStep(
            step=0,
            content=[{"type": "text", "text": text}],
            stop_reason="end_turn",
            model="command",
            message_id=message_id,
            created_at=created_at,
        )
        services.turns.put_step(meta.turn_id, step)
    services.turns.put_reply(
        meta.turn_id,
        Reply(text=step.text, source="command", message_id=step.message_id, created_at=step.created_at),
    )
    return CallModelOutput(route="reply", stop_reason="end_turn", step=0, tool_calls=0)
