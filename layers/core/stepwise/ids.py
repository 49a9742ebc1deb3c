"""Identifiers and timestamps used in stored records."""

from __future__ import annotations

from datetime import UTC, datetime

from nanoid import generate


def new_id() -> str:
    """A nanoid (21 URL-safe characters)."""
    return str(generate())


def iso_utc(moment: datetime) -> str:
    """ISO 8601 in UTC with millisecond precision, e.g. 2026-11-22T05:12:00.123Z (sorts as text)."""
    return moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def utc_now() -> datetime:
    """The current time, timezone-aware UTC."""
    return datetime.now(UTC)
