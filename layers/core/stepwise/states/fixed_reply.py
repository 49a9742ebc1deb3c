"""A turn answered without a model call (a fired reminder, a command, notices about files): its text becomes
the turn's only model step and its reply, which SendReply sends and SaveTurn stores like any reply."""

from __future__ import annotations

from typing import TYPE_CHECKING

from stepwise.ids import iso_utc
from stepwise.states.contracts import CallModelOutput
from stepwise.turn_records.models import ModelStep, Reply

if TYPE_CHECKING:
    from collections.abc import Callable

    from stepwise.states.services import TurnServices
    from stepwise.turn_records.models import ReplySource, TurnMeta


def reply_without_model(
    meta: TurnMeta, services: TurnServices, source: ReplySource, text: Callable[[str, str], str]
) -> CallModelOutput:
    """Make `text(message_id, created_at)` the turn's reply. A retry keeps the first attempt's step (its text,
    message id and time) and does not compute the text again."""
    existing = services.turns.steps(meta.turn_id)
    if existing:
        step = existing[0]
    else:
        message_id, created_at = services.new_id(), iso_utc(services.clock())
        step = ModelStep(
            step=0,
            content=[{"type": "text", "text": text(message_id, created_at)}],
            stop_reason="end_turn",
            model=source,
            message_id=message_id,
            created_at=created_at,
        )
        services.turns.put_step(meta.turn_id, step)
    services.turns.put_reply(
        meta.turn_id,
        Reply(text=step.text, source=source, message_id=step.message_id, created_at=step.created_at),
    )
    return CallModelOutput(route="reply", stop_reason="end_turn", step=0, tool_calls=0)
