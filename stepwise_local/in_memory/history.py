"""An in-memory MessageRepository for unit tests."""

from __future__ import annotations

from stepwise.history.models import StoredMessage


class InMemoryMessageRepository:
    """Messages in a dict keyed by (conversation key, sort key)."""

    def __init__(self) -> None:
        self.items: dict[tuple[int, str], StoredMessage] = {}

    def add(self, message: StoredMessage) -> bool:
        key = (message.conversation.key, message.sort_key)
        if key in self.items:
            return False
        self.items[key] = message
        return True

    def _chat(self, conversation: int) -> list[StoredMessage]:
        return [m for (c, _), m in sorted(self.items.items()) if c == conversation]

    def recent(self, conversation: int, limit: int) -> list[StoredMessage]:
        return self._chat(conversation)[-limit:]

    def after(self, conversation: int, key: str) -> list[StoredMessage]:
        return [m for m in self._chat(conversation) if m.sort_key > key]

    def between(self, conversation: int, first_key: str, last_key: str) -> list[StoredMessage]:
        return [m for m in self._chat(conversation) if first_key <= m.sort_key <= last_key]
