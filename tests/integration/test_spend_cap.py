"""Spend cap and usage through the real state machine: the daily budget, usage counted once per model step
(even when CallModel is retried after a crash), and the API's retry-after waited out by a Wait state."""

from __future__ import annotations

import json
from typing import Any

from boto3.dynamodb.conditions import Key
from support.stack import Stack

from stepwise.config import DEFAULT_DAILY_TOKEN_BUDGET
from stepwise.model.rate_limits import MAX_WAITS
from stepwise.states.deliver import FRIENDLY_ERROR
from stepwise.usage.dynamodb import DynamoUsageStore
from stepwise.usage.models import UsageTotals, day_key
from stepwise_local.anthropic_server import rate_limited, text


def counters(stack: Stack, user: int) -> dict[str, dict[str, Any]]:
    """The user's usage items by sort key (day#…, month#…, call#…)."""
    table = stack.emulation.table("UsageTable")
    items = table.query(KeyConditionExpression=Key("user_id").eq(user), ConsistentRead=True)["Items"]
    return {str(item["sk"]): item for item in items}


def today(stack: Stack, user: int) -> dict[str, Any]:
    (day,) = [item for sk, item in counters(stack, user).items() if sk.startswith("day#")]
    return day


def waits(stack: Stack, execution: dict[str, Any]) -> list[int]:
    """The seconds of each rate-limit Wait state the execution went through."""
    events = stack.emulation.history(execution["name"])
    return [
        json.loads(e["stateEnteredEventDetails"]["input"])["next"]["wait_seconds"]
        for e in events
        if e["type"] == "WaitStateEntered"
    ]


def test_each_model_call_is_counted_for_the_user_today_and_this_month(stack: Stack) -> None:
    user = stack.new_user()
    stack.say(user, "hello")
    stack.say(user, "again")
    items = counters(stack, user)
    (day,) = [item for sk, item in items.items() if sk.startswith("day#")]
    assert not [sk for sk in items if sk.startswith("month#")], "a month is the sum of its days: no item"
    assert len([sk for sk in items if sk.startswith("call#")]) == 2
    usages = stack.anthropic.usages
    month = DynamoUsageStore(stack.emulation.table("UsageTable"), marker_ttl_days=1).totals(
        user, "month#" + str(day["sk"])[4:11]
    )
    assert int(day["calls"]) == month.calls == 2
    assert int(day["input_tokens"]) == sum(u["input_tokens"] for u in usages)
    assert int(day["output_tokens"]) == sum(u["output_tokens"] for u in usages)
    assert int(day["cost_nano_usd"]) > 0 and "expires_at" in day


def test_a_user_over_the_daily_budget_is_told_when_it_resets_and_no_model_request_is_made(
    stack: Stack,
) -> None:
    stack.emulation.config.env["DAILY_TOKEN_BUDGET"] = "100"
    user = stack.new_user()
    stack.say(user, "hello")
    assert len(stack.anthropic.requests) == 1
    stack.say(user, "are you there?")
    assert len(stack.anthropic.requests) == 1, "no model request past the budget"
    first, refused = stack.replies(user)
    assert first == "You said: hello"
    assert "today's usage limit" in refused and "of 100 tokens" in refused
    assert "resets at midnight UTC" in refused
    stored = [(m["role"], m["content"]) for m in stack.stored(user)]
    assert stored[-1] == ("assistant", refused), "the budget message is stored like any reply"


def test_the_default_budget_refuses_a_turn_past_it_and_usage_shows_the_cap(stack: Stack) -> None:
    """No DAILY_TOKEN_BUDGET given: the template's default (DEFAULT_DAILY_TOKEN_BUDGET) caps the day."""
    assert "DAILY_TOKEN_BUDGET" not in stack.emulation.config.env
    user = stack.new_user()
    store = DynamoUsageStore(stack.emulation.table("UsageTable"), marker_ttl_days=1)
    now = stack.emulation.now()
    spent = UsageTotals(input_tokens=DEFAULT_DAILY_TOKEN_BUDGET - 10, calls=1)
    store.add(user, "earlier#0", [day_key(now)], spent)
    stack.say(user, "hello")  # 10 tokens short of the cap: this turn runs (and goes past it)
    assert stack.replies(user) == ["You said: hello"]
    requests = len(stack.anthropic.requests)
    stack.say(user, "and again?")
    assert len(stack.anthropic.requests) == requests, "no model request past the default budget"
    refused = stack.replies(user)[-1]
    assert "today's usage limit" in refused and "of 1,000,000 tokens" in refused
    stack.say(user, "/usage")
    assert "of 1,000,000 tokens (100%), resets at midnight UTC" in stack.replies(user)[-1]


def test_usage_is_counted_once_when_call_model_is_retried_after_a_crash(stack: Stack) -> None:
    user = stack.new_user()
    stack.emulation.crash("CallModelFunction", "after")
    stack.say(user, "hello")
    assert stack.replies(user) == ["You said: hello"]
    assert len(stack.anthropic.requests) == 2, "the retry called the model again"
    day = today(stack, user)
    assert int(day["calls"]) == 1
    assert int(day["input_tokens"]) == stack.anthropic.usages[0]["input_tokens"]


def test_a_429_with_retry_after_is_waited_out_by_the_state_machine_then_answered(stack: Stack) -> None:
    user = stack.new_user()
    stack.anthropic.script(rate_limited("7"), rate_limited("0.2", status=529), text("Here I am"))
    execution = stack.say(user, "hello")
    assert stack.replies(user) == ["Here I am"]
    assert len(stack.anthropic.requests) == 3
    assert waits(stack, execution) == [7, 1], "at least what retry-after said, in whole seconds"
    assert int(today(stack, user)["calls"]) == 1, "rate-limited calls cost nothing"


def test_a_retry_after_longer_than_a_minute_waits_a_minute(stack: Stack) -> None:
    user = stack.new_user()
    stack.anthropic.script(rate_limited("3600"), text("Back"))
    execution = stack.say(user, "hello")
    assert waits(stack, execution) == [60]
    assert stack.replies(user) == ["Back"]


def test_rate_limit_waits_are_bounded_per_turn_then_the_usual_retries_and_error_reply(stack: Stack) -> None:
    user = stack.new_user()
    stack.anthropic.always(rate_limited("1"))
    execution = stack.say(user, "hello")
    assert waits(stack, execution) == [1] * MAX_WAITS
    assert len(stack.anthropic.requests) == 1 + MAX_WAITS + 3, "then CallModel's three retries with backoff"
    assert stack.replies(user) == [FRIENDLY_ERROR]
