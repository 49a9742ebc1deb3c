"""The chat record (one per conversation: a chat, or one topic of it) and the port that keeps it.

A chat is "due" for summarizing once it has at least `due_at` messages that are not summarized yet
(the recent window plus the threshold). Due chats carry a `summary_due` attribute, which a sparse index
lists: the summarizer visits exactly those, without scanning the table.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from pydantic import BaseModel, ConfigDict

from stepwise.telegram.conversation import Conversation

if TYPE_CHECKING:
    from collections.abc import Iterator


class ChatRecord(BaseModel):
    """What the summarizer knows about a chat."""

    model_config = ConfigDict(defer_build=True)

    conversation: Conversation  # the conversation this record is about (stored as its key, in `chat_id`)
    user_id: int
    message_count: int = 0
    summarized_count: int = 0
    summarized_key: str = ""  # sort key of the newest summarized message ("" before the first summary)
    summary: str = ""  # the rolling summary of everything up to summarized_key
    summary_updated_at: str | None = None
    due: bool = False
    summary_failures: int = (
        0  # summarizer runs in a row that failed on this chat (0 once the watermark moves)
    )
    window_key: str = ""  # sort key where the model's history window starts ("" for the chat's beginning)
    last_user_at: str = ""  # when the user last wrote (ISO 8601 UTC; check-ins pause when it is long ago)
    # the estimated tokens of the prompt's tools and system prompt at the chat's last model call (0: none
    # yet); LoadContext adds the history window to it to decide whether prompt caching can pay
    stable_prefix_tokens: int = 0
    voice_replies: bool = False  # /voice on: answers to voice notes also come spoken (docs/voice.md)
    # a topic Telegram named (forum_topic_created.is_name_implicit), or /new without a title: its first
    # answer gives it a name (docs/topics.md)
    topic_unnamed: bool = False
    title: str = ""  # a group's title, as its newest message gave it (the Mini App names the group with it)

    @property
    def unsummarized(self) -> int:
        return self.message_count - self.summarized_count


class ChatStore(Protocol):
    """Chat records. Implementations: DynamoDB, and in memory for tests."""

    def record_message(
        self,
        conversation: Conversation,
        user_id: int,
        due_at: int,
        written_at: str | None = None,
        title: str | None = None,
    ) -> ChatRecord:
        """Count one stored message; mark the chat due once `due_at` messages are unsummarized. `written_at`
        is given for a message the user wrote (it becomes `last_user_at`); `title` for a group's message (the
        group's title, kept as the chat's)."""
        ...

    def get(self, conversation: Conversation) -> ChatRecord | None:
        """A chat's record, or None before its first message was counted."""
        ...

    def set_window(self, conversation: Conversation, window_key: str) -> None:
        """Remember where the chat's history window starts (it moves in blocks, see LoadContext)."""
        ...

    def set_stable_prefix_tokens(self, conversation: Conversation, tokens: int) -> None:
        """Remember the estimated tokens of the chat's tools and system prompt (`stepwise.prompt.caching`)."""
        ...

    def set_voice_replies(self, conversation: Conversation, on: bool) -> None:
        """Remember whether answers to voice notes also come as voice messages (/voice on|off)."""
        ...

    def set_topic_unnamed(self, conversation: Conversation, unnamed: bool) -> None:
        """Remember whether the topic waits for a name (Telegram named it, or /new had no title)."""
        ...

    def claim_topic_rename(self, conversation: Conversation) -> bool:
        """Take the topic's renaming once: True only for the call that turned `topic_unnamed` off."""
        ...

    def due_chats(self) -> Iterator[Conversation]:
        """The conversations marked due (from the sparse index)."""
        ...

    def all_chats(self) -> Iterator[Conversation]:
        """Every conversation (a scan: for the local forced run only)."""
        ...

    def record_summary_failure(self, conversation: Conversation, give_up_after: int) -> int:
        """Count one failed summarizer run; returns the failures in a row. At `give_up_after` the chat is no
        longer due (its next counted message marks it due again)."""
        ...

    def advance(
        self,
        chat: ChatRecord,
        *,
        summarized_key: str,
        summarized: int,
        summary: str,
        now: str,
        still_due: bool,
    ) -> bool:
        """Move the watermark past `summarized` more messages and store the new rolling summary (the
        failure count starts again).

        Conditional on the watermark being where `chat` saw it: False when another run moved it first.
        """
        ...
