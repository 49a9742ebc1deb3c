"""Due dates in task commands: "add buy milk tomorrow" adds "buy milk" due tomorrow, in the user's zone.

The date words are the reminder rules' (`stepwise.offline.reminder_times`): "today", "tomorrow", "the day
after tomorrow", "friday", "on friday", "next friday", "next week" (its Monday), "the 3rd", "dec 3", "3/12",
"2026-12-03", "in 3 days", each perhaps with a time of day ("tomorrow at 9", "friday evening"). Such a phrase
at the end of a new task's title, perhaps after "by", "due" or "due by", is its due date and leaves the title:
a day alone is due that day ("2026-11-24"), a day with a time of day at that time ("2026-11-24T09:00"). A
day alone that is today stays today: "by friday" typed on a Friday, "on the 27th" typed on the 27th.

What stays in the title, on purpose: a date inside it ("read tomorrow's news"); one after a word that makes
it part of what the task is about ("plan for tomorrow", "notes from monday", "move the call to friday"); a
time of day without a day ("pick up Leo at 4": no guess at which day); a delay in minutes or hours; a repeat
("water the plants every friday": a task has one due date); a quoted title; a date that does not exist. A
title keeps at least one word ("add tomorrow" adds "tomorrow") and must still be a task ("I have to go on
friday" is no task "go"). Only new tasks get a due date this way; a rename keeps its words.
"""

from __future__ import annotations

import re
from datetime import timedelta
from typing import TYPE_CHECKING

from stepwise.offline.reminder_times import (
    day_first,
    names_a_date,
    names_a_time,
    schedule_input,
    schedule_start,
)
from stepwise.offline.task_phrases import ENDS_WITH_LIST, QUOTES, is_task_title, title_of

if TYPE_CHECKING:
    from stepwise.offline.calls import ToolCall
    from stepwise.prompt.clock_line import UserClock

# "buy milk by friday", "tax return due 2026-12-31": the word goes with the date.
_LINK = re.compile(r"(?:^|[\s,]+)(?:due(?:\s+(?:by|on))?|by)$", re.I)
# "plan for tomorrow", "notes from monday": the date is what the task is about.
_PART_OF_TITLE = re.compile(
    r"(?:^|\s)(?:for|of|from|since|after|before|until|till|to|about|than|like|between|during|per|with)$",
    re.I,
)
_FOR = re.compile(r"\s+for$", re.I)


def split_due(text: str, clock: UserClock) -> tuple[str, str] | None:
    """(`text` without the date phrase that ends it, the due date) when it ends in one; None when it does
    not, or when the date belongs to the title (see the module's docstring). "… on my list for tomorrow":
    "for" after a list's name goes with the date."""
    start = schedule_start(text)
    if not start:
        return None
    phrase, head = text[start:], text[:start].rstrip(" ,")
    link = _LINK.search(head)
    listed = _FOR.search(head)
    if link:
        head = head[: link.start()]
    elif listed and ENDS_WITH_LIST.search(head[: listed.start()]):
        head = head[: listed.start()]
    elif _PART_OF_TITLE.search(head):
        return None
    due = _due(phrase, clock)
    return (head, due) if due and head.strip() else None


def with_due(calls: list[ToolCall], text: str, clock: UserClock) -> list[ToolCall]:
    """`calls` for `text`, each add_task whose title ends in a date phrase given that date as its due date;
    a title quoted in `text` is taken word for word, and what is left must still be a task ("I have to go on
    friday" is no task "go")."""
    dated = []
    for name, args in calls:
        title = str(args.get("title", ""))
        split = split_due(title, clock) if name == "add_task" and "due" not in args else None
        rest = title_of(split[0]) if split else ""
        quoted = re.search(rf"[{QUOTES}]{re.escape(title)}[{QUOTES}]", text)
        if split and rest and is_task_title(rest) and not quoted:
            dated.append((name, {**args, "title": rest, "due": split[1]}))
        else:
            dated.append((name, args))
    return dated


def _due(phrase: str, clock: UserClock) -> str | None:
    """The due date (or date-time) a schedule phrase names, in the user's zone; None when it names no single
    day."""
    if not names_a_date(phrase):
        return None
    timed = names_a_time(phrase)
    # A day alone is due that whole day: "by friday" typed on a Friday afternoon is today, not next week.
    now = clock.now if timed else clock.now.replace(hour=0, minute=0, second=0, microsecond=0)
    when = schedule_input(phrase, now, dayfirst=day_first(clock.zone))
    if when is None:
        return None
    if "at" in when:
        at = str(when["at"])
        return at if timed else at[:10]
    if "in_minutes" in when:  # "in 3 days": whole days (names_a_date)
        return (clock.now + timedelta(minutes=int(when["in_minutes"]))).date().isoformat()
    return None
