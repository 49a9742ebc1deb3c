"""Reminders and check-ins on the in-memory stack (support.memory_stack): the model's tool call creates a
schedule, the stack's scheduler (support.memory_scheduler) fires it on the stack's clock through
FireReminder's core, and the turn delivers it; cancelling, another user's reminders, bad input, daylight
saving, a check-in's full turn, its pause while the user is away and its approval. The emulated stack keeps
the wiring of a reminder and of a check-in (EventBridge Scheduler on moto, the FireReminder function, the real
state machine: tests/integration/test_reminders.py)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from support.memory_scheduler import Firing
from support.memory_stack import MemoryStack

from stepwise_local.anthropic_server import text, tool_use

LISBON = ZoneInfo("Europe/Lisbon")


def call_tool(stack: MemoryStack, user: int, name: str, args: dict[str, Any], then: str = "Done.") -> str:
    """One turn in which the model calls a tool; returns the tool's result text."""
    stack.anthropic.script(tool_use((name, args)), text(then))
    execution = stack.say(user, f"please {name}")
    assert execution["status"] == "SUCCEEDED"
    result = stack.anthropic.requests[-1]["messages"][-1]["content"][0]
    assert result["type"] == "tool_result"
    return str(result["content"])


def set_check_in(stack: MemoryStack, user: int, args: dict[str, Any], label: str = "Approve") -> str:
    """A turn in which the model sets a check-in: it waits for the tap, which presses `label`; the approval's
    request line."""
    stack.anthropic.script(tool_use(("set_reminder", args)), text("Check-in set."))
    stack.send(user, "please set a check-in")
    message = stack.buttons(user)
    request = stack.telegram.text_of(message).splitlines()[1]
    assert stack.schedules_of(user) == {}, "nothing is scheduled before the tap"
    stack.press(user, message, label)
    return request


def fire(stack: MemoryStack, user: int, advance: timedelta | None = None) -> list[Firing]:
    """Move the clock, fire what fell due and run the turns it queued; the user's firings."""
    if advance is not None:
        stack.advance_clock(advance.total_seconds())
    return [f for f in stack.fire_due_schedules() if f.name.startswith(f"u{user}-")]


def test_remind_me_in_a_minute_arrives_once_and_is_understood_afterwards(stack: MemoryStack) -> None:
    user = stack.new_user()
    result = call_tool(stack, user, "set_reminder", {"text": "take the pizza out", "in_minutes": 1})
    assert result.startswith("Reminder #1 set on ")
    (schedule,) = stack.schedules_of(user).values()
    assert schedule["ScheduleExpression"].startswith("at(") and schedule["ActionAfterCompletion"] == "DELETE"
    assert fire(stack, user) == [], "not due yet"
    model_calls = len(stack.anthropic.requests)
    (fired,) = fire(stack, user, timedelta(minutes=2))
    assert stack.replies(user)[-1] == "⏰ Reminder: take the pizza out"
    assert len(stack.anthropic.requests) == model_calls, "a reminder costs no model call"
    assert stack.schedules_of(user) == {}, "a one-time schedule deletes itself"
    # Scheduler delivers at least once: the same occurrence again gives nothing more
    stack.redeliver(fired)
    assert stack.replies(user).count("⏰ Reminder: take the pizza out") == 1
    # "done" right after it is answered with the reminder in the model's view
    stack.say(user, "done")
    history = [m["content"][0]["text"] for m in stack.anthropic.requests[-1]["messages"][-3:-1]]
    assert history == [
        "(Reminder #1, set by the user earlier, is due: take the pizza out)",
        "⏰ Reminder: take the pizza out",
    ]
    assert call_tool(stack, user, "list_reminders", {}) == "No reminders."


def test_a_reminder_cancelled_before_it_fires_never_arrives(stack: MemoryStack) -> None:
    user = stack.new_user()
    call_tool(stack, user, "set_reminder", {"text": "stretch", "in_minutes": 5})
    assert call_tool(stack, user, "cancel_reminder", {"reminder_id": 1}) == "Cancelled reminder #1: stretch"
    assert stack.schedules_of(user) == {}
    replies = stack.replies(user)
    assert fire(stack, user, timedelta(minutes=10)) == []
    assert stack.replies(user) == replies


def test_another_users_reminder_cannot_be_listed_or_cancelled(stack: MemoryStack) -> None:
    owner, other = stack.new_user(), stack.new_user()
    call_tool(stack, owner, "set_reminder", {"text": "owner's secret", "in_minutes": 30})
    assert (
        call_tool(stack, other, "cancel_reminder", {"reminder_id": 1})
        == "There is no reminder #1 for this user."
    )
    assert call_tool(stack, other, "list_reminders", {}) == "No reminders."
    assert len(stack.schedules_of(owner)) == 1


def test_bad_input_leaves_no_schedule_and_no_record(stack: MemoryStack) -> None:
    user = stack.new_user()
    result = call_tool(stack, user, "set_reminder", {"text": "x", "at": "2020-01-01T09:00"})
    assert "is in the past" in result
    result = call_tool(stack, user, "set_timezone", {"timezone": "Mars/Olympus"})
    assert "not a time zone I know" in result
    result = call_tool(stack, user, "set_reminder", {"text": "x", "repeat": {"every_minutes": 1}})
    assert result == "That is too often: a repeating reminder runs at most every 15 minutes, not every 1."
    assert stack.schedules_of(user) == {}
    assert call_tool(stack, user, "list_reminders", {}) == "No reminders."


