"""The notices of a turn: what the user is told about files the model does not get."""

from __future__ import annotations

from typing import TYPE_CHECKING, TypedDict

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from stepwise.inbox.models import QueuedMessage


class MediaNotices(TypedDict):
    """TurnMeta's fields of that name."""

    notices: list[str]
    notices_only: bool


def media_notices(batch: Sequence[QueuedMessage], unheard: Mapping[str, str] | None = None) -> MediaNotices:
    """TurnMeta's `notices` (one per refused file, and per voice note that could not be heard: `unheard`
    maps its message id to the notice; in order) and `notices_only` (every message is such a file: the turn
    answers with the notices and calls no model)."""
    refused: list[str] = []
    for message in batch:
        if message.attachment is not None and message.attachment.refusal:
            refused.append(message.attachment.refusal)
        elif unheard and message.id in unheard:
            refused.append(unheard[message.id])
    return {"notices": refused, "notices_only": bool(batch) and len(refused) == len(batch)}


def with_notices(notices: Sequence[str], text: str, footnotes: Sequence[str] = ()) -> str:
    """A reply with the turn's notices before it and its footnotes after it."""
    return "\n\n".join([*notices, text, *footnotes])
