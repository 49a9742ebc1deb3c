"""Honouring the API's `retry-after`: how long CallModel asks the state machine to wait, and how often."""

from __future__ import annotations

import math
from collections.abc import Mapping
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

RATE_LIMIT_STATUS = frozenset({429, 529})
MAX_WAIT_SECONDS = 60  # one wait is at most a minute; a longer retry-after is waited in several
MAX_WAITS = 3  # waits per turn; past them the usual retries with backoff, then the fallback, take over


def retry_after_seconds(headers: Mapping[str, str], now: datetime | None = None) -> float | None:
    """The wait the API asks for: `retry-after-ms`, else `retry-after` in seconds or as an HTTP date; None
    when there is none or it cannot be read."""
    lowered = {key.lower(): value for key, value in headers.items()}
    milliseconds = _number(lowered.get("retry-after-ms"))
    if milliseconds is not None:
        return milliseconds / 1000
    value = lowered.get("retry-after")
    seconds = _number(value)
    if seconds is not None or not value:
        return seconds
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - (now or datetime.now(UTC))).total_seconds())


def wait_seconds(retry_after: float) -> int:
    """Whole seconds to wait: at least `retry_after` (and 1), at most MAX_WAIT_SECONDS."""
    return max(1, min(MAX_WAIT_SECONDS, math.ceil(retry_after)))


def _number(value: str | None) -> float | None:
    try:
        number = float(value) if value is not None else None
    except ValueError:
        return None
    return number if number is not None and math.isfinite(number) and number >= 0 else None
