"""The offline model's answer to a question that needs the web ("search for…", "what's the weather…", a link):
it cannot search or open pages, and says so plainly rather than guessing."""

from __future__ import annotations

import re

WEB_QUESTION = re.compile(
    r"\b(?:search(?:\s+(?:the\s+)?(?:web|internet|online))?\s+for|search\s+(?:the\s+)?(?:web|internet|online)"
    r"|google|look\s+(?:it\s+)?up|look\s+up|browse|weather|forecast|news|headlines|latest|stock\s+price"
    r"|exchange\s+rate|score\s+of|who\s+won)\b|https?://",
    re.IGNORECASE,
)
CANNOT_SEARCH = (
    "I can't search the web or open web pages right now: I'm running on simple offline rules, without my "
    "language model, so I can't look that up. Ask me again when Claude is back; meanwhile I can still manage "
    "your tasks and reminders."
)


def web_answer(text: str) -> str | None:
    """The answer to a message that asks for something on the web, or None for any other message."""
    return CANNOT_SEARCH if WEB_QUESTION.search(text) else None
