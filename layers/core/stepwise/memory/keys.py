"""Memory ids: pure functions, importable without the memory service or its vector index."""

from __future__ import annotations

import base64
import hashlib

from stepwise.aws.conversation_key import conversation_key
from stepwise.telegram.conversation import Conversation


def fact_key(call_id: str) -> str:
    """The memory id of the fact a tool call remembers: derived from the call, so a retry replaces it."""
    digest = base64.urlsafe_b64encode(hashlib.sha256(call_id.encode()).digest()).decode()
    return f"fact-{digest[:12]}"


def summary_key(conversation: Conversation) -> str:
    """The one summary vector of a conversation (each summarizer run replaces it with the newer rolling
    summary), named by its key in the tables, as summaries were before topics."""
    return f"summary-{conversation_key(conversation)}"
