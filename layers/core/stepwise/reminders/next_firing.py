"""When a reminder fires next, from its schedule's expression (the forms `stepwise.reminders.timing` makes):
`at(...)` once, `cron(M H * * ? *)` daily, `cron(M H ? * MON,FRI *)` on weekdays, all in the reminder's zone,
and `rate(N unit)` every N units from the schedule's creation, as EventBridge Scheduler runs them."""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

_AT = re.compile(r"^at\((\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2})?)\)$")
_CRON = re.compile(r"^cron\((\d{1,2}) (\d{1,2}) (?:\* \* \?|\? \* ([A-Z,]+)) \*\)$")
_RATE = re.compile(r"^rate\((\d+) (minute|minutes|hour|hours|day|days)\)$")
_DAYS = ("MON", "TUE", "WED", "THU", "FRI", "SAT", "SUN")
_UNIT_MINUTES = {"minute": 1, "hour": 60, "day": 1440}


def next_firing(expression: str, timezone: str, created_at: str, now: datetime) -> datetime | None:
    """The first time at or after `now` the reminder fires, in its zone; None when it will not fire again (a
    one-time reminder whose time has passed) or the expression is not one Stepwise makes."""
    tz = ZoneInfo(timezone)
    local_now = now.astimezone(tz)
    if match := _AT.match(expression):
        moment = datetime.fromisoformat(match.group(1)).replace(tzinfo=tz)
        return moment if moment >= local_now else None
    if match := _CRON.match(expression):
        minute, hour = int(match.group(1)), int(match.group(2))
        days = {_DAYS.index(day) for day in match.group(3).split(",")} if match.group(3) else set(range(7))
        for ahead in range(8):
            day = (local_now + timedelta(days=ahead)).date()
            moment = datetime(day.year, day.month, day.day, hour, minute, tzinfo=tz)
            if day.weekday() in days and moment >= local_now:
                return moment
        return None
    if match := _RATE.match(expression):
        step = timedelta(minutes=int(match.group(1)) * _UNIT_MINUTES[match.group(2).rstrip("s")])
        start = datetime.fromisoformat(created_at.replace("Z", "+00:00"))
        if step <= timedelta(0):
            return None
        passed = max(0, (now - start) // step + 1)
        return (start + passed * step).astimezone(tz)
    return None
