"""The notices of a turn: what the user is told about files the model does not get."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Sequence

    from stepwise.inbox.models import QueuedMessage


def media_notices(batch: Sequence[QueuedMessage]) -> dict[str, Any]:
    """TurnMeta's `notices` (one per refused file, in order) and `notices_only` (every message is a refused
    file: the turn answers with the notices and calls no model)."""
    refused = [m.attachment.refusal for m in batch if m.attachment is not None and m.attachment.refusal]
    return {"notices": refused, "notices_only": bool(batch) and len(refused) == len(batch)}


def with_notices(notices: Sequence[str], text: str) -> str:
    """A reply with the turn's notices before it."""
    return "\n\n".join([*notices, text]) if notices else text
