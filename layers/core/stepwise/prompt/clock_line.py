"""The user's local clock in the per-turn context: one line that is built here and read back here.

`Local time: 2026-11-23T14:05:00+00:00 (Monday, UTC)`: ISO 8601 with the UTC offset, the weekday and the IANA
zone name. The offline model reads it to place "at 5pm" or "tomorrow" in the user's day.
"""

import re
from datetime import UTC, datetime, tzinfo
from typing import NamedTuple
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

CLOCK_PREFIX = "Local time: "
# Compiled (and cached by `re`) when a line is first read back: only the offline model reads it.
_LINE = r"^Local time: (?P<stamp>\S+) \((?P<weekday>[A-Za-z]+), (?P<zone>[^()\s]+)\)\s*$"


class UserClock(NamedTuple):
    """The user's local now (aware, in their zone when it is known) and their IANA zone name."""

    now: datetime
    zone: str


def zone_name(moment: datetime) -> str:
    """The IANA name of `moment`'s zone: its ZoneInfo key, else UTC (a naive or fixed-offset time)."""
    key = getattr(moment.tzinfo, "key", None)
    return str(key) if key else "UTC"


def clock_line(now: datetime, zone: str | None = None) -> str:
    """The clock line for `now` (naive means UTC) seen in `zone` (default: `now`'s own zone)."""
    moment = now if now.tzinfo else now.replace(tzinfo=UTC)
    if zone is not None:
        moment = moment.astimezone(ZoneInfo(zone))
    name = zone or zone_name(moment)
    stamp = moment.isoformat(timespec="seconds")
    return f"{CLOCK_PREFIX}{stamp} ({moment.strftime('%A')}, {name})"


def parse_clock_line(text: str) -> UserClock | None:
    """The local clock of the first clock line in `text`, or None when there is none or it does not parse."""
    match = re.search(_LINE, text, re.M)
    if match is None:
        return None
    try:
        stamp = datetime.fromisoformat(match.group("stamp"))
    except ValueError:
        return None
    if stamp.tzinfo is None:
        return None
    zone = match.group("zone")
    return UserClock(now=stamp.astimezone(_zone_or(zone, stamp.tzinfo)), zone=zone)


def _zone_or(name: str, fallback: tzinfo) -> tzinfo:
    """The zone called `name`, or `fallback` (the line's own offset) when this machine does not know it."""
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        return fallback
