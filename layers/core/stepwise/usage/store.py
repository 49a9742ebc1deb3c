"""The port for usage counters."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from stepwise.usage.models import UsageTotals


class UsageStore(Protocol):
    """Per-user counters by period. Implementations: DynamoDB (UsageTable), and in memory for tests."""

    def add(self, user_id: int, call_key: str, periods: list[str], used: UsageTotals) -> bool:
        """Add one call's usage to each period's counters, once per `call_key`: False (nothing added) when
        that call was counted already."""
        ...

    def totals(self, user_id: int, period: str, *, consistent: bool = True) -> UsageTotals:
        """The user's counters of one period (zeros when nothing was counted): a day (`day#2026-11-23`), or a
        month (`month#2026-11`), which is the sum of its days. `consistent` False allows a read that may miss
        the last second's writes (half the price on DynamoDB): enough for the daily budget's check."""
        ...

    def days(self, user_id: int, first: str, last: str) -> dict[str, UsageTotals]:
        """The user's day counters from day key `first` to `last` (`day#2026-10-29`, both included), by key;
        days without a counter are left out (the Mini App's chart, in one read)."""
        ...
