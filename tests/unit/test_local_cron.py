"""The emulation's evaluator of EventBridge Scheduler expressions: AWS cron fields, time zones, DST, rates."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from stepwise_local import schedule_expression
from stepwise_local.cron import Cron, CronError
from stepwise_local.schedule_expression import At, CronIn, Rate

LISBON = ZoneInfo("Europe/Lisbon")
NEW_YORK = ZoneInfo("America/New_York")


def utc(*fields: int) -> datetime:
    return datetime(*fields, tzinfo=UTC)  # type: ignore[misc]


def fire_times(fields: str, zone: ZoneInfo, start: datetime, span: timedelta) -> list[str]:
    """Local fire times (with their UTC offset) in (start, start + span]."""
    moments = Cron.parse(fields).occurrences(start, start + span, zone)
    return [m.astimezone(zone).strftime("%a %d %b %H:%M %z") for m in moments]


# ------------------------------------------------------------------ fields
@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        ("0 8 ? * MON-FRI *", ["Mon 23 Nov", "Tue 24 Nov", "Wed 25 Nov", "Thu 26 Nov", "Fri 27 Nov"]),
        ("0 8 ? * MON,WED,FRI *", ["Mon 23 Nov", "Wed 25 Nov", "Fri 27 Nov"]),
        ("0 8 ? * 1 *", ["Sun 29 Nov"]),  # 1 is Sunday, as on AWS
        ("0 8 ? * 2,7 *", ["Mon 23 Nov", "Sat 28 Nov"]),
        ("0 8 ? * FRI-MON *", ["Mon 23 Nov", "Fri 27 Nov", "Sat 28 Nov", "Sun 29 Nov"]),  # wraps around
        ("0 8 ? * sat-sun *", ["Sat 28 Nov", "Sun 29 Nov"]),
        ("0 8 24,26 * ? *", ["Tue 24 Nov", "Thu 26 Nov"]),
        (
            "0 8 * * ? *",
            [
                "Mon 23 Nov",
                "Tue 24 Nov",
                "Wed 25 Nov",
                "Thu 26 Nov",
                "Fri 27 Nov",
                "Sat 28 Nov",
                "Sun 29 Nov",
            ],
        ),
    ],
)
def test_days_of_the_week_and_of_the_month(fields: str, expected: list[str]) -> None:
    start = utc(2026, 11, 23, 0, 0)  # a Monday
    times = fire_times(fields, ZoneInfo("UTC"), start, timedelta(days=7))
    assert [t[:10] for t in times] == expected
    assert all(" 08:00 " in t for t in times)


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        ("0/15 9 * * ? *", ["09:00", "09:15", "09:30", "09:45"]),
        ("*/20 9 * * ? *", ["09:00", "09:20", "09:40"]),
        ("10-40/10 9 * * ? *", ["09:10", "09:20", "09:30", "09:40"]),
        ("5 9-11 * * ? *", ["09:05", "10:05", "11:05"]),
        ("0 22-1 * * ? *", ["00:00", "01:00", "22:00", "23:00"]),  # an hour range wrapping past midnight
        ("0 0/8 * * ? *", ["00:00", "08:00", "16:00"]),
    ],
)
def test_lists_ranges_and_increments(fields: str, expected: list[str]) -> None:
    start = utc(2026, 11, 23, 0, 0) - timedelta(seconds=1)
    times = fire_times(fields, ZoneInfo("UTC"), start, timedelta(days=1))
    assert [t[10:16].strip() for t in times] == expected


def test_months_years_and_short_months() -> None:
    cron = Cron.parse("0 12 31 JAN-MAR,dec ? 2027")
    moments = list(cron.occurrences(utc(2026, 1, 1), utc(2029, 1, 1), ZoneInfo("UTC")))
    assert moments == [utc(2027, 1, 31, 12), utc(2027, 3, 31, 12), utc(2027, 12, 31, 12)]


@pytest.mark.parametrize(
    "fields",
    [
        "0 8 * * * *",  # neither day field is ?
        "0 8 ? * ? *",  # both are
        "0 8 * * MON",  # five fields
        "0 8 ? * MON * extra",
        "60 8 * * ? *",
        "0 24 * * ? *",
        "0 8 32 * ? *",
        "0 8 ? * 0 *",  # days of the week are 1-7
        "0 8 ? * 8 *",
        "0 8 * 13 ? *",
        "0 8 * * ? 1969",
        "0 8 * * ? 2200",
        "0 8 * FOO ? *",
        "0 8 ? * MON/0 *",
        "? 8 * * ? *",
        "0 8 * * ? ?",
    ],
)
def test_invalid_expressions_are_rejected(fields: str) -> None:
    with pytest.raises(CronError):
        Cron.parse(fields)


@pytest.mark.parametrize(
    "fields", ["0 8 L * ? *", "0 8 LW * ? *", "0 8 15W * ? *", "0 8 ? * 6L *", "0 8 ? * 3#2 *"]
)
def test_l_w_and_hash_are_not_emulated(fields: str) -> None:
    with pytest.raises(CronError, match="not supported by the local emulation"):
        Cron.parse(fields)


# ------------------------------------------------------------------ time zones and daylight saving
def test_lisbon_mornings_stay_at_eight_local_across_the_march_change() -> None:
    # Portugal moves from WET (UTC+0) to WEST (UTC+1) on Sunday 29 March 2026.
    moments = list(Cron.parse("0 8 ? * MON-FRI *").occurrences(utc(2026, 3, 26), utc(2026, 4, 1), LISBON))
    assert moments == [
        utc(2026, 3, 26, 8),
        utc(2026, 3, 27, 8),
        utc(2026, 3, 30, 7),
        utc(2026, 3, 31, 7),
    ]
    assert {m.astimezone(LISBON).strftime("%H:%M") for m in moments} == {"08:00"}


def test_lisbon_mornings_stay_at_eight_local_across_the_october_change() -> None:
    times = fire_times(
        "0 8 ? * MON-FRI *", LISBON, utc(2026, 10, 22), timedelta(days=7)
    )  # back to WET on 25 October
    assert times == [
        "Thu 22 Oct 08:00 +0100",
        "Fri 23 Oct 08:00 +0100",
        "Mon 26 Oct 08:00 +0000",
        "Tue 27 Oct 08:00 +0000",
        "Wed 28 Oct 08:00 +0000",
    ]


def test_new_york_across_both_changes() -> None:
    spring = fire_times(
        "0 9 ? * SUN *", NEW_YORK, utc(2026, 3, 1), timedelta(days=14)
    )  # DST starts Sunday 8 March
    assert spring == ["Sun 01 Mar 09:00 -0500", "Sun 08 Mar 09:00 -0400"]
    autumn = fire_times(
        "0 9 ? * SUN *", NEW_YORK, utc(2026, 10, 25), timedelta(days=15)
    )  # and ends Sunday 1 November
    assert autumn == ["Sun 25 Oct 09:00 -0400", "Sun 01 Nov 09:00 -0500", "Sun 08 Nov 09:00 -0500"]


def test_a_time_in_the_spring_forward_gap_is_skipped_that_day() -> None:
    # 02:30 does not exist in New York on 8 March 2026 (02:00 EST becomes 03:00 EDT): AWS skips it.
    times = fire_times("30 2 * * ? *", NEW_YORK, utc(2026, 3, 7), timedelta(days=3))
    assert times == ["Sat 07 Mar 02:30 -0500", "Mon 09 Mar 02:30 -0400"]
    hourly = fire_times("30 * * * ? *", NEW_YORK, utc(2026, 3, 8, 5), timedelta(hours=4))
    assert [t[10:] for t in hourly] == [" 00:30 -0500", " 01:30 -0500", " 03:30 -0400", " 04:30 -0400"]


def test_a_time_repeated_when_clocks_fall_back_fires_once() -> None:
    # 01:30 happens twice in New York on 1 November 2026: AWS runs the schedule once, at the first.
    moments = list(Cron.parse("30 1 * * ? *").occurrences(utc(2026, 11, 1), utc(2026, 11, 2), NEW_YORK))
    assert moments == [utc(2026, 11, 1, 5, 30)]  # 01:30 EDT
    hourly = fire_times("0 * * * ? *", NEW_YORK, utc(2026, 11, 1, 3), timedelta(hours=4))
    assert [t[10:] for t in hourly] == [" 00:00 -0400", " 01:00 -0400", " 02:00 -0500"]  # no second 01:00


# ------------------------------------------------------------------ the latest occurrence (missed firings)
def test_latest_is_the_most_recent_occurrence_in_the_window() -> None:
    cron = Cron.parse("0 8 ? * MON-FRI *")
    assert cron.latest(utc(2026, 3, 26), utc(2026, 3, 31, 12), LISBON) == utc(2026, 3, 31, 7)
    assert cron.latest(utc(2026, 3, 27, 9), utc(2026, 3, 30, 6, 59), LISBON) is None  # the weekend
    assert cron.latest(utc(2026, 3, 31, 7), utc(2026, 3, 31, 12), LISBON) is None  # `after` is excluded
    assert cron.latest(utc(2026, 3, 31, 6), utc(2026, 3, 31, 7), LISBON) == utc(2026, 3, 31, 7)


def test_latest_and_occurrences_agree() -> None:
    cron = Cron.parse("15/20 */3 ? * TUE,THU,SAT *")
    after, until = utc(2026, 10, 20), utc(2026, 11, 3)
    every = list(cron.occurrences(after, until, NEW_YORK))
    assert len(every) > 20
    for moment in every:
        assert cron.latest(after, moment + timedelta(seconds=59), NEW_YORK) == moment


# ------------------------------------------------------------------ the three kinds of expression
def test_at_is_a_wall_clock_time_in_the_schedule_zone() -> None:
    assert schedule_expression.parse("at(2026-11-23T17:00:00)", "Europe/Lisbon") == At(utc(2026, 11, 23, 17))
    assert schedule_expression.parse("at(2026-07-23T17:00:00)", "Europe/Lisbon") == At(utc(2026, 7, 23, 16))
    assert schedule_expression.parse("at(2026-07-23T17:00:00)") == At(utc(2026, 7, 23, 17))  # UTC default
    in_gap = schedule_expression.parse("at(2026-03-08T02:30:00)", "America/New_York")
    assert in_gap == At(utc(2026, 3, 8, 7, 30))  # read as EST: 03:30 EDT


def test_at_happens_once() -> None:
    at = schedule_expression.parse("at(2026-11-23T17:00:00)")
    assert at.one_time
    assert at.latest(utc(2026, 11, 23), utc(2026, 11, 24), utc(2026, 11, 1)) == utc(2026, 11, 23, 17)
    assert at.latest(utc(2026, 11, 23), utc(2026, 11, 23, 16, 59), utc(2026, 11, 1)) is None


def test_rate_counts_from_the_start_including_the_start_itself() -> None:
    rate = schedule_expression.parse("rate(90 minutes)", "Europe/Lisbon")
    assert rate == Rate(timedelta(minutes=90)) and not rate.one_time
    start = utc(2026, 11, 23, 10, 0, 7)
    assert rate.latest(start - timedelta(seconds=1), start, start) == start
    assert rate.latest(start, start + timedelta(minutes=89), start) is None
    assert rate.latest(start, start + timedelta(hours=4), start) == start + timedelta(minutes=180)
    assert rate.latest(start, start - timedelta(hours=1), start) is None
    assert schedule_expression.parse("rate(1 hour)") == Rate(timedelta(hours=1))
    assert schedule_expression.parse("rate(2 days)") == Rate(timedelta(hours=48))  # days are 24 hours


def test_cron_expressions_carry_their_zone() -> None:
    parsed = schedule_expression.parse("cron(0 8 ? * MON-FRI *)", "Europe/Lisbon")
    assert isinstance(parsed, CronIn) and parsed.zone == LISBON and not parsed.one_time


@pytest.mark.parametrize(
    ("expression", "timezone"),
    [
        ("at(2026-11-23 17:00:00)", None),
        ("at(2026-11-23T17:00)", None),
        ("rate(0 minutes)", None),
        ("rate(5 weeks)", None),
        ("rate(-5 minutes)", None),
        ("cron(0 8 * * * *)", None),
        ("every day", None),
        ("rate(5 minutes)", "Mars/Olympus_Mons"),
    ],
)
def test_invalid_schedule_expressions(expression: str, timezone: str | None) -> None:
    with pytest.raises(ValueError):
        schedule_expression.parse(expression, timezone)
