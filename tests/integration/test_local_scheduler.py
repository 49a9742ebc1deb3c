"""The emulation fires EventBridge Scheduler schedules (stored by moto) on its own clock, as AWS would.

The target is a function of the template (the summarizer) whose handler is swapped, for each test, for one
that records what it receives: firing is observed without the reminders code.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import boto3
import pytest
from support.stack import Stack

from stepwise import runtime
from stepwise_local.emulation import Emulation
from stepwise_local.scheduler import Fired
from stepwise_local.template import function_arn

GROUP = "scheduler-tests"
LISBON = ZoneInfo("Europe/Lisbon")
CONTEXT_INPUT = json.dumps(
    {
        "reminder": "r-1",
        "arn": "<aws.scheduler.schedule-arn>",
        "at": "<aws.scheduler.scheduled-time>",
        "execution": "<aws.scheduler.execution-id>",
        "attempt": "<aws.scheduler.attempt-number>",
    }
)


@dataclass
class Scheduling:
    """The shared stack's scheduler, a boto3 client, and what the recording target received."""

    emulation: Emulation
    client: Any
    target: str  # the logical id of the recording function
    received: list[tuple[Any, datetime]] = field(default_factory=list)  # (event, runtime.clock() inside)
    failures: int = 0  # the next invocations that raise

    @property
    def target_arn(self) -> str:
        return function_arn(self.target)

    def create(self, name: str, expression: str, **options: Any) -> str:
        target = {"Arn": self.target_arn, "RoleArn": "arn:aws:iam::123456789012:role/scheduler"}
        target.update(options.pop("Target", {"Input": CONTEXT_INPUT}))
        arn: str = self.client.create_schedule(
            Name=name,
            GroupName=GROUP,
            ScheduleExpression=expression,
            ScheduleExpressionTimezone=options.pop("ScheduleExpressionTimezone", "UTC"),
            FlexibleTimeWindow={"Mode": "OFF"},
            Target=target,
            State=options.pop("State", "ENABLED"),
            **options,
        )["ScheduleArn"]
        return arn

    def exists(self, name: str) -> bool:
        try:
            self.client.get_schedule(Name=name, GroupName=GROUP)
        except self.client.exceptions.ResourceNotFoundException:
            return False
        return True

    def advance(self, delta: timedelta) -> list[Fired]:
        self.emulation.advance_clock(delta)
        return self.emulation.fire_due_schedules()

    def advance_to(self, moment: datetime) -> list[Fired]:
        return self.advance(moment - self.emulation.now())


@pytest.fixture
def scheduling(stack: Stack, monkeypatch: pytest.MonkeyPatch) -> Iterator[Scheduling]:
    emulation = stack.emulation
    client = boto3.client("scheduler")
    if GROUP not in {g["Name"] for g in client.list_schedule_groups()["ScheduleGroups"]}:
        client.create_schedule_group(Name=GROUP)
    target = emulation.template.function_with_event("ScheduleV2")
    scheduling = Scheduling(emulation, client, target)

    def record(event: Any, context: Any) -> dict[str, Any]:
        scheduling.received.append((event, runtime.clock()))
        if scheduling.failures:
            scheduling.failures -= 1
            raise RuntimeError("the target failed")
        return {}

    monkeypatch.setitem(emulation._handlers, target, record)
    # The clock only moves forward; other tests share the stack, so it goes back to where it was afterwards.
    monkeypatch.setattr(emulation, "_clock_offset", emulation._clock_offset)
    yield scheduling
    for schedule in client.list_schedules(GroupName=GROUP)["Schedules"]:
        client.delete_schedule(Name=schedule["Name"], GroupName=GROUP)
    scheduling.failures = 0
    emulation.fire_due_schedules()  # retries still pending go to the recorder, not to the next test


def at_expression(moment: datetime, zone: ZoneInfo) -> str:
    return f"at({moment.astimezone(zone):%Y-%m-%dT%H:%M:%S})"


# ------------------------------------------------------------------ one-time schedules
def test_an_at_schedule_fires_once_when_due_with_the_context_attributes_and_is_deleted(
    scheduling: Scheduling,
) -> None:
    due = (scheduling.emulation.now() + timedelta(minutes=1)).replace(microsecond=0)
    arn = scheduling.create(
        "at-once",
        at_expression(due, LISBON),
        ScheduleExpressionTimezone="Europe/Lisbon",
        ActionAfterCompletion="DELETE",
    )
    assert scheduling.emulation.fire_due_schedules() == []
    assert scheduling.advance(timedelta(seconds=50)) == []  # not before its time
    (fired,) = scheduling.advance(timedelta(seconds=70))
    assert fired.error is None and fired.function == scheduling.target and fired.scheduled_time == due
    ((event, clock_inside),) = scheduling.received
    assert event == {
        "reminder": "r-1",
        "arn": arn,
        "at": due.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "execution": fired.execution_id,
        "attempt": "1",
    }
    assert len(fired.execution_id) == 16
    assert clock_inside >= due  # the function saw the emulation's clock
    assert not scheduling.exists("at-once")
    assert scheduling.advance(timedelta(hours=1)) == []
    assert fired in scheduling.emulation.fired


