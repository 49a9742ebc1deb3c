"""The reminder tools through the registry: records and schedules made together, limits, identity."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from stepwise.approvals.models import Requester
from stepwise.services import TurnServices
from stepwise.telegram.conversation import Conversation, Scope
from stepwise.tools.catalog import build_registry
from stepwise.tools.registry import ToolContext, ToolError, ToolRegistry
from stepwise.tools.reminder_tools import ReminderLimits, ReminderSetup
from stepwise_local.in_memory.ledger import InMemoryToolCallLedger
from stepwise_local.in_memory.reminders import InMemoryReminderStore, InMemorySchedules
from stepwise_local.in_memory.tasks import InMemoryTaskRepository

NOW = "2026-11-23T14:05:00.000Z"  # a Monday
_calls = itertools.count(1)


def registry(
    reminders: InMemoryReminderStore, schedules: InMemorySchedules, limits: ReminderLimits | None = None
) -> ToolRegistry:
    tasks = InMemoryTaskRepository(InMemoryToolCallLedger())
    tasks.add(7, "buy milk", "", NOW)
    setup = ReminderSetup(reminders, schedules, limits or ReminderLimits())
    return build_registry(tasks=tasks, ledger=tasks.ledger, reminders=setup)


def call(tools: ToolRegistry, name: str, args: dict[str, Any], user: int = 7) -> tuple[str, bool]:
    try:
        tool, parsed = tools.parse(name, args)
    except ToolError as error:
        return str(error), True
    context = ToolContext(Scope(Conversation(user), user), turn_id="t", call_id=f"t:{next(_calls)}", now=NOW)
    result = tools.run(context, tool, parsed)
    return result.content, result.is_error


@pytest.fixture
def tools(reminders: InMemoryReminderStore, schedules: InMemorySchedules) -> ToolRegistry:
    return registry(reminders, schedules)


def test_a_reminder_is_a_record_and_a_schedule_named_after_it(
    tools: ToolRegistry, reminders: InMemoryReminderStore, schedules: InMemorySchedules
) -> None:
    assert call(tools, "set_reminder", {"text": "call mom", "at": "2026-11-23T17:00"}) == (
        "Reminder #1 set on Mon 23 Nov 2026 at 17:00 (UTC): call mom",
        False,
    )
    (reminder,) = reminders.list(7)
    assert (reminder.expression, reminder.timezone, reminder.one_time) == (
        "at(2026-11-23T17:00:00)",
        "UTC",
        True,
    )
    assert schedules.schedules == {"u7-r1": reminder}


def test_reminders_use_the_users_time_zone_once_set(
    tools: ToolRegistry, reminders: InMemoryReminderStore
) -> None:
    assert call(tools, "set_timezone", {"timezone": "America/New_York"}) == (
        "Time zone set to America/New_York: it is now Mon 23 Nov 2026 at 09:05 there.",
        False,
    )
    content, _ = call(tools, "set_reminder", {"text": "stand up", "repeat": {"days": [], "time": "08:00"}})
    assert content == "Reminder #1 set every day at 08:00 (America/New_York): stand up"
    assert reminders.list(7)[0].timezone == "America/New_York"


def test_list_and_cancel_only_ever_see_the_users_own_reminders(
    tools: ToolRegistry, reminders: InMemoryReminderStore, schedules: InMemorySchedules
) -> None:
    call(tools, "set_reminder", {"text": "mine", "in_minutes": 30}, user=7)
    call(tools, "set_reminder", {"text": "theirs", "in_minutes": 30}, user=8)
    listed, _ = call(tools, "list_reminders", {}, user=7)
    assert "mine" in listed and "theirs" not in listed
    assert call(tools, "cancel_reminder", {"reminder_id": 1}, user=7) == (
        "Cancelled reminder #1: mine",
        False,
    )
    assert call(tools, "cancel_reminder", {"reminder_id": 1}, user=7) == (
        "There is no reminder #1 for this user.",
        True,
    )
    assert [r.text for r in reminders.list(8)] == ["theirs"], "the other user's #1 is untouched"
    assert set(schedules.schedules) == {"u8-r1"}
    assert call(tools, "list_reminders", {}, user=7) == ("No reminders.", False)


def test_a_model_cannot_name_another_user(tools: ToolRegistry) -> None:
    content, is_error = call(tools, "cancel_reminder", {"reminder_id": 1, "user_id": 8})
    assert is_error and "Extra inputs are not permitted" in content


@pytest.mark.parametrize(
    ("args", "problem"),
    [
        ({"text": "x", "at": "2026-11-23T09:00"}, "in the past"),
        ({"text": "x"}, "exactly one of"),
        ({"text": "x", "at": "2026-11-24T09:00", "in_minutes": 5}, "exactly one of"),
        ({"text": "x", "repeat": {"every_minutes": 30}, "checkin": True}, "too often"),
        ({"text": "x", "repeat": {"days": ["mon"], "every_minutes": 90}}, "days go with a time"),
        ({"text": "x", "repeat": {"days": ["someday"], "time": "09:00"}}, "Input should be"),
        ({"text": "x", "in_minutes": 5, "task_id": 9}, "no task #9"),
        ({"text": "", "in_minutes": 5}, "at least 1 character"),
    ],
)
def test_bad_times_get_a_clear_error_and_leave_nothing_behind(
    tools: ToolRegistry,
    reminders: InMemoryReminderStore,
    schedules: InMemorySchedules,
    args: dict[str, Any],
    problem: str,
) -> None:
    content, is_error = call(tools, "set_reminder", args)
    assert is_error and problem in content
    assert reminders.list(7) == [] and schedules.created == []


def test_an_unknown_time_zone_is_refused(tools: ToolRegistry, reminders: InMemoryReminderStore) -> None:
    content, is_error = call(tools, "set_timezone", {"timezone": "Mars/Olympus"})
    assert is_error and "not a time zone I know" in content
    assert reminders.timezone(7) is None


def test_at_most_max_reminders_per_user(
    reminders: InMemoryReminderStore, schedules: InMemorySchedules
) -> None:
    tools = registry(reminders, schedules, ReminderLimits(max_reminders=2))
    for n in (1, 2):
        assert not call(tools, "set_reminder", {"text": f"r{n}", "in_minutes": n})[1]
    content, is_error = call(tools, "set_reminder", {"text": "r3", "in_minutes": 3})
    assert is_error and "the most allowed" in content
    assert len(reminders.list(7)) == 2 and len(schedules.schedules) == 2
    assert not call(tools, "set_reminder", {"text": "other user", "in_minutes": 3}, user=8)[1]


def test_a_reminder_can_point_at_a_task(tools: ToolRegistry, reminders: InMemoryReminderStore) -> None:
    assert not call(tools, "set_reminder", {"text": "buy milk", "in_minutes": 60, "task_id": 1})[1]
    assert reminders.list(7)[0].task_id == 1
    listed, _ = call(tools, "list_reminders", {})
    assert "(task #1)" in listed


def test_check_ins_at_the_minimum_interval_are_fine(
    tools: ToolRegistry, reminders: InMemoryReminderStore
) -> None:
    content, is_error = call(
        tools,
        "set_reminder",
        {"text": "send me my open tasks", "checkin": True, "repeat": {"every_minutes": 60}},
    )
    assert not is_error and content.startswith("Check-in #1 set every hour")
    assert reminders.list(7)[0].checkin


def test_a_one_minute_repeat_is_refused_with_a_clear_message_unless_a_setting_lowers_the_floor(
    reminders: InMemoryReminderStore, schedules: InMemorySchedules
) -> None:
    tools = registry(reminders, schedules)
    every_minute = {"text": "drink water", "repeat": {"every_minutes": 1}}
    assert call(tools, "set_reminder", every_minute) == (
        "That is too often: a repeating reminder runs at most every 15 minutes, not every 1.",
        True,
    )
    assert reminders.list(7) == [] and schedules.created == []
    content, is_error = call(tools, "set_reminder", {**every_minute, "repeat": {"every_minutes": 15}})
    assert not is_error and content == "Reminder #1 set every 15 minutes: drink water"
    lowered = registry(reminders, schedules, ReminderLimits(min_repeat_interval_minutes=1))
    assert call(lowered, "set_reminder", every_minute) == (
        "Reminder #2 set every 1 minute: drink water",
        False,
    )
    # a check-in keeps the longer of its own floor and the repeats' floor
    checkin = {"text": "review", "checkin": True, "repeat": {"every_minutes": 10}}
    loose = registry(reminders, schedules, ReminderLimits(min_checkin_interval_minutes=5))
    assert call(loose, "set_reminder", checkin) == (
        "That is too often: a check-in runs at most every 15 minutes, not every 10.",
        True,
    )


def test_a_check_in_asks_for_approval_and_a_plain_reminder_does_not(tools: ToolRegistry) -> None:
    tool, checkin = tools.parse(
        "set_reminder", {"text": "review my week", "checkin": True, "repeat": {"time": "09:00"}}
    )
    _same, reminder = tools.parse("set_reminder", {"text": "call mom", "repeat": {"time": "09:00"}})
    assert tool.asks_approval(checkin) and not tool.asks_approval(reminder)
    context = ToolContext(Scope(Conversation(7), 7), turn_id="t", call_id="t:describe", now=NOW)
    assert tools.describe(context, tool, checkin, 4000) == (
        "Set a check-in every day at 09:00 (UTC): “review my week”."
    )
    long_text = tools.parse(
        "set_reminder", {"text": "plan " * 99, "checkin": True, "repeat": {"time": "9:00"}}
    )[1]
    shown = tools.describe(context, tool, long_text, 200)  # an instruction longer than its room is shortened
    assert (
        len(shown) <= 300
        and "characters not shown]" in shown
        and shown.startswith("Set a check-in every day")
    )
    too_often = tools.parse("set_reminder", {"text": "x", "checkin": True, "repeat": {"every_minutes": 5}})[1]
    with pytest.raises(ToolError, match="too often"):  # nothing to approve: it fails at once
        tools.describe(context, tool, too_often, 4000)


def test_each_reminder_says_who_set_it(tools: ToolRegistry, reminders: InMemoryReminderStore) -> None:
    callers = [
        Requester(),
        Requester(kind="job", number=1, name="Tidy up"),
        Requester(kind="mcp_client", name="laptop"),
        Requester(kind="checkin", number=1, name="review my week"),
    ]
    for n, requester in enumerate(callers, start=1):
        tool, args = tools.parse("set_reminder", {"text": f"r{n}", "in_minutes": n})
        context = ToolContext(
            Scope(Conversation(7), 7), turn_id="t", call_id=f"t:by{n}", now=NOW, requester=requester
        )
        assert not tools.run(context, tool, args).is_error
    tool, args = tools.parse("set_reminder", {"text": "r5", "in_minutes": 5})
    tools.run(ToolContext(Scope(Conversation(7), 7), turn_id="t", call_id="t:by5", now=NOW), tool, args)
    assert [r.created_by for r in reminders.list(7)] == [*callers, None]
    tool, args = tools.parse("list_reminders", {})
    data = tools.run(ToolContext(Scope(Conversation(7), 7), turn_id="t", call_id="t:l", now=NOW), tool, args)
    assert data.structured is not None
    assert [r["created_by"] for r in data.structured["reminders"]] == [
        *(requester.model_dump() for requester in callers),
        None,
    ]
    listed, _ = call(tools, "list_reminders", {})
    assert [line.split(": ", 1)[1] for line in listed.splitlines()[1:]] == [
        "r1 [set in this chat]",
        "r2 [set by background job #1 “Tidy up”]",
        "r3 [set by your MCP client “laptop”]",
        "r4 [set by your check-in #1 “review my week”]",
        "r5",  # set before who set it was recorded
    ]


def test_a_crash_between_schedule_and_record_is_repaired_by_the_retry(
    reminders: InMemoryReminderStore, schedules: InMemorySchedules
) -> None:
    tools = registry(reminders, schedules)
    put = reminders.put
    crashed: list[bool] = []

    def crash_once(reminder: Any) -> None:
        if not crashed:
            crashed.append(True)
            raise RuntimeError("Lambda died")
        put(reminder)

    reminders.put = crash_once  # type: ignore[method-assign]
    tool, args = tools.parse("set_reminder", {"text": "call mom", "in_minutes": 20})
    context = ToolContext(Scope(Conversation(7), 7), turn_id="t", call_id="t:crash", now=NOW)
    first = tools.run(context, tool, args)
    assert first.is_error and reminders.list(7) == [] and list(schedules.schedules) == ["u7-r1"]
    again = tools.run(context, tool, args)  # RunTools retried: the recorded intent names the same reminder
    assert again.content == "Reminder #1 set on Mon 23 Nov 2026 at 14:25 (UTC): call mom"
    assert [r.reminder_id for r in reminders.list(7)] == [1] and list(schedules.schedules) == ["u7-r1"]


def test_the_turn_catalog_offers_the_reminder_tools(services: TurnServices) -> None:
    names = [spec["name"] for spec in services.tools.registry.api_tools()]
    assert {"set_reminder", "list_reminders", "cancel_reminder", "set_timezone"} <= set(names)


def test_list_reminders_gives_each_ones_next_time_in_its_zone(tools: ToolRegistry) -> None:
    call(tools, "set_timezone", {"timezone": "America/New_York"})
    call(tools, "set_reminder", {"text": "stand up", "repeat": {"days": [], "time": "08:00"}})
    call(tools, "set_reminder", {"text": "call mom", "at": "2026-11-23T17:00"})
    tool, args = tools.parse("list_reminders", {})
    context = ToolContext(Scope(Conversation(7), 7), turn_id="t", call_id="t:list", now=NOW)
    structured = tools.run(context, tool, args).structured
    assert structured is not None
    assert [(r["text"], r["next_at"]) for r in structured["reminders"]] == [
        ("stand up", "2026-11-24T08:00-05:00"),  # 09:05 there now: tomorrow
        ("call mom", "2026-11-23T17:00-05:00"),
    ]


def test_a_tasks_created_moment_is_written_as_the_chat_writes_moments_in_the_users_zone() -> None:
    tools = registry(InMemoryReminderStore(), InMemorySchedules())
    assert "Created: Mon 23 Nov 2026 at 14:05 (UTC)" in call(tools, "get_task", {"task_id": 1})[0]
    assert call(tools, "set_timezone", {"timezone": "America/New_York"})[1] is False
    details, _ = call(tools, "get_task", {"task_id": 1})
    assert "Created: Mon 23 Nov 2026 at 09:05 (America/New_York)" in details
    assert "2026-11-23T14:05" not in details
