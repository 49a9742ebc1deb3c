"""An in-memory ChatStore for unit tests."""

from __future__ import annotations

from collections.abc import Iterator

from stepwise.chats.store import ChatRecord
from stepwise.telegram.conversation import Conversation


class InMemoryChatStore:
    """Chat records in a dict."""

    def __init__(self) -> None:
        self.chats: dict[Conversation, ChatRecord] = {}

    def record_message(
        self,
        conversation: Conversation,
        user_id: int,
        due_at: int,
        written_at: str | None = None,
        title: str | None = None,
    ) -> ChatRecord:
        chat = self.chats.setdefault(conversation, ChatRecord(conversation=conversation, user_id=user_id))
        chat.user_id = user_id
        if written_at is not None:
            chat.last_user_at = written_at
        if title:
            chat.title = title
        chat.message_count += 1
        chat.due = chat.due or chat.unsummarized >= due_at
        return chat.model_copy()

    def get(self, conversation: Conversation) -> ChatRecord | None:
        chat = self.chats.get(conversation)
        return chat.model_copy() if chat else None

    def set_window(self, conversation: Conversation, window_key: str) -> None:
        chat = self.chats.setdefault(conversation, ChatRecord(conversation=conversation, user_id=0))
        chat.window_key = window_key

    def set_stable_prefix_tokens(self, conversation: Conversation, tokens: int) -> None:
        chat = self.chats.setdefault(conversation, ChatRecord(conversation=conversation, user_id=0))
        chat.stable_prefix_tokens = tokens

    def set_voice_replies(self, conversation: Conversation, on: bool) -> None:
        chat = self.chats.setdefault(conversation, ChatRecord(conversation=conversation, user_id=0))
        chat.voice_replies = on

    def set_topic_unnamed(self, conversation: Conversation, unnamed: bool) -> None:
        chat = self.chats.setdefault(conversation, ChatRecord(conversation=conversation, user_id=0))
        chat.topic_unnamed = unnamed

    def claim_topic_rename(self, conversation: Conversation) -> bool:
        chat = self.chats.get(conversation)
        if chat is None or not chat.topic_unnamed:
            return False
        chat.topic_unnamed = False
        return True

    def due_chats(self) -> Iterator[Conversation]:
        return iter([c.conversation for c in self.chats.values() if c.due])

    def all_chats(self) -> Iterator[Conversation]:
        return iter(list(self.chats))

    def record_summary_failure(self, conversation: Conversation, give_up_after: int) -> int:
        chat = self.chats.get(conversation)
        if chat is None:
            return 0
        chat.summary_failures += 1
        if chat.summary_failures >= give_up_after:
            chat.due = False
        return chat.summary_failures

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
        stored = self.chats.get(chat.conversation)
        if stored is None or stored.summarized_key != chat.summarized_key:
            return False
        stored.summarized_key, stored.summary, stored.summary_updated_at = summarized_key, summary, now
        stored.summarized_count += summarized
        stored.due, stored.summary_failures = still_due, 0
        return True
