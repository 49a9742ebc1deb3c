"""Reminders and check-ins end to end, the wiring: the model's tool call creates an EventBridge Scheduler
schedule (moto), the emulation fires it on its clock, the FireReminder function queues it and the real state
machine delivers it (a reminder, delivered twice; a check-in's full turn, paused while the user is away).
What reminders do (cancelling, another user's, bad input, daylight saving, a check-in's approval and who set
it) is tested on the in-memory stack (tests/behaviour/test_reminders.py)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import boto3
import pytest
from support.stack import Stack

from stepwise_local.anthropic_server import text, tool_use
from stepwise_local.scheduler import Fired


@pytest.fixture
def reminders_stack(stack: Stack, monkeypatch: pytest.MonkeyPatch) -> Iterator[Stack]:
    """The shared stack; its clock goes back and this test's schedules go away afterwards."""
    monkeypatch.setattr(stack.emulation, "_clock_offset", stack.emulation._clock_offset)
    yield stack
    client = scheduler()
    for schedule in client.list_schedules(GroupName=group(stack))["Schedules"]:
        client.delete_schedule(Name=schedule["Name"], GroupName=group(stack))


def scheduler() -> Any:
    return boto3.client("scheduler")


def group(stack: Stack) -> str:
    return stack.emulation.template.schedule_group_name("ReminderScheduleGroup")


def schedules_of(stack: Stack, user: int) -> dict[str, dict[str, Any]]:
    client = scheduler()
    names = [s["Name"] for s in client.list_schedules(GroupName=group(stack))["Schedules"]]
    return {
        name: client.get_schedule(Name=name, GroupName=group(stack))
        for name in names
        if name.startswith(f"u{user}-")
    }


def call_tool(stack: Stack, user: int, name: str, args: dict[str, Any], then: str = "Done.") -> str:
    """One turn in which the model calls a tool; returns the tool's result text."""
    stack.anthropic.script(tool_use((name, args)), text(then))
    execution = stack.say(user, f"please {name}")
    assert execution["status"] == "SUCCEEDED"
    result = stack.anthropic.requests[-1]["messages"][-1]["content"][0]
    assert result["type"] == "tool_result"
    return str(result["content"])


def set_check_in(stack: Stack, user: int, args: dict[str, Any], label: str = "Approve") -> str:
    """A turn in which the model sets a check-in: it waits for the tap, which presses `label`; the approval's
    request line."""
    stack.anthropic.script(tool_use(("set_reminder", args)), text("Check-in set."))
    stack.send(user, "please set a check-in")
    message = stack.buttons(user)
    request = stack.telegram.text_of(message).splitlines()[1]
    assert schedules_of(stack, user) == {}, "nothing is scheduled before the tap"
    stack.press(user, message, label)
    stack.emulation.wait_idle(user)
    return request


def fire(stack: Stack, user: int, advance: timedelta | None = None) -> list[Fired]:
    """Move the clock, fire what fell due, and wait until the user's chat is idle; the user's firings."""
    if advance is not None:
        stack.emulation.advance_clock(advance)
    fired = stack.emulation.fire_due_schedules(prefix=f"u{user}-")  # the stack is shared
    stack.emulation.wait_idle(user)
    return fired


def test_remind_me_in_a_minute_arrives_once_and_is_understood_afterwards(reminders_stack: Stack) -> None:
    stack, user = reminders_stack, reminders_stack.new_user()
    result = call_tool(stack, user, "set_reminder", {"text": "take the pizza out", "in_minutes": 1})
    assert result.startswith("Reminder #1 set on ")
    (schedule,) = schedules_of(stack, user).values()
    assert schedule["ScheduleExpression"].startswith("at(") and schedule["ActionAfterCompletion"] == "DELETE"
    assert fire(stack, user) == [], "not due yet"
    model_calls = len(stack.anthropic.requests)
    (fired,) = fire(stack, user, timedelta(minutes=2))
    assert stack.replies(user)[-1] == "⏰ Reminder: take the pizza out"
    assert len(stack.anthropic.requests) == model_calls, "a reminder costs no model call"
    assert schedules_of(stack, user) == {}, "a one-time schedule deletes itself"
    # Scheduler delivers at least once: the same occurrence again gives nothing more
    stack.emulation.redeliver(fired)
    stack.emulation.wait_idle(user)
    assert stack.replies(user).count("⏰ Reminder: take the pizza out") == 1
    # "done" right after it is answered with the reminder in the model's view
    stack.say(user, "done")
    history = [m["content"][0]["text"] for m in stack.anthropic.requests[-1]["messages"][-3:-1]]
    assert history == [
        "(Reminder #1, set by the user earlier, is due: take the pizza out)",
        "⏰ Reminder: take the pizza out",
    ]
    assert call_tool(stack, user, "list_reminders", {}) == "No reminders."


def test_a_check_in_runs_a_full_turn_and_pauses_while_the_user_is_away(reminders_stack: Stack) -> None:
    stack, user = reminders_stack, reminders_stack.new_user()
    call_tool(stack, user, "add_task", {"title": "buy milk"})
    args = {"text": "send me my open tasks", "checkin": True, "repeat": {"days": [], "time": "09:00"}}
    set_check_in(stack, user, args)
    assert stack.anthropic.requests[-1]["messages"][-1]["content"][0]["content"].startswith(
        "Check-in #1 set every day at 09:00 (UTC)"
    )
    # Tomorrow at 09:00 the instruction runs as a turn, with tools
    stack.anthropic.script(tool_use(("list_tasks", {"status": "pending"})), text("Open: #1 buy milk."))
    tomorrow = (stack.emulation.now() + timedelta(days=1)).replace(hour=9, minute=0, second=30)
    assert len(fire(stack, user, tomorrow - stack.emulation.now())) == 1
    assert stack.replies(user)[-1] == "Open: #1 buy milk."
    first_call = stack.anthropic.requests[-2]["messages"][-1]["content"][0]["text"]
    assert (
        first_call
        == "(Scheduled check-in #1, set by the user earlier. Carry it out now: send me my open tasks)"
    )
    # Three days without a word from the user: the check-in fires but sends nothing
    replies = stack.replies(user)
    assert len(fire(stack, user, timedelta(days=3))) == 1
    assert stack.replies(user) == replies
    # They write again: the next check-in runs
    stack.say(user, "back!")
    stack.anthropic.script(text("Open: #1 buy milk (still)."))
    assert len(fire(stack, user, timedelta(days=1))) == 1
    assert stack.replies(user)[-1] == "Open: #1 buy milk (still)."
