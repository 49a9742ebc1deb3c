"""Reminder timing: tool arguments to EventBridge Scheduler expressions in the user's zone."""

from __future__ import annotations

from datetime import UTC, datetime
from zoneinfo import ZoneInfo

import pytest

from stepwise.reminders.timing import TimingError, every, interval_minutes, once_at, once_in, weekly, zone

NOW = datetime(2026, 11, 23, 14, 5, 30, tzinfo=UTC)  # a Monday
LISBON = ZoneInfo("Europe/Lisbon")
NEW_YORK = ZoneInfo("America/New_York")


def test_a_local_time_becomes_a_one_time_schedule_in_the_users_zone() -> None:
    timing = once_at("2026-11-23T17:00", NEW_YORK, NOW)
    assert (timing.expression, timing.one_time) == ("at(2026-11-23T17:00:00)", True)
    assert timing.when == "on Mon 23 Nov 2026 at 17:00 (America/New_York)"


def test_a_time_with_an_offset_is_converted_to_the_users_zone() -> None:
    assert once_at("2026-11-23T22:00:00+00:00", NEW_YORK, NOW).expression == "at(2026-11-23T17:00:00)"


def test_a_delay_counts_from_now_in_the_users_zone() -> None:
    assert once_in(20, LISBON, NOW).expression == "at(2026-11-23T14:25:30)"
    assert once_in(60, NEW_YORK, NOW).expression == "at(2026-11-23T10:05:30)"


@pytest.mark.parametrize(
    ("when", "problem"),
    [
        ("2026-11-23T09:00", "in the past"),
        ("2026-11-23T14:05", "in the past"),
        ("2026-02-30T09:00", "not a date and time"),
        ("tomorrow", "not a date and time"),
        ("2028-01-01T09:00", "more than a year"),
    ],
)
def test_times_that_cannot_be_scheduled_say_why(when: str, problem: str) -> None:
    with pytest.raises(TimingError, match=problem):
        once_at(when, LISBON, NOW)


@pytest.mark.parametrize("minutes", [0, -5, 525_601])
def test_delays_out_of_range_are_refused(minutes: int) -> None:
    with pytest.raises(TimingError, match="delay runs from"):
        once_in(minutes, LISBON, NOW)


def test_weekly_schedules_are_cron_in_local_time_so_daylight_saving_does_not_shift_them() -> None:
    assert weekly(["mon"], "09:00", LISBON).expression == "cron(0 9 ? * MON *)"
    weekdays = weekly(["fri", "mon", "tue", "wed", "thu"], "8:00", LISBON)
    assert (weekdays.expression, weekdays.when) == (
        "cron(0 8 ? * MON,TUE,WED,THU,FRI *)",
        "every weekday at 08:00 (Europe/Lisbon)",
    )
    daily = weekly([], "07:30", LISBON)
    assert (daily.expression, daily.when, daily.one_time) == (
        "cron(30 7 * * ? *)",
        "every day at 07:30 (Europe/Lisbon)",
        False,
    )
    assert (
        weekly(["sat", "sun"], "10:15", LISBON).when == "every Saturday and Sunday at 10:15 (Europe/Lisbon)"
    )


@pytest.mark.parametrize("clock", ["24:00", "7", "07:60", "noon", ""])
def test_a_time_of_day_must_be_hh_mm(clock: str) -> None:
    with pytest.raises(TimingError, match="not a time of day"):
        weekly(["mon"], clock, LISBON)


def test_intervals_are_rates_with_a_floor() -> None:
    assert every(120, minimum=60).expression == "rate(120 minutes)"
    assert every(120, minimum=60).when == "every 2 hours"
    assert every(1, minimum=1).expression == "rate(1 minute)"
    with pytest.raises(TimingError, match="too often"):
        every(30, minimum=60)
    assert interval_minutes(every(90, minimum=1)) == 90
    assert interval_minutes(weekly([], "08:00", LISBON)) == 1440


@pytest.mark.parametrize("name", ["Mars/Olympus", "", "../../etc/passwd", "CET+1", "x" * 100])
def test_unknown_zones_are_refused(name: str) -> None:
    with pytest.raises(TimingError, match="time zone"):
        zone(name)


def test_known_zones_are_accepted() -> None:
    assert zone(" Europe/Lisbon ").key == "Europe/Lisbon"
    assert zone("UTC").key == "UTC"
