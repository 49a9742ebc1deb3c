"""An in-memory MessageRepository for unit tests."""

from __future__ import annotations

from stepwise.history.models import StoredMessage


class InMemoryMessageRepository:
    """Messages in a dict keyed by (chat_id, sort key)."""

    def __init__(self) -> None:
        self.items: dict[tuple[int, str], StoredMessage] = {}

    def add(self, message: StoredMessage) -> bool:
        key = (message.chat_id, message.sort_key)
        if key in self.items:
            return False
        self.items[key] = message
        return True

    def _chat(self, chat_id: int) -> list[StoredMessage]:
        return [m for (c, _), m in sorted(self.items.items()) if c == chat_id]

    def recent(self, chat_id: int, limit: int) -> list[StoredMessage]:
        return self._chat(chat_id)[-limit:]

    def after(self, chat_id: int, key: str) -> list[StoredMessage]:
        return [m for m in self._chat(chat_id) if m.sort_key > key]

    def between(self, chat_id: int, first_key: str, last_key: str) -> list[StoredMessage]:
        return [m for m in self._chat(chat_id) if first_key <= m.sort_key <= last_key]
