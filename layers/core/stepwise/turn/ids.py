"""Identifiers and timestamps used in stored records."""

from __future__ import annotations

import secrets
from datetime import UTC, datetime


def new_id() -> str:
    """21 random URL-safe characters (126 bits), the shape of a nanoid: the first 21 characters of 16 random
    bytes in URL-safe base64 each carry 6 random bits."""
    return secrets.token_urlsafe(16)[:21]


def iso_utc(moment: datetime) -> str:
    """ISO 8601 in UTC with millisecond precision, e.g. 2026-11-22T05:12:00.123Z (sorts as text)."""
    return moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def utc_now() -> datetime:
    """The current time, timezone-aware UTC."""
    return datetime.now(UTC)
