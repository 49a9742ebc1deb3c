"""Which tool calls a message asks for: a reminder command first, then a task command (a task named by its
number, then by its words), then a memory named by its words ("forget the birthday")."""

from __future__ import annotations

from typing import TYPE_CHECKING

from stepwise.offline.decorations import undecorated
from stepwise.offline.forget_words import forget_intent
from stepwise.offline.named_tasks import lookup, named_task_intent
from stepwise.offline.reminder_rules import parse_reminder_intent, utc_clock
from stepwise.offline.task_commands import short_task_intent
from stepwise.offline.task_dates import split_due, with_due
from stepwise.offline.task_phrases import as_reminder_command, clean, everyday_task_intent

if TYPE_CHECKING:
    from stepwise.offline.calls import ToolCall
    from stepwise.prompt.clock_line import UserClock


def parse_intent(
    text: str, clock: UserClock | None = None, reminded: str | None = None
) -> list[ToolCall] | None:
    """The tool calls a reminder or task command asks for, or None when the text is neither. `clock` is the
    user's local now (UTC now without one), `reminded` the reminder just sent (for "snooze")."""
    clock = clock or utc_clock()
    return reminder_intent(text, clock, reminded) or task_intent(text, clock) or forget_intent(text)


def reminder_intent(text: str, clock: UserClock, reminded: str | None = None) -> list[ToolCall] | None:
    """The tool calls a reminder, check-in or time zone command asks for ("don't let me forget to call mom at
    5pm" included), or None."""
    text = undecorated(text)
    return parse_reminder_intent(as_reminder_command(text) or text, clock, reminded)


def task_intent(text: str, clock: UserClock | None = None) -> list[ToolCall] | None:
    """The tool calls a task command asks for, in everyday phrasing or in short form, or None. A new task's
    date words ("add buy milk tomorrow") become its due date, on `clock`'s day (UTC now without one)."""
    text, clock = undecorated(text), clock or utc_clock()
    dated = split_due(clean(text), clock)  # "add milk and eggs to my list for tomorrow": one date for all
    if dated:
        head, due = dated
        calls = _task_calls(head)
        if calls and all(name == "add_task" for name, _ in calls):
            return [(name, {**args, "due": due}) for name, args in calls]
    calls = _task_calls(text)
    return with_due(calls, text, clock) if calls else None


def _task_calls(text: str) -> list[ToolCall] | None:
    return everyday_task_intent(text) or short_task_intent(text) or _named_calls(text)


def _named_calls(text: str) -> list[ToolCall] | None:
    """The list_tasks call that reads the list a task named by its words is on ("done buy milk")."""
    named = named_task_intent(text)
    return lookup(named) if named else None
