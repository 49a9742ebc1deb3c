"""EventBridge Scheduler's schedule expressions: `at(...)`, `cron(...)` and `rate(...)`, with their time zone.

- `at(yyyy-mm-ddThh:mm:ss)`: once, at that wall-clock time in the zone. A time in a spring-forward gap is
  read with the offset before the change (02:30 on the day New York springs forward is 03:30 EDT): AWS does
  not document this case.
- `cron(...)`: see stepwise_local.cron.
- `rate(n minutes|hours|days)` (singular units too): every n units, counted from the schedule's start (its
  StartDate, else its creation), the first time at the start itself, as AWS documents. A day is 24 hours,
  whatever daylight saving does, as AWS documents.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from stepwise_local.cron import Cron

_AT = re.compile(r"^at\((\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})\)$")
_RATE = re.compile(r"^rate\((\d+) (minute|hour|day)s?\)$")
_CRON = re.compile(r"^cron\((.*)\)$")
_UNITS = {"minute": timedelta(minutes=1), "hour": timedelta(hours=1), "day": timedelta(days=1)}


@dataclass(frozen=True)
class At:
    """A one-time schedule's moment, in UTC."""

    moment: datetime
    one_time = True

    def latest(self, after: datetime, until: datetime, start: datetime) -> datetime | None:
        return self.moment if after < self.moment <= until else None


@dataclass(frozen=True)
class Rate:
    """A fixed interval, counted from the schedule's start."""

    every: timedelta
    one_time = False

    def latest(self, after: datetime, until: datetime, start: datetime) -> datetime | None:
        if until < start:
            return None
        moment = start + (until - start) // self.every * self.every
        return moment if moment > after else None


@dataclass(frozen=True)
class CronIn:
    """A cron expression evaluated in a time zone."""

    cron: Cron
    zone: ZoneInfo
    one_time = False

    def latest(self, after: datetime, until: datetime, start: datetime) -> datetime | None:
        return self.cron.latest(after, until, self.zone)


Expression = At | Rate | CronIn


def zone(name: str | None) -> ZoneInfo:
    """The IANA time zone of a schedule (UTC when none is given)."""
    try:
        return ZoneInfo(name or "UTC")
    except (ZoneInfoNotFoundError, ValueError) as error:
        raise ValueError(f"unknown time zone {name!r}") from error


def parse(expression: str, timezone: str | None = None) -> Expression:
    """Parse a ScheduleExpression with its ScheduleExpressionTimezone; ValueError if it is not valid."""
    tz = zone(timezone)
    if match := _AT.match(expression):
        local = datetime.fromisoformat(match.group(1)).replace(tzinfo=tz)
        return At(local.astimezone(UTC))
    if match := _RATE.match(expression):
        value = int(match.group(1))
        if value < 1:
            raise ValueError(f"the rate must be positive: {expression!r}")
        return Rate(value * _UNITS[match.group(2)])
    if match := _CRON.match(expression):
        return CronIn(Cron.parse(match.group(1)), tz)
    raise ValueError(f"not a schedule expression: {expression!r}")
