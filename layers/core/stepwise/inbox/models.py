"""A message waiting in a chat's inbox, and what enqueueing it found."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

QueueStatus = Literal["queued", "taken"]
# new: first delivery; queued / taken: a retried delivery of a message still waiting / being answered;
# done: a retried delivery of a message already answered.
Admission = Literal["new", "queued", "taken", "done"]


class QueuedMessage(BaseModel):
    """A user's text message as the webhook received it, until a turn has answered it."""

    model_config = ConfigDict(defer_build=True)

    chat_id: int
    update_id: int = Field(ge=0)
    user_id: int
    id: str = Field(min_length=1, description="the stored message's id (nanoid), fixed at receipt")
    text: str
    received_at: str = Field(description="ISO 8601 UTC, when the webhook received it")
    telegram_message_id: int | None = None
    status: QueueStatus = "queued"
    turn_id: str | None = Field(default=None, description="the turn answering it, once taken")
    claimed_at: str | None = Field(default=None, description="its place in the history, fixed when taken")
    requeues: int = Field(default=0, ge=0, description="how often a failed turn gave it back")


def turn_name(chat_id: int, generation: int, update_id: int) -> str:
    """The execution name of the chat's n-th turn, started for the waiting message `update_id`: unique (a
    retried start never starts it twice) and at most 58 characters for Telegram's largest ids."""
    return f"chat{chat_id}-turn{generation}-update{update_id}"
