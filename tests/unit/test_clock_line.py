"""The user's local clock line in the per-turn context: built, read back, and part of the context block."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

from stepwise.prompt.clock_line import UserClock, clock_line, parse_clock_line
from stepwise.prompt.system import CONTEXT_HEADER, turn_context

NOW = datetime(2026, 11, 23, 14, 5, tzinfo=UTC)


def test_the_line_gives_iso_8601_with_offset_the_weekday_and_the_zone_name() -> None:
    assert clock_line(NOW) == "Local time: 2026-11-23T14:05:00+00:00 (Monday, UTC)"
    lisbon = NOW.astimezone(ZoneInfo("Europe/Lisbon"))
    assert clock_line(lisbon) == "Local time: 2026-11-23T14:05:00+00:00 (Monday, Europe/Lisbon)"
    assert clock_line(NOW, "Asia/Tokyo") == "Local time: 2026-11-23T23:05:00+09:00 (Monday, Asia/Tokyo)"
    assert clock_line(datetime(2026, 11, 23, 14, 5)) == clock_line(NOW), "a naive time is UTC"


def test_the_line_reads_back_as_the_users_local_now_in_their_zone() -> None:
    line = clock_line(NOW, "America/New_York")
    clock = parse_clock_line(f"some text\n{line}\nmore")
    assert clock == UserClock(now=NOW, zone="America/New_York")
    assert clock is not None and clock.now.hour == 9 and clock.now.tzinfo == ZoneInfo("America/New_York")


def test_a_zone_this_machine_does_not_know_keeps_the_lines_offset() -> None:
    clock = parse_clock_line("Local time: 2026-11-23T15:05:00+01:00 (Monday, Mars/Olympus)")
    assert clock is not None and clock.zone == "Mars/Olympus"
    assert clock.now == NOW
    assert clock.now.utcoffset() == timedelta(hours=1)


def test_no_line_or_a_broken_one_reads_as_none() -> None:
    assert parse_clock_line("The current date and time is 2026-11-23T14:05:00+00:00.") is None
    assert parse_clock_line("Local time: yesterday (Monday, UTC)") is None
    assert parse_clock_line("Local time: 2026-11-23T14:05:00 (Monday, UTC)") is None, "no offset"


def test_the_turn_context_carries_the_line_after_the_current_time() -> None:
    lisbon = NOW.astimezone(ZoneInfo("Europe/Lisbon"))
    context = turn_context(lisbon, ["## Memories\n- likes tea"])
    assert context.startswith(
        f"{CONTEXT_HEADER}\n## Now\nThe current date and time is 2026-11-23T14:05:00+00:00."
    )
    assert "\nLocal time: 2026-11-23T14:05:00+00:00 (Monday, Europe/Lisbon)\n" in context
    assert parse_clock_line(context) == UserClock(now=lisbon, zone="Europe/Lisbon")
    assert parse_clock_line(turn_context(NOW, zone="Asia/Tokyo")) == UserClock(now=NOW, zone="Asia/Tokyo")
