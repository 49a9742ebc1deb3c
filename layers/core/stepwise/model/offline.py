"""The offline model: a small rule-based stand-in used when no Messages API is configured.

It answers greetings, help and the time itself, and says plainly that it is offline otherwise.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import datetime
from typing import Any

from stepwise.ids import utc_now
from stepwise.model.types import ModelRequest, ModelResponse

OFFLINE_MODEL_NAME = "stepwise-offline"

GREETING = re.compile(r"^\s*(/start|hi|hello|hey|hallo|good (morning|afternoon|evening))\b", re.IGNORECASE)
HELP = re.compile(r"^\s*(/help|help|what can you do)\b", re.IGNORECASE)
TIME = re.compile(
    r"\b(what time|what's the time|what is the time|what day|what's the date|today's date)\b", re.IGNORECASE
)


class OfflineModel:
    """ChatModel that needs no network: it reads the newest user text and answers by rules."""

    def __init__(self, clock: Callable[[], datetime] = utc_now) -> None:
        self._clock = clock

    def complete(self, request: ModelRequest) -> ModelResponse:
        text = last_user_text(request.messages)
        return ModelResponse(
            content=[{"type": "text", "text": self.answer(text)}],
            stop_reason="end_turn",
            model=OFFLINE_MODEL_NAME,
        )

    def answer(self, text: str) -> str:
        """The rule-based answer to one message."""
        if GREETING.search(text):
            return (
                "Hello! I'm Stepwise, running in offline mode (no model API is configured), "
                "so I can only follow simple commands. Send *help* to see them."
            )
        if HELP.search(text):
            return (
                "I'm in offline mode: set `ANTHROPIC_API_KEY` to talk to Claude. "
                "Offline I can tell you the date and time."
            )
        if TIME.search(text):
            return f"It is {self._clock().isoformat(timespec='seconds')} (UTC)."
        return (
            "I'm in offline mode (no model API is configured), so I didn't understand that. "
            "Send *help* to see what I can do offline."
        )


def last_user_text(messages: list[dict[str, Any]]) -> str:
    """The text of the newest user message (its last text block)."""
    for message in reversed(messages):
        if message.get("role") != "user":
            continue
        content = message.get("content")
        if isinstance(content, str):
            return content
        texts = [block.get("text", "") for block in content or [] if block.get("type") == "text"]
        if texts:
            return str(texts[-1])
    return ""
