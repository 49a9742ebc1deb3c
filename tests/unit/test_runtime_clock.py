"""runtime.clock(): the real clock unless one is installed (the local emulation installs its own)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest

from stepwise import runtime
from stepwise.turn import ids

FIXED = datetime(2026, 11, 23, 17, 0, tzinfo=UTC)


@pytest.fixture(autouse=True)
def no_clock_installed() -> Iterator[None]:
    """No clock installed during the test, and whatever was installed before (a running emulation's, in a
    session that runs the integration tests too) installed again after it."""
    before = runtime._clock
    runtime.install_clock(None)
    yield
    runtime.install_clock(before)


def test_by_default_the_clock_is_the_real_one() -> None:
    before = ids.utc_now()
    now = runtime.clock()
    assert before <= now <= ids.utc_now() and now.tzinfo is not None


def test_an_installed_clock_is_used_and_survives_reset() -> None:
    runtime.install_clock(lambda: FIXED)
    runtime.reset()
    assert runtime.clock() == FIXED


def test_installing_none_restores_the_real_clock() -> None:
    runtime.install_clock(lambda: FIXED + timedelta(days=3650))
    runtime.install_clock(None)
    assert abs(runtime.clock() - ids.utc_now()) < timedelta(seconds=5)


def test_the_default_reads_utc_now_when_called(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ids, "utc_now", lambda: FIXED)
    assert runtime.clock() == FIXED
