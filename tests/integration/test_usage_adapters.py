"""The in-memory usage store behaves like its DynamoDB adapter (moto, the template's UsageTable)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from moto import mock_aws

from stepwise.usage.dynamodb import DynamoUsageStore
from stepwise.usage.models import UsageTotals
from stepwise_local.in_memory.usage import InMemoryUsageStore
from stepwise_local.template import Template

CALL = UsageTotals(
    input_tokens=10, output_tokens=2, cache_read_tokens=30, cache_write_tokens=4, cost_nano_usd=777, calls=1
)


@pytest.fixture(scope="module")
def table() -> Iterator[Any]:
    with mock_aws():
        resource = boto3.resource(
            "dynamodb", region_name="us-east-1", aws_access_key_id="testing", aws_secret_access_key="testing"
        )
        (spec,) = [t for t in Template().tables() if t.logical_id == "UsageTable"]
        name = "UsageAdaptersUsageTable"  # its own name: other suites share moto's backend
        resource.meta.client.create_table(**{**spec.create_args, "TableName": name})
        yield resource.Table(name)


@pytest.fixture(params=["memory", "dynamodb"])
def store(request: pytest.FixtureRequest, table: Any) -> Any:
    return InMemoryUsageStore() if request.param == "memory" else DynamoUsageStore(table, marker_ttl_days=7)


_users = iter(range(50_000, 60_000))


def test_a_call_adds_to_its_day_once(store: Any) -> None:
    user = next(_users)
    periods = ["day#2026-11-23"]
    assert store.add(user, "turn-1#0", periods, CALL) is True
    assert store.add(user, "turn-1#0", periods, CALL) is False, "a retried call adds nothing"
    assert store.add(user, "turn-1#1", periods, CALL) is True
    doubled = UsageTotals(
        input_tokens=20,
        output_tokens=4,
        cache_read_tokens=60,
        cache_write_tokens=8,
        cost_nano_usd=1554,
        calls=2,
    )
    assert store.totals(user, "day#2026-11-23") == doubled
    assert store.totals(user, "month#2026-11") == doubled
    assert store.totals(user, "day#2026-11-24") == UsageTotals()
    assert store.totals(next(_users), "day#2026-11-23") == UsageTotals()


def test_a_month_is_the_sum_of_its_days(store: Any) -> None:
    # Given calls on two days of November, one on 1 December and one on 31 October
    user = next(_users)
    for day in ("day#2026-11-01", "day#2026-11-30", "day#2026-12-01", "day#2026-10-31"):
        store.add(user, f"turn-{day}#0", [day], CALL)
    store.add(
        user,
        "turn-x#0",
        ["day#2026-11-30"],
        UsageTotals(input_tokens=1, calls=1, unpriced_models=frozenset({"x"})),
    )
    # Then November holds its two days (and the unpriced model), December one, and no other user's
    november = store.totals(user, "month#2026-11")
    assert (november.calls, november.input_tokens, november.cost_nano_usd) == (3, 21, 1554)
    assert november.unpriced_models == {"x"}
    assert store.totals(user, "month#2026-12").calls == 1
    assert store.totals(next(_users), "month#2026-11") == UsageTotals()


def test_unpriced_models_are_remembered_per_period(store: Any) -> None:
    user = next(_users)
    unpriced = UsageTotals(input_tokens=1, calls=1, unpriced_models=frozenset({"llama3.2"}))
    store.add(user, "turn-1#0", ["day#2026-11-23"], unpriced)
    store.add(user, "turn-2#0", ["day#2026-11-23"], CALL)
    store.add(
        user,
        "turn-3#0",
        ["day#2026-11-23"],
        UsageTotals(input_tokens=1, calls=1, unpriced_models=frozenset({"x"})),
    )
    assert store.totals(user, "day#2026-11-23").unpriced_models == {"llama3.2", "x"}


def test_a_range_of_days_is_read_at_once_with_only_its_days(store: Any) -> None:
    user = next(_users)
    for day in ("day#2026-10-28", "day#2026-10-29", "day#2026-11-27", "day#2026-11-28"):
        store.add(user, f"call-{day}", [day], CALL)
    store.add(next(_users), "someone-else", ["day#2026-11-01"], CALL)
    days = store.days(user, "day#2026-10-29", "day#2026-11-27")
    assert days == {"day#2026-10-29": CALL, "day#2026-11-27": CALL}
    assert store.days(user, "day#2026-11-01", "day#2026-11-26") == {}
