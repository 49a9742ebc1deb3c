"""The port for a conversation's inbox and its lease (a chat, or one topic of it)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from stepwise.inbox.models import Enqueued, NewLease, QueuedMessage
    from stepwise.telegram.conversation import Conversation


class ChatInbox(Protocol):
    """Messages waiting per conversation, in update_id order, and the lease that lets one turn run per
    conversation.

    Implementations: DynamoDB, and in memory for tests.
    """

    def enqueue(self, message: QueuedMessage, expires_at: int) -> Enqueued:
        """Keep the message unless its update was seen before; say what was found."""
        ...

    def pending(self, conversation: Conversation) -> list[QueuedMessage]:
        """The chat's messages not yet answered (queued or taken), by update_id. Strongly consistent."""
        ...

    def take(self, message: QueuedMessage, turn_id: str, claimed_at: str) -> QueuedMessage | None:
        """Mark a queued message as taken by the turn (or find it taken by that turn already).

        Returns the message as stored, or None when another turn has it.
        """
        ...

    def finish(self, message: QueuedMessage, done_expires_at: int) -> None:
        """The message is answered: remember its update as done and drop it from the queue."""
        ...

    def give_back(self, message: QueuedMessage) -> None:
        """A failed turn returns a message it took: queued again, with its requeue count raised. It keeps its
        place in the history (claimed_at), so storing it again is a no-op."""
        ...

    def acquire_new(
        self, conversation: Conversation, update_id: int, now: int, lease_seconds: int
    ) -> NewLease | None:
        """Take the free (or expired) lease for the chat's next turn, started for the waiting message
        `update_id`; returns that turn's name (and when the previous turn started), or None when another turn
        holds it. Each success names a new turn (the chat's generation counter moves on)."""
        ...

    def reacquire(self, conversation: Conversation, holder: str, now: int, lease_seconds: int) -> bool:
        """Take the lease back for a turn that let it go (free, expired, or held by `holder` already)."""
        ...

    def release(self, conversation: Conversation, holder: str) -> bool:
        """Free the chat's lease if `holder` has it; False when it did not."""
        ...

    def holder(self, conversation: Conversation) -> tuple[str, int] | None:
        """Who holds the lease and until when (epoch seconds), or None."""
        ...
