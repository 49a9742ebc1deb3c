"""When a reminder fires, as an EventBridge Scheduler expression in the user's time zone.

One-time reminders become `at(...)` in local time; weekly or daily ones `cron(...)` in local time (so a
daylight-saving change does not shift them: 08:00 stays 08:00); intervals `rate(...)`. Everything a user
can get wrong (a past time, an unknown zone, too frequent a check-in) is a `TimingError` with a sentence to
pass on.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from stepwise.reminders.models import WEEKDAYS

if TYPE_CHECKING:
    from collections.abc import Sequence

    from stepwise.reminders.models import Weekday

MAX_DELAY_MINUTES = 525_600  # a year
_LOCAL = re.compile(r"^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2}))?$")
_CLOCK = re.compile(r"^([01]?\d|2[0-3]):([0-5]\d)$")
_DAY_NAMES = {
    "mon": "Monday",
    "tue": "Tuesday",
    "wed": "Wednesday",
    "thu": "Thursday",
    "fri": "Friday",
    "sat": "Saturday",
    "sun": "Sunday",
}


class TimingError(ValueError):
    """A time the user (or the model) gave that cannot be scheduled; the message says why."""


@dataclass(frozen=True)
class Timing:
    """A schedule: its expression (for the schedule's time zone), whether it fires once, and in words."""

    expression: str
    one_time: bool
    when: str


def zone(name: str) -> ZoneInfo:
    """The IANA zone, or a TimingError naming the problem ("Europe/Lisbon" is a zone, "CET+1" is not)."""
    cleaned = name.strip()
    if not cleaned or len(cleaned) > 64 or cleaned.startswith(("/", ".")) or ".." in cleaned:
        raise TimingError(f"{name!r} is not a time zone; use an IANA name such as Europe/Lisbon.")
    try:
        return ZoneInfo(cleaned)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        raise TimingError(
            f"{name!r} is not a time zone I know; use an IANA name such as Europe/Lisbon."
        ) from None


def local_now(now: datetime, tz: ZoneInfo) -> datetime:
    return now.astimezone(tz).replace(microsecond=0)


def describe_moment(moment: datetime) -> str:
    """ "Mon 23 Nov 2026 at 17:00" (the moment's own zone)."""
    return moment.strftime("%a %d %b %Y at %H:%M")


def parse_instant(iso: str) -> datetime | None:
    """A stored moment (ISO 8601, UTC `…Z` or with an offset) as an aware datetime; None when it is not one
    (no offset, or not a date-time)."""
    try:
        moment = datetime.fromisoformat(iso.replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo is not None else None


def describe_instant(iso: str, tz: ZoneInfo) -> str:
    """A stored moment (ISO 8601 UTC, `…Z`) as the chat writes moments, in `tz`: "Mon 23 Nov 2026 at 17:00
    (Europe/Lisbon)"; the text as given when it is not a moment."""
    moment = parse_instant(iso)
    if moment is None:
        return iso
    return f"{describe_moment(moment.astimezone(tz))} ({tz.key})"


def once_at(text: str, tz: ZoneInfo, now: datetime) -> Timing:
    """A one-time schedule at a local date-time "YYYY-MM-DDTHH:MM" (or with an offset, converted)."""
    moment = _parse_local(text, tz)
    return _once(moment, tz, now)


def once_in(minutes: int, tz: ZoneInfo, now: datetime) -> Timing:
    if not 1 <= minutes <= MAX_DELAY_MINUTES:
        raise TimingError(f"A delay runs from 1 minute to {MAX_DELAY_MINUTES} minutes (a year).")
    moment = local_now(now, tz) + timedelta(minutes=minutes)
    return _once(moment, tz, now)


def weekly(days: Sequence[Weekday], clock: str, tz: ZoneInfo) -> Timing:
    """Every given weekday (every day when none are given) at the local time "HH:MM"."""
    match = _CLOCK.match(clock.strip())
    if not match:
        raise TimingError(f"{clock!r} is not a time of day; give it as HH:MM, e.g. 08:30.")
    hour, minute = int(match.group(1)), int(match.group(2))
    chosen = [d for d in WEEKDAYS if d in set(days)]
    if not chosen or len(chosen) == 7:
        expression, which = f"cron({minute} {hour} * * ? *)", "every day"
    else:
        expression = f"cron({minute} {hour} ? * {','.join(d.upper() for d in chosen)} *)"
        which = "every weekday" if chosen == list(WEEKDAYS[:5]) else "every " + _join(chosen)
    return Timing(expression, one_time=False, when=f"{which} at {hour:02d}:{minute:02d} ({tz.key})")


def every(minutes: int, minimum: int, what: str = "a repeating reminder") -> Timing:
    """Every `minutes` minutes from now; `minimum` is the shortest interval allowed for `what`."""
    if minutes < minimum:
        raise TimingError(
            f"That is too often: {what} runs at most every {minimum} minutes, not every {minutes}."
        )
    if minutes > MAX_DELAY_MINUTES:
        raise TimingError(f"The longest interval is {MAX_DELAY_MINUTES} minutes (a year).")
    unit = "minute" if minutes == 1 else "minutes"
    words = (
        f"every {minutes // 60} hours" if minutes % 60 == 0 and minutes > 60 else f"every {minutes} {unit}"
    )
    if minutes == 60:
        words = "every hour"
    return Timing(f"rate({minutes} {unit})", one_time=False, when=words)


def interval_minutes(timing: Timing) -> int:
    """The shortest time between two firings, in minutes (a one-time schedule counts as a year)."""
    if timing.one_time:
        return MAX_DELAY_MINUTES
    if timing.expression.startswith("rate("):
        return int(timing.expression[5:].split()[0])
    return 24 * 60  # the cron expressions made here fire at most once a day


def _once(moment: datetime, tz: ZoneInfo, now: datetime) -> Timing:
    current = local_now(now, tz)
    if moment <= current:
        raise TimingError(
            f"{describe_moment(moment)} ({tz.key}) is in the past: it is now {describe_moment(current)}."
        )
    if moment - current > timedelta(minutes=MAX_DELAY_MINUTES):
        raise TimingError("That is more than a year ahead; set a reminder closer to the time.")
    local = moment.replace(tzinfo=None).isoformat(timespec="seconds")
    return Timing(f"at({local})", one_time=True, when=f"on {describe_moment(moment)} ({tz.key})")


def _parse_local(text: str, tz: ZoneInfo) -> datetime:
    cleaned = text.strip()
    match = _LOCAL.match(cleaned)
    if match:
        year, month, day, hour, minute = (int(match.group(i)) for i in range(1, 6))
        try:
            return datetime(year, month, day, hour, minute, int(match.group(6) or 0), tzinfo=tz)
        except ValueError as error:
            raise TimingError(f"{text!r} is not a date and time: {error}.") from None
    try:
        parsed = datetime.fromisoformat(cleaned)
    except ValueError:
        raise TimingError(f"{text!r} is not a date and time; give it as YYYY-MM-DDTHH:MM.") from None
    if parsed.tzinfo is None:
        return parsed.replace(tzinfo=tz)
    return parsed.astimezone(tz)


def _join(days: Sequence[Weekday]) -> str:
    names = [_DAY_NAMES[d] for d in days]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def utc_iso(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")