def test_a_daily_reminder_keeps_its_local_time_across_a_daylight_saving_change(
    stack: MemoryStack,
) -> None:
    user = stack.new_user()
    call_tool(stack, user, "set_timezone", {"timezone": "Europe/Lisbon"})
    result = call_tool(
        stack, user, "set_reminder", {"text": "vitamins", "repeat": {"days": [], "time": "08:00"}}
    )
    assert result == "Reminder #1 set every day at 08:00 (Europe/Lisbon): vitamins"
    (schedule,) = stack.schedules_of(user).values()
    assert (schedule["ScheduleExpression"], schedule["ScheduleExpressionTimezone"]) == (
        "cron(0 8 * * ? *)",
        "Europe/Lisbon",
    )
    # Lisbon moves from UTC+0 to UTC+1 on 2027-03-28
    times = []
    for day in (27, 28):
        target = datetime(2027, 3, day, 8, 0, 30, tzinfo=LISBON)
        (fired,) = fire(stack, user, target - stack.now())
        times.append(fired.scheduled_time)
    assert times == [datetime(2027, 3, 27, 8, 0, tzinfo=UTC), datetime(2027, 3, 28, 7, 0, tzinfo=UTC)]
    assert stack.replies(user)[-2:] == ["⏰ Reminder: vitamins", "⏰ Reminder: vitamins"]


def test_a_check_in_runs_a_full_turn_and_pauses_while_the_user_is_away(stack: MemoryStack) -> None:
    user = stack.new_user()
    call_tool(stack, user, "add_task", {"title": "buy milk"})
    args = {"text": "send me my open tasks", "checkin": True, "repeat": {"days": [], "time": "09:00"}}
    set_check_in(stack, user, args)
    assert stack.anthropic.requests[-1]["messages"][-1]["content"][0]["content"].startswith(
        "Check-in #1 set every day at 09:00 (UTC)"
    )
    # Tomorrow at 09:00 the instruction runs as a turn, with tools
    stack.anthropic.script(tool_use(("list_tasks", {"status": "pending"})), text("Open: #1 buy milk."))
    tomorrow = (stack.now() + timedelta(days=1)).replace(hour=9, minute=0, second=30)
    assert len(fire(stack, user, tomorrow - stack.now())) == 1
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


def test_a_check_ins_approval_names_the_check_in_before_the_tap(stack: MemoryStack) -> None:
    user = stack.new_user()
    call_tool(stack, user, "add_task", {"title": "old plan"})
    args = {"text": "clear out my old tasks", "checkin": True, "repeat": {"days": [], "time": "09:00"}}
    set_check_in(stack, user, args)
    stack.anthropic.script(tool_use(("delete_task", {"task_id": 1})), text("Cleared task #1."))
    tomorrow = (stack.now() + timedelta(days=1)).replace(hour=9, minute=0, second=30)
    stack.advance_clock((tomorrow - stack.now()).total_seconds())
    assert [f for f in stack.fire_due_schedules() if f.name.startswith(f"u{user}-")]
    message = stack.buttons(user)
    assert stack.telegram.text_of(message).splitlines()[:2] == [
        "🔐 Approval needed",
        "Your check-in #1 “clear out my old tasks” asks to delete task #1 “old plan”.",
    ]
    assert len(stack.tasks(user)) == 1, "nothing is deleted before the tap"
    stack.press(user, message, "Approve")
    assert stack.tasks(user) == [] and stack.replies(user)[-1] == "Cleared task #1."


@pytest.mark.parametrize(("label", "made"), [("Approve", True), ("Deny", False)])
def test_a_check_in_set_in_a_turn_waits_for_the_tap_and_reminders_says_who_set_it(
    stack: MemoryStack, label: str, made: bool
) -> None:
    user = stack.new_user()
    args = {"text": "send me my open tasks", "checkin": True, "repeat": {"days": [], "time": "09:00"}}
    request = set_check_in(stack, user, args, label)
    assert request == (
        "The assistant in this chat asks to set a check-in every day at 09:00 (UTC): “send me my open tasks”."
    )
    assert len(stack.schedules_of(user)) == int(made)
    result = stack.anthropic.requests[-1]["messages"][-1]["content"][0]
    assert result["is_error"] is not made
    assert result["content"].startswith("Check-in #1 set" if made else "Denied by the user")
    # a plain reminder needs no tap; /reminders says who set each one
    call_tool(stack, user, "set_reminder", {"text": "stretch", "repeat": {"every_minutes": 15}})
    stack.say(user, "/reminders")
    listed = stack.replies(user)[-1]
    if made:
        assert "#1 check-in every day at 09:00 (UTC): send me my open tasks [set in this chat]" in listed
    assert "reminder every 15 minutes: stretch [set in this chat]" in listed
    assert ("send me my open tasks" in listed) is made, "a denied check-in is not set"
