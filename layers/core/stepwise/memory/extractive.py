"""The offline rolling summary: a short bullet list of what the user said that is worth keeping and of what
was done, without a language model.

Kept: the user's statements ("my sister Anna lives in Lisbon"), each clipped to `MAX_STATEMENT_CHARS`; left
out: small talk, questions, and commands the rules model carries out, whose outcome is kept instead as one
"Done:" bullet per batch, from the results of the calls that changed something ("Added task #1: buy milk").
The previous summary's bullets come first; the newest `MAX_BULLETS` are kept, within `max_chars`.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from stepwise.offline.api import for_the_user, parse_intent, small_talk

if TYPE_CHECKING:
    from collections.abc import Sequence

    from stepwise.history.models import StoredMessage

MAX_BULLETS = 12
MAX_STATEMENT_CHARS = 160
MAX_DONE_CHARS = 300
MIN_WORDS = 3
READ_ONLY_TOOLS = frozenset({"list_tasks", "get_task", "recall", "list_reminders"})
_QUESTION = re.compile(
    r"^(?:what|who|whom|whose|which|when|where|why|how|can|could|would|will|do|does|did|is|are|am|was|were"
    r"|should|shall|may|might|have|has)\b",
    re.I,
)
_GREETING = re.compile(r"^(?:/\w+|hi|hello|hey|hallo|good (?:morning|afternoon|evening|night))\b", re.I)
OLD_PREFIX = "The user said: "  # how the first offline summaries wrote each line


def clip(text: str, limit: int) -> str:
    """`text` on one line, cut at a word boundary to at most `limit` characters (with "…" when cut)."""
    line = re.sub(r"\s+", " ", text).strip()
    if len(line) <= limit:
        return line
    cut = line[: limit - 1].rsplit(" ", 1)[0].rstrip(",;:")
    return f"{cut}…"


def is_statement(text: str) -> bool:
    """True for a message worth keeping: not small talk, a question, a command or a fired reminder."""
    line = re.sub(r"\s+", " ", text).strip()
    if len(line.split()) < MIN_WORDS or line.endswith("?") or line.startswith("(Reminder #"):
        return False
    if _QUESTION.match(line) or _GREETING.match(line) or small_talk(line) is not None:
        return False
    return parse_intent(line) is None


def as_bullet(line: str) -> str:
    """A line of a previous summary as a bullet (summaries of the older format had no bullets)."""
    line = line.strip()
    if line.startswith("- "):
        return line
    return f"- Said: {line.removeprefix(OLD_PREFIX)}" if line.startswith(OLD_PREFIX) else f"- {line}"


def done_bullet(messages: Sequence[StoredMessage]) -> str | None:
    """One "Done:" bullet for the calls in `messages` that changed something and succeeded, or None."""
    done = []
    for message in messages:
        for call in message.tool_calls:
            name = str(call.get("name", ""))
            if call.get("is_error") or name in READ_ONLY_TOOLS:
                continue
            result = str(call.get("result", "")).strip().splitlines()
            if result:
                done.append(for_the_user(result[0], name, dict(call.get("input") or {})))
    return f"- Done: {clip('; '.join(done), MAX_DONE_CHARS)}" if done else None


def extractive_summary(previous: str, messages: Sequence[StoredMessage], max_chars: int) -> str:
    """The new rolling summary: `previous`'s bullets, then this batch's statements and what was done."""
    bullets = [as_bullet(line) for line in previous.splitlines() if line.strip()]
    seen = {bullet.lower() for bullet in bullets}
    for message in messages:
        if message.role != "user" or message.forwarded is not None or not is_statement(message.content):
            continue  # a forwarded message's words are someone else's, not the user's statements
        bullet = f"- Said: {clip(message.content, MAX_STATEMENT_CHARS)}"
        if bullet.lower() not in seen:
            seen.add(bullet.lower())
            bullets.append(bullet)
    done = done_bullet(messages)
    if done:
        bullets.append(done)
    bullets = bullets[-MAX_BULLETS:]
    while len(bullets) > 1 and len("\n".join(bullets)) > max_chars:
        bullets.pop(0)
    return clip("\n".join(bullets), max_chars) if len(bullets) == 1 else "\n".join(bullets)