def test_a_target_that_creates_its_schedule_again_keeps_the_new_one(scheduling: Scheduling) -> None:
    due = scheduling.emulation.now() + timedelta(minutes=1)
    scheduling.create("snoozed", at_expression(due, LISBON), ActionAfterCompletion="DELETE")

    def snooze(event: Any, context: Any) -> None:  # what a snooze does: the same name, a later time
        scheduling.client.delete_schedule(Name="snoozed", GroupName=GROUP)
        scheduling.create(
            "snoozed", at_expression(due + timedelta(hours=1), LISBON), ActionAfterCompletion="DELETE"
        )

    scheduling.emulation._handlers[scheduling.target] = snooze
    assert len(scheduling.advance(timedelta(minutes=2))) == 1
    assert scheduling.exists("snoozed")
    scheduling.emulation._handlers[scheduling.target] = lambda event, context: None
    assert scheduling.advance(timedelta(minutes=30)) == []
    assert len(scheduling.advance(timedelta(minutes=40))) == 1
    assert not scheduling.exists("snoozed")


def test_an_at_schedule_without_delete_stays_but_does_not_fire_again(scheduling: Scheduling) -> None:
    scheduling.create("at-kept", at_expression(scheduling.emulation.now() + timedelta(minutes=5), LISBON))
    assert len(scheduling.advance(timedelta(minutes=6))) == 1
    assert scheduling.advance(timedelta(days=1)) == []
    assert scheduling.exists("at-kept")


def test_an_at_schedule_whose_time_has_passed_fires_once(scheduling: Scheduling) -> None:
    scheduling.create("at-past", at_expression(scheduling.emulation.now() - timedelta(hours=2), LISBON))
    assert [f.name for f in scheduling.emulation.fire_due_schedules()] == ["at-past"]
    assert scheduling.emulation.fire_due_schedules() == []


def test_a_pass_with_a_prefix_fires_only_those_schedules_and_leaves_the_others_for_a_later_pass(
    scheduling: Scheduling,
) -> None:
    past = at_expression(scheduling.emulation.now() - timedelta(minutes=1), LISBON)
    scheduling.create("mine-1", past)
    scheduling.create("theirs-1", past)
    assert [f.name for f in scheduling.emulation.fire_due_schedules(prefix="mine-")] == ["mine-1"]
    assert [f.name for f in scheduling.emulation.fire_due_schedules()] == ["theirs-1"]


def test_the_clock_offset_is_visible_through_runtime_clock(scheduling: Scheduling) -> None:
    before = runtime.clock()
    now = scheduling.emulation.advance_clock(timedelta(days=3, hours=2))
    assert now - before >= timedelta(days=3, hours=2)
    assert abs(runtime.clock() - scheduling.emulation.now()) < timedelta(seconds=1)
    with pytest.raises(ValueError, match="forward"):
        scheduling.emulation.advance_clock(timedelta(minutes=-1))


def test_a_deleted_schedule_never_fires(scheduling: Scheduling) -> None:
    scheduling.create("deleted", at_expression(scheduling.emulation.now() + timedelta(minutes=1), LISBON))
    scheduling.create(
        "deleted-rate", "rate(5 minutes)", StartDate=scheduling.emulation.now() + timedelta(hours=1)
    )
    scheduling.client.delete_schedule(Name="deleted", GroupName=GROUP)
    scheduling.client.delete_schedule(Name="deleted-rate", GroupName=GROUP)
    assert scheduling.advance(timedelta(hours=3)) == []
    assert scheduling.received == []


def test_a_disabled_schedule_does_not_fire_until_enabled(scheduling: Scheduling) -> None:
    expression = at_expression(scheduling.emulation.now() + timedelta(minutes=1), LISBON)
    scheduling.create("disabled", expression, State="DISABLED")
    assert scheduling.advance(timedelta(minutes=5)) == []
    scheduling.client.update_schedule(
        Name="disabled",
        GroupName=GROUP,
        ScheduleExpression=expression,
        FlexibleTimeWindow={"Mode": "OFF"},
        Target={"Arn": scheduling.target_arn, "RoleArn": "arn:aws:iam::123456789012:role/scheduler"},
        State="ENABLED",
    )
    assert [f.name for f in scheduling.emulation.fire_due_schedules()] == ["disabled"]


