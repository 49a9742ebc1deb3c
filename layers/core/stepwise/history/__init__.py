"""Conversation history: stored messages and the repository that keeps them."""

from stepwise.history.models import Role, StoredMessage
from stepwise.history.repository import MessageRepository

__all__ = ["MessageRepository", "Role", "StoredMessage"]
