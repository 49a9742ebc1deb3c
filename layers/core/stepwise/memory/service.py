"""Long-term memory for one deployment: facts and chat summaries as vectors, always scoped to one user."""

from __future__ import annotations

from typing import TYPE_CHECKING

from stepwise.aws.conversation_key import conversation_key
from stepwise.memory.keys import fact_key, summary_key
from stepwise.memory.vector_index import MetadataValue, VectorIndex, VectorMatch, VectorRecord
from stepwise.turn.ids import new_id

if TYPE_CHECKING:
    from collections.abc import Callable

    from stepwise.memory.embedder import Embedder
    from stepwise.telegram.conversation import Conversation

MAX_MEMORY_CHARS = 2000


class MemoryService:
    """Stores and finds memories. Every read filters on the user id, so users never see each other's."""

    def __init__(self, embedder: Embedder, index: VectorIndex, new_key: Callable[[], str] = new_id) -> None:
        self._embedder = embedder
        self._index = index
        self._new_key = new_key

    def remember(self, user_id: int, chat_id: int, fact: str, now: str, call_id: str | None = None) -> str:
        """Store a fact right away; returns its memory id (`fact_key(call_id)` for a tool call)."""
        key = fact_key(call_id) if call_id is not None else f"fact-{self._new_key()[:12]}"
        return self._store(key, "fact", user_id, chat_id, fact, now)

    def save_summary(self, user_id: int, conversation: Conversation, summary: str, now: str) -> str:
        """Store (or replace) the conversation's rolling summary; returns its memory id."""
        chat_id = conversation_key(conversation)  # what summaries kept before topics: the chat's id
        return self._store(summary_key(conversation), "summary", user_id, chat_id, summary, now)

    def _store(self, key: str, kind: str, user_id: int, chat_id: int, text: str, now: str) -> str:
        text = text.strip()[:MAX_MEMORY_CHARS]
        metadata: dict[str, MetadataValue] = {
            "user_id": user_id,
            "chat_id": chat_id,
            "kind": kind,
            "created_at": now,
        }
        self._index.put(
            [VectorRecord(key=key, vector=self._embedder.embed(text), text=text, metadata=metadata)]
        )
        return key

    def recall(self, user_id: int, query: str, top_k: int) -> list[VectorMatch]:
        """The user's memories nearest to the query, nearest first."""
        if top_k <= 0 or not query.strip():
            return []
        return self._index.query(self._embedder.embed(query), top_k, {"user_id": user_id})

    def get_owned(self, user_id: int, key: str) -> VectorMatch | None:
        """One memory, only if it belongs to the user."""
        matches = self._index.get([key])
        if matches and matches[0].metadata.get("user_id") == user_id:
            return matches[0]
        return None

    def forget(self, user_id: int, key: str) -> VectorMatch | None:
        """Delete one of the user's memories; returns it, or None when the user has no such memory."""
        match = self.get_owned(user_id, key)
        if match is not None:
            self._index.delete([key])
        return match
