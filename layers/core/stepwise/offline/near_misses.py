"""Near-miss commands: "ad buy bred", "lst", "remnd me at 5pm to call mom". The offline model asks "Did you
mean “add buy bred”?" with the command it would run, rather than saying it did not understand.

A near miss is a first word one typing slip away from a command word (a letter missing, added, changed, or
two swapped; two slips for the long words), or "remind" followed by a slip of "me", where the corrected text
is a command the rules understand. Common words that are one slip from a command ("had", "and", "one", "dad")
are words, not slips. The rules never act on a guess: the user sends the command again.

Text that is no near miss either gets the few commands closest to it (`closest_commands`), by how alike the
two read (difflib's ratio), one per command.
"""

from __future__ import annotations

import re
from difflib import SequenceMatcher
from typing import TYPE_CHECKING, Any

from stepwise.offline.decorations import undecorated

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from stepwise.offline.calls import ToolCall

COMMAND_WORDS = (
    "add",
    "list",
    "tasks",
    "todo",
    "done",
    "complete",
    "delete",
    "remove",
    "show",
    "rename",
    "remind",
    "remember",
    "recall",
    "forget",
    "reminders",
    "cancel",
    "snooze",
    "help",
)
# Words of their own, one slip from a command word: never read as a slip.
WORDS = frozenset(
    {
        *("had", "and", "dad", "bad", "mad", "sad", "odd", "aid", "ads", "at", "as", "an", "do", "gone"),
        *("none", "one", "bone", "tone", "lone", "dine", "dome", "dove", "node", "lost", "last", "lust"),
        *("mist", "fist", "how", "now", "snow", "slow", "shoe", "shot", "shop", "ask", "mask", "tanks"),
        *("held", "hell", "heap", "cancer", "rewind", "forge", "renew"),
    }
)
MAX_LENGTH = 300


def corrected(
    text: str, understood: Callable[[str], list[ToolCall] | None]
) -> tuple[str, ToolCall | None] | None:
    """(the command `text` nearly is, its first tool call) when `text` is a near miss that `understood`
    turns into calls ("help" has none), else None."""
    text = undecorated(text).strip()
    if not text or len(text) > MAX_LENGTH:
        return None
    words = text.split(" ")
    first = words[0].lower()
    fixed = _nearest(first)
    if fixed is not None:
        words[0] = fixed
    if (
        len(words) > 1
        and (fixed or first) == "remind"
        and words[1].lower() != "me"
        and _slips(words[1].lower(), "me")
    ):
        words[1], fixed = "me", fixed or first
    if fixed is None:
        return None
    command = " ".join(words)
    if command == "help":
        return command, None
    calls = understood(command)
    return (command, calls[0]) if calls else None


def _nearest(word: str) -> str | None:
    if word in COMMAND_WORDS or word in WORDS or not re.fullmatch(r"[a-z]{2,12}", word):
        return None
    near = [command for command in COMMAND_WORDS if _slips(word, command)]
    return min(near, key=lambda command: _distance(word, command)) if near else None


def _slips(word: str, command: str) -> bool:
    allowed = 2 if len(command) >= 7 and len(word) >= 6 else 1
    return abs(len(word) - len(command)) <= allowed and _distance(word, command) <= allowed


def _distance(a: str, b: str) -> int:
    """Edits between `a` and `b`: a letter inserted, deleted or changed, or two neighbours swapped."""
    rows = [list(range(len(b) + 1))]
    for i in range(1, len(a) + 1):
        row = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            row[j] = min(rows[-1][j] + 1, row[j - 1] + 1, rows[-1][j - 1] + (a[i - 1] != b[j - 1]))
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                row[j] = min(row[j], rows[-2][j - 2] + 1)
        rows.append(row)
    return rows[-1][-1]


_WHAT: dict[str, Callable[[dict[str, Any]], str]] = {
    "add_task": lambda a: f"add the task “{a.get('title', '')}”",
    "list_tasks": lambda a: "list your tasks",
    "get_task": lambda a: f"show task #{a.get('task_id')}",
    "update_task": lambda a: f"rename task #{a.get('task_id')}",
    "complete_task": lambda a: f"complete task #{a.get('task_id')}",
    "delete_task": lambda a: f"delete task #{a.get('task_id')} (after you approve)",
    "set_reminder": lambda a: f"set a reminder: “{a.get('text', '')}”",
    "list_reminders": lambda a: "list your reminders",
    "cancel_reminder": lambda a: f"cancel reminder #{a.get('reminder_id')}",
    "remember": lambda a: f"remember “{a.get('fact', '')}”",
    "recall": lambda a: "look through your memories",
}


def did_you_mean(command: str, call: ToolCall | None) -> str:
    """The answer to a near miss: the command, and what it would do."""
    what = _WHAT.get(call[0]) if call else None
    if call and what:
        does = what(call[1])
    else:
        does = "show the commands I know offline" if command == "help" else "do it"
    return f"Did you mean “{command}”? Send that and I'll {does}."


OFFERED = 3  # the commands offered to text the rules do not understand
_ASIDE = re.compile(r"\s*\([^)]*\)")


def closest_commands(text: str, examples: Sequence[str], count: int = OFFERED) -> list[str]:
    """The `count` examples (`*command* words`) that read most like `text`, one per command word, best
    first, each without its aside in brackets; ties keep the examples' order."""
    said = " ".join(undecorated(text).lower().split())[:MAX_LENGTH]
    ranked: dict[str, tuple[float, str]] = {}
    for example in examples:
        short = _ASIDE.sub("", example)
        command = short.split("*")[1].split()[0] if short.count("*") >= 2 else short
        score = SequenceMatcher(None, said, short.replace("*", "").lower()).ratio()
        if command not in ranked or score > ranked[command][0]:
            ranked[command] = (score, short)
    best = sorted(ranked.values(), key=lambda ranked_example: -ranked_example[0])
    return [short for _, short in best[:count]]
