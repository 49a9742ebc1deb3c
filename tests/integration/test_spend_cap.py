"""Spend cap and usage through the real state machine: the usage items in DynamoDB (a day counter, a marker
per call, no month item), usage counted once when CallModel is retried after a crash, the API's retry-after
waited out by the Wait state (its seconds read from the payload), and the waits' bound followed by CallModel's
retries. What the cap and the waits do in a turn (the budget set and by default, waits capped at a minute)
is tested on the in-memory stack (tests/behaviour/test_spend_cap.py)."""

from __future__ import annotations

import json
from typing import Any

from boto3.dynamodb.conditions import Key
from support.stack import Stack

from stepwise.model.rate_limits import MAX_WAITS
from stepwise.states.deliver import FRIENDLY_ERROR
from stepwise.usage.dynamodb import DynamoUsageStore
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


def test_rate_limit_waits_are_bounded_per_turn_then_the_usual_retries_and_error_reply(stack: Stack) -> None:
    user = stack.new_user()
    stack.anthropic.always(rate_limited("1"))
    execution = stack.say(user, "hello")
    assert waits(stack, execution) == [1] * MAX_WAITS
    assert len(stack.anthropic.requests) == 1 + MAX_WAITS + 3, "then CallModel's three retries with backoff"
    assert stack.replies(user) == [FRIENDLY_ERROR]
