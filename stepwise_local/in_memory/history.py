"""An in-memory MessageRepository for unit tests."""

from __future__ import annotations

from stepwise.history.models import StoredMessage
from stepwise.telegram.conversation import Conversation


class InMemoryMessageRepository:
    """Messages in a dict keyed by (conversation, sort key)."""

    def __init__(self) -> None:
        self.items: dict[tuple[Conversation, str], StoredMessage] = {}

    def add(self, message: StoredMessage) -> bool:
        key = (message.conversation, message.sort_key)
        if key in self.items:
            return False
        self.items[key] = message
        return True

    def replace(self, message: StoredMessage) -> bool:
        key = (message.conversation, message.sort_key)
        if key not in self.items:
            return False
        self.items[key] = message
        return True

    def remove(self, message: StoredMessage) -> None:
        self.items.pop((message.conversation, message.sort_key), None)

    def _chat(self, conversation: Conversation) -> list[StoredMessage]:
        return [
            m for (c, _), m in sorted(self.items.items(), key=lambda item: item[0][1]) if c == conversation
        ]

    def recent(self, conversation: Conversation, limit: int) -> list[StoredMessage]:
        return self._chat(conversation)[-limit:]

    def after(self, conversation: Conversation, key: str) -> list[StoredMessage]:
        return [m for m in self._chat(conversation) if m.sort_key > key]

    def between(self, conversation: Conversation, first_key: str, last_key: str) -> list[StoredMessage]:
        return [m for m in self._chat(conversation) if first_key <= m.sort_key <= last_key]
