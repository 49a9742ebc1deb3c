"""A stored chat message."""

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from stepwise.history.forwarded import Forwarded
from stepwise.media.models import Attachment, Heard
from stepwise.telegram.conversation import Conversation

Role = Literal["user", "assistant"]


class StoredMessage(BaseModel):
    """One message of a chat, as kept in the messages table."""

    model_config = ConfigDict(defer_build=True)

    id: str
    chat_id: int
    topic: int | None = None  # the topic's message_thread_id; None: the chat itself
    account: int | None = None  # the owner whose business account the chat is in; None: a chat with the bot
    role: Role
    content: str
    created_at: str  # ISO 8601 UTC
    turn_id: str | None = None
    update_id: int | None = None
    tool_calls: list[dict[str, Any]] = []
    attachment: Attachment | None = None  # a user's photo or document (no bytes)
    heard: Heard | None = None  # a voice note's transcript (content holds its words)
    forwarded: Forwarded | None = None  # a forwarded message's origin (the model reads it as someone else's)
    sender: str | None = None  # in a group: the member's first name, shown to the model before the message

    @property
    def conversation(self) -> Conversation:
        """The conversation whose history keeps it."""
        return Conversation(self.chat_id, self.topic, self.account)

    @property
    def sort_key(self) -> str:
        """Chronological, unique within the chat."""
        return f"{self.created_at}#{self.id}"
