"""The short task commands of the offline model: "add buy milk", "list", "show task 2", "rename 2 to …",
"done 3", "delete 3", "remember that …", "recall", "forget fact-…".

`short_task_intent` returns the tool calls the real model would make for one, or None; everyday phrasings
("could you put eggs on the list") are `stepwise.offline.task_phrases`.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from stepwise.offline.calls import MAX_IDS
from stepwise.offline.task_phrases import clean

if TYPE_CHECKING:
    from collections.abc import Callable

    from stepwise.offline.calls import ToolCall

# A task number: longer digit runs are no task command at all (Python refuses to turn more than 4300 digits
# into an int, and no list has such a task); shorter out-of-range ones reach the tools, which say so.
_NUMBER = r"\d{1,100}"
_IDS = rf"#?({_NUMBER}(?:\s*(?:,|and|&)\s*#?{_NUMBER}){{0,{MAX_IDS - 1}}})"
_STATUS_WORDS = {
    "pending": "pending",
    "open": "pending",
    "todo": "pending",
    "to do": "pending",
    "done": "completed",
    "completed": "completed",
    "finished": "completed",
    "all": "all",
}


def _ids(text: str) -> list[int]:
    return [int(n) for n in re.findall(r"\d+", text)]


def _add(match: re.Match[str]) -> list[ToolCall]:
    title = match.group("title").strip().rstrip(".!")
    return [("add_task", {"title": title})] if title else []


def _list(match: re.Match[str]) -> list[ToolCall]:
    word = (match.groupdict().get("status") or "all").lower()
    return [("list_tasks", {"status": _STATUS_WORDS.get(word, "all")})]


def _get(match: re.Match[str]) -> list[ToolCall]:
    return [("get_task", {"task_id": int(match.group("id"))})]


def _rename(match: re.Match[str]) -> list[ToolCall]:
    title = match.group("title").strip().strip("\"'“”").rstrip(".!")
    return [("update_task", {"task_id": int(match.group("id")), "title": title})] if title else []


def _complete(match: re.Match[str]) -> list[ToolCall]:
    return [("complete_task", {"task_id": n}) for n in _ids(match.group("ids"))]


def _delete(match: re.Match[str]) -> list[ToolCall]:
    return [("delete_task", {"task_id": n}) for n in _ids(match.group("ids"))]


def _remember(match: re.Match[str]) -> list[ToolCall]:
    fact = match.group("fact").strip().rstrip(".!")
    return [("remember", {"fact": fact[0].upper() + fact[1:]})] if fact else []


def _recall(match: re.Match[str]) -> list[ToolCall]:
    query = (match.groupdict().get("query") or "").strip() or "the user"
    return [("recall", {"query": query})]


def _forget(match: re.Match[str]) -> list[ToolCall]:
    return [("forget", {"memory_id": match.group("id")})]


RULES: list[tuple[re.Pattern[str], Callable[[re.Match[str]], list[ToolCall]]]] = [
    (re.compile(r"^(?:please\s+)?(?:add|new task|todo|to-do)\s*:?\s+(?P<title>.+)$", re.I), _add),
    (re.compile(r"^(?:please\s+)?remind me to\s+(?P<title>.+)$", re.I), _add),
    (re.compile(rf"^rename\s+(?:task\s+)?#?(?P<id>{_NUMBER})\s+(?:to|as)\s+(?P<title>.+)$", re.I), _rename),
    (
        re.compile(
            rf"^(?:done|complete|completed|finish|finished|check|tick)\s+(?:task\s+)?(?P<ids>{_IDS})$", re.I
        ),
        _complete,
    ),
    (re.compile(rf"^(?:task\s+)?(?P<ids>{_IDS})\s+(?:is\s+)?(?:done|completed|finished)$", re.I), _complete),
    (re.compile(rf"^(?:delete|remove|drop)\s+(?:task\s+)?(?P<ids>{_IDS})$", re.I), _delete),
    (
        re.compile(
            rf"^(?:show|get|view|open|details of|what'?s|what is)\s+task\s+#?(?P<id>{_NUMBER})$", re.I
        ),
        _get,
    ),
    (re.compile(rf"^task\s+#?(?P<id>{_NUMBER})$", re.I), _get),
    (
        re.compile(
            r"^(?:list|tasks|todos|my tasks|my list|show (?:me )?(?:my )?(?:tasks|list|todos))"
            r"(?:\s+(?P<status>all|pending|open|done|completed|finished))?$",
            re.I,
        ),
        _list,
    ),
    (
        re.compile(
            r"^(?:list|show)\s+(?:my\s+)?(?P<status>pending|open|done|completed|finished)(?:\s+tasks)?$", re.I
        ),
        _list,
    ),
    (re.compile(r"^what'?s\s+(?P<status>done|pending|open)$", re.I), _list),
    (re.compile(r"^(?:what'?s|what is)\s+on\s+my\s+(?:list|plate|todo list|to-do list)$", re.I), _list),
    (re.compile(r"^what\s+(?:do i have to do|tasks do i have)(?:\s+today)?$", re.I), _list),
    (re.compile(r"^(?:please\s+)?remember(?:\s+that)?\s*:?\s+(?P<fact>.+)$", re.I), _remember),
    (
        re.compile(r"^(?:recall|what do you (?:remember|know)(?: about)?)(?:\s+(?P<query>.+))?$", re.I),
        _recall,
    ),
    (re.compile(r"^forget\s+(?:memory\s+)?(?P<id>(?:fact|summary)-[A-Za-z0-9_-]+)$", re.I), _forget),
]


_TIMELESS_REMINDER = re.compile(r"^(?:please\s+)?remind me to\s+\S", re.I)


def reminder_without_time(text: str) -> bool:
    """Whether `text` is "remind me to …", which, with no time in it, adds a task (the reminder rules take
    the ones with a time first)."""
    return _TIMELESS_REMINDER.match(clean(text)) is not None


def short_task_intent(text: str) -> list[ToolCall] | None:
    """The tool calls a short task command asks for, or None when the text is not one."""
    cleaned = re.sub(r"\s+", " ", text.strip()).rstrip("?!. ")
    for candidate in dict.fromkeys([cleaned, clean(text)]):  # as written, then without "please", "thanks"
        for pattern, build in RULES:
            match = pattern.match(candidate)
            if match:
                calls = build(match)
                return calls or None
    return None
