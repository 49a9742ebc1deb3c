"""An in-memory ChatInbox for unit tests (same semantics as the DynamoDB adapter)."""

from __future__ import annotations

import threading

from stepwise.inbox.models import Enqueued, NewLease, QueuedMessage, turn_name
from stepwise.telegram.conversation import Conversation


class InMemoryChatInbox:
    """Queues, done markers and leases in dicts (thread-safe, like DynamoDB's conditional writes)."""

    def __init__(self) -> None:
        self.queued: dict[tuple[Conversation, int], QueuedMessage] = {}
        self.done: set[tuple[Conversation, int]] = set()
        self.leases: dict[Conversation, tuple[str, int]] = {}
        self.generations: dict[Conversation, int] = {}
        self.started_at: dict[Conversation, int] = {}  # when each chat's latest turn started (epoch seconds)
        self.taken_by: dict[
            tuple[Conversation, int], str
        ] = {}  # (conversation, update_id) -> the turn that took it
        self._lock = threading.Lock()

    def enqueue(self, message: QueuedMessage, expires_at: int) -> Enqueued:
        key = (message.conversation, message.update_id)
        with self._lock:
            if key in self.done:
                return "done"
            if key in self.queued:
                return self.queued[key].status
            self.queued[key] = message.model_copy()
            return "new"

    def pending(self, conversation: Conversation) -> list[QueuedMessage]:
        with self._lock:
            found = [m.model_copy() for (chat, _), m in self.queued.items() if chat == conversation]
        return sorted(found, key=lambda m: m.update_id)

    def take(self, message: QueuedMessage, turn_id: str, claimed_at: str) -> QueuedMessage | None:
        with self._lock:
            stored = self.queued.get((message.conversation, message.update_id))
            if stored is None or not (stored.status == "queued" or stored.turn_id == turn_id):
                return None
            stored.status, stored.turn_id = "taken", turn_id
            self.taken_by[(message.conversation, message.update_id)] = turn_id
            stored.claimed_at = stored.claimed_at or claimed_at
            return stored.model_copy()

    def finish(self, message: QueuedMessage, done_expires_at: int) -> None:
        with self._lock:
            self.done.add((message.conversation, message.update_id))
            self.queued.pop((message.conversation, message.update_id), None)

    def give_back(self, message: QueuedMessage) -> None:
        with self._lock:
            stored = self.queued.get((message.conversation, message.update_id))
            if stored is None or stored.turn_id != message.turn_id:
                return
            stored.status, stored.turn_id = "queued", None
            stored.requeues = message.requeues + 1

    def acquire_new(
        self, conversation: Conversation, update_id: int, now: int, lease_seconds: int
    ) -> NewLease | None:
        with self._lock:
            current = self.leases.get(conversation)
            if current is not None and current[1] >= now:
                return None
            self.generations[conversation] = self.generations.get(conversation, 0) + 1
            name = turn_name(conversation, self.generations[conversation], update_id)
            self.leases[conversation] = (name, now + lease_seconds)
            previous, self.started_at[conversation] = self.started_at.get(conversation), now
            return NewLease(name, previous)

    def reacquire(self, conversation: Conversation, holder: str, now: int, lease_seconds: int) -> bool:
        with self._lock:
            current = self.leases.get(conversation)
            if current is not None and current[0] != holder and current[1] >= now:
                return False
            self.leases[conversation] = (holder, now + lease_seconds)
            return True

    def release(self, conversation: Conversation, holder: str) -> bool:
        with self._lock:
            current = self.leases.get(conversation)
            if current is None or current[0] != holder:
                return False
            del self.leases[conversation]
            return True

    def holder(self, conversation: Conversation) -> tuple[str, int] | None:
        with self._lock:
            return self.leases.get(conversation)
