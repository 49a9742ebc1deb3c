"""When a reminder fires next (stepwise.reminders.next_firing), for every expression the timing makes, in
the reminder's zone; the Mini App shows it, and list_reminders gives it as `next_at`."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from stepwise.reminders.next_firing import next_firing
from stepwise.reminders.timing import every, once_at, weekly, zone

NOW = datetime(2026, 11, 27, 10, 30, tzinfo=UTC)  # a Friday; 11:30 in Europe/Paris, 10:30 in Lisbon


@pytest.mark.parametrize(
    ("expression", "timezone", "created_at", "expected"),
    [
        ("at(2026-11-27T18:00:00)", "Europe/Paris", "", "2026-11-27T18:00+01:00"),
        ("at(2026-11-27T11:00:00)", "Europe/Paris", "", None),  # passed: 11:30 there now
        ("cron(0 8 * * ? *)", "Europe/Lisbon", "", "2026-11-28T08:00+00:00"),  # 08:00 today has passed
        ("cron(45 10 * * ? *)", "Europe/Lisbon", "", "2026-11-27T10:45+00:00"),
        ("cron(0 9 ? * MON,WED *)", "America/New_York", "", "2026-11-30T09:00-05:00"),
        ("cron(0 6 ? * FRI *)", "America/New_York", "", "2026-11-27T06:00-05:00"),  # 05:30 there now
        ("rate(90 minutes)", "UTC", "2026-11-27T08:00:00.000Z", "2026-11-27T11:00+00:00"),
        ("rate(1 day)", "Asia/Tokyo", "2026-11-20T12:00:00.000Z", "2026-11-27T21:00+09:00"),
        ("cron(not ours)", "UTC", "", None),
    ],
)
def test_the_next_time_in_the_reminders_zone(
    expression: str, timezone: str, created_at: str, expected: str | None
) -> None:
    moment = next_firing(expression, timezone, created_at, NOW)
    assert (moment.isoformat(timespec="minutes") if moment else None) == expected


def test_every_expression_the_timing_makes_has_a_next_time() -> None:
    paris = zone("Europe/Paris")
    made = [
        once_at("2026-12-24T18:00", paris, NOW),
        weekly([], "07:15", paris),
        weekly(["sat", "sun"], "09:00", paris),
        every(120, 60),
    ]
    for timing in made:
        moment = next_firing(timing.expression, "Europe/Paris", "2026-11-27T10:00:00.000Z", NOW)
        assert moment is not None and moment >= NOW, timing
