"""The port for storing and reading messages."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from stepwise.history.models import StoredMessage
    from stepwise.telegram.conversation import Conversation


class MessageRepository(Protocol):
    """Where messages live. Implementations: DynamoDB, and in memory for tests."""

    def add(self, message: StoredMessage) -> bool:
        """Store the message unless one with the same key exists; True when it was written."""
        ...

    def replace(self, message: StoredMessage) -> bool:
        """Overwrite the stored message with the same key (an edit); False when there is none."""
        ...

    def remove(self, message: StoredMessage) -> None:
        """Forget the stored message with the same key (a deletion); no error when there is none."""
        ...

    def recent(self, conversation: Conversation, limit: int) -> list[StoredMessage]:
        """The newest `limit` messages of the conversation, oldest first."""
        ...

    def after(self, conversation: Conversation, key: str) -> list[StoredMessage]:
        """The messages whose sort keys are greater than `key` ("" for all), oldest first."""
        ...

    def between(self, conversation: Conversation, first_key: str, last_key: str) -> list[StoredMessage]:
        """The messages whose sort keys lie in [first_key, last_key], oldest first."""
        ...