# ------------------------------------------------------------------ recurring schedules
def test_a_lisbon_cron_fires_at_eight_local_across_the_march_change(scheduling: Scheduling) -> None:
    year = scheduling.emulation.now().year + 1  # Portugal moves to summer time on the last Sunday of March
    last_sunday = max(
        datetime(year, 3, day, tzinfo=LISBON)
        for day in range(25, 32)
        if datetime(year, 3, day).weekday() == 6
    )
    friday, monday = last_sunday - timedelta(days=2), last_sunday + timedelta(days=1)
    scheduling.create("weekdays", "cron(0 8 ? * MON-FRI *)", ScheduleExpressionTimezone="Europe/Lisbon")
    # Months go by at once: only the most recent missed morning fires, once.
    (caught_up,) = scheduling.advance_to(friday.replace(hour=7))
    assert caught_up.scheduled_time == (friday - timedelta(days=1)).replace(hour=8)
    assert scheduling.advance_to(friday.replace(hour=7, minute=59)) == []
    (on_friday,) = scheduling.advance_to(friday.replace(hour=8, second=30))
    assert scheduling.advance_to(monday.replace(hour=7, minute=59)) == []  # the weekend, then 07:59 local
    (on_monday,) = scheduling.advance_to(monday.replace(hour=8, second=30))
    assert on_friday.scheduled_time == datetime(year, 3, friday.day, 8, tzinfo=UTC)  # WET is UTC+0
    assert on_monday.scheduled_time == datetime(year, 3, monday.day, 7, tzinfo=UTC)  # WEST is UTC+1
    assert [event["at"] for event, _ in scheduling.received[1:]] == [
        f"{year}-03-{friday.day:02d}T08:00:00Z",
        f"{year}-03-{monday.day:02d}T07:00:00Z",
    ]


def test_a_rate_fires_from_its_creation_and_only_the_latest_missed_occurrence(scheduling: Scheduling) -> None:
    scheduling.create("every-20", "rate(20 minutes)")
    (first,) = scheduling.emulation.fire_due_schedules()  # a rate schedule starts at once, as on AWS
    assert scheduling.advance(timedelta(minutes=10)) == []
    (woken,) = scheduling.advance(timedelta(hours=3))  # nine occurrences went by: one delivery
    assert woken.scheduled_time == first.scheduled_time + timedelta(minutes=180)
    assert scheduling.emulation.fire_due_schedules() == []
    (next_one,) = scheduling.advance(timedelta(minutes=20))
    assert next_one.scheduled_time == woken.scheduled_time + timedelta(minutes=20)


def test_a_recurring_schedule_with_delete_goes_after_its_last_occurrence(scheduling: Scheduling) -> None:
    start = scheduling.emulation.now().replace(microsecond=0) + timedelta(minutes=1)
    scheduling.create(
        "until-end",
        "rate(1 hour)",
        StartDate=start,
        EndDate=start + timedelta(hours=2),
        ActionAfterCompletion="DELETE",
    )
    assert [f.scheduled_time for f in scheduling.advance(timedelta(minutes=2))] == [start]
    assert [f.scheduled_time for f in scheduling.advance(timedelta(hours=1))] == [start + timedelta(hours=1)]
    assert scheduling.exists("until-end")
    assert [f.scheduled_time for f in scheduling.advance(timedelta(hours=1))] == [start + timedelta(hours=2)]
    assert not scheduling.exists("until-end")


# ------------------------------------------------------------------ delivery
def test_a_redelivered_occurrence_invokes_the_target_twice(scheduling: Scheduling) -> None:
    scheduling.create("twice", at_expression(scheduling.emulation.now() + timedelta(minutes=1), LISBON))
    (fired,) = scheduling.advance(timedelta(minutes=2))
    again = scheduling.emulation.redeliver(fired)
    assert again.redelivered and again.error is None and again.execution_id == fired.execution_id
    first, second = (event for event, _ in scheduling.received)
    assert first == second and first["at"] == fired.event["at"]
    assert scheduling.emulation.fired[-2:] == [fired, again]


def test_a_failing_target_is_retried_on_the_next_passes(scheduling: Scheduling) -> None:
    scheduling.failures = 1
    due = scheduling.emulation.now() + timedelta(minutes=1)
    scheduling.create("flaky", at_expression(due, LISBON), ActionAfterCompletion="DELETE")
    (failed,) = scheduling.advance(timedelta(minutes=2))
    assert failed.error == "RuntimeError: the target failed" and failed.attempt == 1
    assert scheduling.exists("flaky")  # deleted once delivered
    (retried,) = scheduling.emulation.fire_due_schedules()
    assert retried.error is None and retried.attempt == 2 and retried.scheduled_time == failed.scheduled_time
    assert retried.execution_id != failed.execution_id
    assert [event["attempt"] for event, _ in scheduling.received] == ["1", "2"]
    assert not scheduling.exists("flaky")
    assert scheduling.emulation.fire_due_schedules() == []


