"""AWS cron expressions (EventBridge Scheduler's six fields), evaluated in a time zone.

`cron(minutes hours day-of-month month day-of-week year)`: each field takes `*`, single values, lists
(`,`), ranges (`-`, wrapping around like `FRI-MON` or `22-2`) and increments (`/`, as in `0/15` or
`*/15`); months take JAN-DEC, days of the week SUN-SAT or 1-7 with 1 = Sunday. One of day-of-month and
day-of-week must be `?` (and only those take it). `L`, `W` and `#` are valid on AWS but not emulated: they
are rejected, so nothing silently fires at the wrong time.

Times are wall-clock times in the schedule's zone, as on AWS: 08:00 in Europe/Lisbon stays 08:00 local
across daylight-saving changes. A time that does not exist (in the spring-forward gap) is skipped, and a
time that exists twice (when clocks fall back) fires once, at its first instance: AWS documents both.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

MONTHS = ("JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC")
WEEKDAYS = ("SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT")
_PART = re.compile(r"^(?:(\*)|(\w+)(?:-(\w+))?)(?:/(\d+))?$")
_UNSUPPORTED = re.compile(r"^(?:L(?:-\d+)?|LW|\d+W|\w*L|\w+#\d+)$", re.IGNORECASE)  # L, W and #


class CronError(ValueError):
    """Not a cron expression the emulation can evaluate."""


@dataclass(frozen=True)
class _Field:
    name: str
    low: int
    high: int
    names: tuple[str, ...] = ()
    special: bool = False  # takes L, W or # on AWS

    def value(self, token: str) -> int:
        upper = token.upper()
        if upper in self.names:
            return self.names.index(upper) + self.low
        if not token.isdigit():
            raise CronError(f"{self.name}: {token!r} is not a value")
        number = int(token)
        if not self.low <= number <= self.high:
            raise CronError(f"{self.name}: {number} is outside {self.low}-{self.high}")
        return number

    def parse(self, text: str) -> frozenset[int]:
        values: set[int] = set()
        for part in text.split(","):
            if self.special and _UNSUPPORTED.match(part):
                raise CronError(f"{self.name}: {part!r} (L, W and #) is not supported by the local emulation")
            match = _PART.match(part)
            if not match:
                raise CronError(f"{self.name}: cannot read {part!r}")
            star, first, last, step = match.groups()
            start = self.low if star else self.value(first)
            end = self.high if star or (step and last is None) else self.value(last or first)
            increment = int(step) if step else 1
            if increment < 1:
                raise CronError(f"{self.name}: the increment must be positive")
            span = (end - start) % (self.high - self.low + 1)  # a range may wrap around (FRI-MON)
            for offset in range(0, span + 1, increment):
                values.add(self.low + (start - self.low + offset) % (self.high - self.low + 1))
        return frozenset(values)


MINUTE = _Field("minutes", 0, 59)
HOUR = _Field("hours", 0, 23)
DAY = _Field("day-of-month", 1, 31, special=True)
MONTH = _Field("month", 1, 12, MONTHS)
WEEKDAY = _Field("day-of-week", 1, 7, WEEKDAYS, special=True)
YEAR = _Field("year", 1970, 2199)


@dataclass(frozen=True)
class Cron:
    """A parsed AWS cron expression; `days` or `weekdays` is None for the field given as `?`."""

    minutes: frozenset[int]
    hours: frozenset[int]
    days: frozenset[int] | None
    months: frozenset[int]
    weekdays: frozenset[int] | None  # 1 = Sunday ... 7 = Saturday
    years: frozenset[int]

    @classmethod
    def parse(cls, fields: str) -> Cron:
        """Parse the six fields inside `cron(...)`."""
        parts = fields.split()
        if len(parts) != 6:
            raise CronError(f"a cron expression has 6 fields, not {len(parts)}: {fields!r}")
        minutes, hours, days, months, weekdays, years = parts
        if (days == "?") == (weekdays == "?"):
            raise CronError("exactly one of day-of-month and day-of-week must be '?'")
        if "?" in (minutes, hours, months, years):
            raise CronError("only day-of-month and day-of-week take '?'")
        return cls(
            minutes=MINUTE.parse(minutes),
            hours=HOUR.parse(hours),
            days=None if days == "?" else DAY.parse(days),
            months=MONTH.parse(months),
            weekdays=None if weekdays == "?" else WEEKDAY.parse(weekdays),
            years=YEAR.parse(years),
        )

    def matches_day(self, day: date) -> bool:
        if day.year not in self.years or day.month not in self.months:
            return False
        if self.days is not None:
            return day.day in self.days
        assert self.weekdays is not None
        return (day.weekday() + 1) % 7 + 1 in self.weekdays  # Python's Monday=0 to AWS's Monday=2

    def times(self) -> list[time]:
        """The wall-clock times of a matching day, earliest first."""
        return [time(hour, minute) for hour in sorted(self.hours) for minute in sorted(self.minutes)]

    def occurrences(self, after: datetime, until: datetime, zone: ZoneInfo) -> Iterator[datetime]:
        """The fire times in (after, until], earliest first, as UTC datetimes."""
        day, last = after.astimezone(zone).date(), until.astimezone(zone).date()
        times = self.times()
        while day <= last:
            if self.matches_day(day):
                for moment in filter(None, (_to_utc(day, wall, zone) for wall in times)):
                    if after < moment <= until:
                        yield moment
            day += timedelta(days=1)

    def latest(self, after: datetime, until: datetime, zone: ZoneInfo) -> datetime | None:
        """The last fire time in (after, until], as a UTC datetime, or None."""
        first, day = after.astimezone(zone).date(), until.astimezone(zone).date()
        times = self.times()[::-1]
        while day >= first:
            if self.matches_day(day):
                for moment in filter(None, (_to_utc(day, wall, zone) for wall in times)):
                    if moment <= after:
                        return None
                    if moment <= until:
                        return moment
            day -= timedelta(days=1)
        return None


def _to_utc(day: date, wall: time, zone: ZoneInfo) -> datetime | None:
    """A wall-clock time in a zone as UTC: its first instance if it happens twice, None if never (a gap)."""
    local = datetime.combine(day, wall, tzinfo=zone)  # fold=0: the earlier of two instances
    moment = local.astimezone(UTC)
    if moment.astimezone(zone).replace(tzinfo=None) != local.replace(tzinfo=None):
        return None
    return moment
