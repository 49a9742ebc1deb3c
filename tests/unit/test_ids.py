"""Stored records' identifiers and timestamps."""

import string
from datetime import UTC, datetime, timedelta, timezone

from stepwise.turn.ids import iso_utc, new_id

URL_SAFE = set(string.ascii_letters + string.digits + "-_")


def test_an_id_is_21_url_safe_characters() -> None:
    ids = [new_id() for _ in range(2000)]

    assert all(len(value) == 21 and set(value) <= URL_SAFE for value in ids)
    assert len(set(ids)) == len(ids)


def test_ids_use_the_whole_alphabet_in_every_position() -> None:
    # 2,000 ids: a position that never varied, or a character never drawn, would mean fewer random bits.
    ids = [new_id() for _ in range(2000)]

    assert all(len({value[position] for value in ids}) == 64 for position in range(21))


def test_a_moment_is_written_in_utc_with_milliseconds() -> None:
    lisbon_summer = timezone(timedelta(hours=1))

    assert iso_utc(datetime(2026, 7, 1, 13, 0, 0, 123456, tzinfo=lisbon_summer)) == "2026-07-01T12:00:00.123Z"
    assert iso_utc(datetime(2026, 11, 22, 5, 12, tzinfo=UTC)) == "2026-11-22T05:12:00.000Z"
