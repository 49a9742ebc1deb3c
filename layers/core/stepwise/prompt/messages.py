"""The message list: the stored history window, then this turn's tool rounds."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from stepwise.history.models import StoredMessage
from stepwise.turns.models import ModelStep


def build_messages(history: Sequence[StoredMessage], steps: Sequence[ModelStep]) -> list[dict[str, Any]]:
    """Alternating user/assistant messages for the Messages API.

    Consecutive messages of one role (a turn whose model call failed leaves a lone user message) are merged
    into one message with several text blocks; leading assistant messages are dropped, since the list must
    start with the user. Each completed tool round adds the assistant's tool_use and the user's tool_result.
    """
    messages: list[dict[str, Any]] = []
    for stored in history:
        if not stored.content.strip():
            continue
        if not messages and stored.role == "assistant":
            continue
        block = {"type": "text", "text": stored.content}
        if messages and messages[-1]["role"] == stored.role:
            messages[-1]["content"].append(block)
        else:
            messages.append({"role": stored.role, "content": [block]})
    for step in steps:
        if not step.tool_results:
            continue
        messages.append({"role": "assistant", "content": step.content})
        messages.append({"role": "user", "content": step.tool_results})
    return messages
