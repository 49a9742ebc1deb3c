"""CallModel's part in photos and documents: the files of the call, and the turn that only has notices."""

from __future__ import annotations

from typing import TYPE_CHECKING

from stepwise.media.fetch import fetch_files
from stepwise.states.fixed_reply import reply_without_model

if TYPE_CHECKING:
    from collections.abc import Sequence

    from stepwise.history.models import StoredMessage
    from stepwise.states.contracts import CallModelOutput
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
    return reply_without_model(meta, services, "notice", lambda *_: "\n\n".join(meta.notices))
