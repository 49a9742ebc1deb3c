"""CallModel's part in photos and documents: the files of the call, and the turn that only has notices."""

from __future__ import annotations

from typing import TYPE_CHECKING

from stepwise.ids import iso_utc
from stepwise.media.fetch import fetch_files
from stepwise.states.contracts import CallModelOutput
from stepwise.turn_records.models import ModelStep, Reply

if TYPE_CHECKING:
    from collections.abc import Sequence

    from stepwise.history.models import StoredMessage
    from stepwise.states.services import TurnServices
    from stepwise.turn_records.models import TurnMeta


def turn_files(
    history: Sequence[StoredMessage], services: TurnServices, offline: bool
) -> dict[str, bytes | None]:
    """The bytes of the files this call shows the model; none for the offline rules model (which cannot
    look at them) or where no file source is configured."""
    if offline or services.files is None:
        return {}
    return fetch_files(history, services.files(), services.media_limits)


def deliver_notices(meta: TurnMeta, services: TurnServices) -> CallModelOutput:
    """A turn whose every message is a file the model does not get (a voice note, a document too large) is
    answered with the notices, without a model call."""
    text = "\n\n".join(meta.notices)
    existing = services.turns.steps(meta.turn_id)
    step = (
        existing[0]
        if existing
        else ModelStep(  # a retry keeps the first attempt's id and time
            step=0,
            content=[{"type": "text", "text": text}],
            stop_reason="end_turn",
            model="notice",
            message_id=services.new_id(),
            created_at=iso_utc(services.clock()),
        )
    )
    if not existing:
        services.turns.put_step(meta.turn_id, step)
    services.turns.put_reply(
        meta.turn_id,
        Reply(text=text, source="notice", message_id=step.message_id, created_at=step.created_at),
    )
    return CallModelOutput(route="reply", stop_reason="end_turn", step=0, tool_calls=0)
