"""The offline model's answer to a photo or document, which it cannot look at."""

from __future__ import annotations

import re

# How `stepwise.media.render` shows a file the call does not carry: `[photo: caption]`, `[document a.pdf]`.
_FILE_LINE = re.compile(r"^\[(photo|document)\b")


def media_answer(text: str) -> str | None:
    """The answer to a message that is a photo or document, or None for any other message."""
    found = _FILE_LINE.match(text)
    if found is None:
        return None
    what = "images" if found.group(1) == "photo" else "documents"
    return (
        f"I can't see {what} in offline mode (no model API is configured). Tell me in words what you need, "
        "or send *help* to see what I can do offline."
    )