def test_retries_stop_after_the_retry_policy(scheduling: Scheduling) -> None:
    scheduling.failures = 10
    target = {
        "Input": CONTEXT_INPUT,
        "RetryPolicy": {"MaximumRetryAttempts": 1, "MaximumEventAgeInSeconds": 60},
    }
    scheduling.create("hopeless", at_expression(scheduling.emulation.now(), LISBON), Target=target)
    attempts = [f.attempt for _ in range(4) for f in scheduling.emulation.fire_due_schedules()]
    assert attempts == [1, 2]
    scheduling.failures = 0


def test_a_target_that_is_not_an_emulated_function_is_reported(scheduling: Scheduling) -> None:
    scheduling.create(
        "elsewhere",
        at_expression(scheduling.emulation.now(), LISBON),
        Target={"Arn": "arn:aws:sqs:us-east-1:123456789012:queue", "Input": "{}"},
    )
    (fired,) = scheduling.emulation.fire_due_schedules()
    assert fired.function is None and fired.error == "TargetNotEmulated"
    assert scheduling.emulation.fire_due_schedules() == []


def test_the_background_thread_fires_by_wall_clock(scheduling: Scheduling) -> None:
    scheduling.create("background", at_expression(scheduling.emulation.now() + timedelta(minutes=1), LISBON))
    scheduling.emulation.scheduler.start(interval=0.02)
    try:
        scheduling.emulation.advance_clock(timedelta(minutes=2))
        deadline = time.monotonic() + 10
        while not scheduling.received and time.monotonic() < deadline:
            time.sleep(0.01)
    finally:
        scheduling.emulation.scheduler.stop()
    assert len(scheduling.received) == 1 and scheduling.emulation.fired[-1].name == "background"


# ------------------------------------------------------------------ moto's Scheduler API, gaps closed
@pytest.mark.parametrize(
    ("expression", "timezone"),
    [
        ("at(2026-11-23 17:00)", "UTC"),
        ("cron(0 8 * * * *)", "UTC"),
        ("cron(0 8 L * ? *)", "UTC"),
        ("rate(5 minutes)", "Nowhere/City"),
    ],
)
def test_invalid_expressions_are_rejected(scheduling: Scheduling, expression: str, timezone: str) -> None:
    with pytest.raises(scheduling.client.exceptions.ValidationException):
        scheduling.create("invalid", expression, ScheduleExpressionTimezone=timezone)


def test_an_unknown_group_is_not_found(scheduling: Scheduling) -> None:
    with pytest.raises(scheduling.client.exceptions.ResourceNotFoundException):
        scheduling.client.create_schedule(
            Name="lost",
            GroupName="no-such-group",
            ScheduleExpression="rate(5 minutes)",
            FlexibleTimeWindow={"Mode": "OFF"},
            Target={"Arn": scheduling.target_arn, "RoleArn": "arn:aws:iam::123456789012:role/scheduler"},
        )


def test_create_and_update_keep_the_time_zone_and_the_action_after_completion(scheduling: Scheduling) -> None:
    scheduling.create(
        "kept",
        "cron(0 8 ? * MON-FRI *)",
        ScheduleExpressionTimezone="Europe/Lisbon",
        ActionAfterCompletion="DELETE",
    )
    stored = scheduling.client.get_schedule(Name="kept", GroupName=GROUP)
    assert (
        stored["ScheduleExpressionTimezone"] == "Europe/Lisbon"
        and stored["ActionAfterCompletion"] == "DELETE"
    )
    scheduling.client.update_schedule(
        Name="kept",
        GroupName=GROUP,
        ScheduleExpression="cron(30 9 ? * MON-FRI *)",
        ScheduleExpressionTimezone="America/New_York",
        FlexibleTimeWindow={"Mode": "OFF"},
        Target={"Arn": scheduling.target_arn, "RoleArn": "arn:aws:iam::123456789012:role/scheduler"},
        ActionAfterCompletion="NONE",
    )
    updated = scheduling.client.get_schedule(Name="kept", GroupName=GROUP)
    assert updated["ActionAfterCompletion"] == "NONE" and updated["State"] == "ENABLED"
    assert updated["ScheduleExpressionTimezone"] == "America/New_York"


def test_the_template_schedule_groups_are_created(scheduling: Scheduling) -> None:
    template = scheduling.emulation.template
    assert template.schedule_groups() == ["stepwise-local-reminders"]
    assert template.resolve({"Ref": "ReminderScheduleGroup"}) == "stepwise-local-reminders"
    names = {g["Name"] for g in scheduling.client.list_schedule_groups()["ScheduleGroups"]}
    assert "stepwise-local-reminders" in names
