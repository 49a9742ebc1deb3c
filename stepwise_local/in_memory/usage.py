"""An in-memory UsageStore for unit tests."""

from __future__ import annotations

from stepwise.usage.models import UsageTotals, days_prefix


class InMemoryUsageStore:
    """Counters in a dict; `counted` holds the call keys already added."""

    def __init__(self) -> None:
        self.periods: dict[tuple[int, str], UsageTotals] = {}
        self.counted: set[tuple[int, str]] = set()

    def add(self, user_id: int, call_key: str, periods: list[str], used: UsageTotals) -> bool:
        if (user_id, call_key) in self.counted:
            return False
        self.counted.add((user_id, call_key))
        for period in periods:
            self.periods[(user_id, period)] = self.periods.get((user_id, period), UsageTotals()).plus(used)
        return True

    def days(self, user_id: int, first: str, last: str) -> dict[str, UsageTotals]:
        return {
            key: counted
            for (user, key), counted in self.periods.items()
            if user == user_id and key.startswith("day#") and first <= key <= last
        }

    def totals(self, user_id: int, period: str, *, consistent: bool = True) -> UsageTotals:
        if not period.startswith("month#"):
            return self.periods.get((user_id, period), UsageTotals())
        total = UsageTotals()
        for (user, key), counted in self.periods.items():
            if user == user_id and key.startswith(days_prefix(period)):
                total = total.plus(counted)
        return total
