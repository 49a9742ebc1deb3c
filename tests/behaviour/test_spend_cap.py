"""Spend cap and usage on the in-memory stack (support.memory_stack): each model call counted for the user
today and this month, the daily budget (set, and the template's default) refusing a turn with no model
request, and the API's retry-after waited out by WaitOutTheRateLimit (at least what it said, at most a
minute). The emulated stack keeps the usage items' layout in DynamoDB, the Wait state's wiring, usage
counted once when CallModel is retried after a crash, and the waits' bound followed by the ASL's retries
(tests/integration/test_spend_cap.py)."""

from __future__ import annotations

from support.memory_stack import MemoryStack

from stepwise.config import DEFAULT_DAILY_TOKEN_BUDGET
from stepwise.usage.models import UsageTotals, day_key
from stepwise_local.anthropic_server import rate_limited, text


def today(stack: MemoryStack, user: int) -> UsageTotals:
    """The user's counter of today."""
    (day,) = stack.usage.days(user, "day#", "day#~").values()
    return day


def test_each_model_call_is_counted_for_the_user_today_and_this_month(stack: MemoryStack) -> None:
    user = stack.new_user()
    stack.say(user, "hello")
    stack.say(user, "again")
    periods = [period for owner, period in stack.usage.periods if owner == user]
    (day_period,) = [period for period in periods if period.startswith("day#")]
    assert not [p for p in periods if p.startswith("month#")], "a month is the sum of its days: no counter"
    assert len([key for owner, key in stack.usage.counted if owner == user]) == 2, "each call counted once"
    usages = stack.anthropic.usages
    day = today(stack, user)
    month = stack.usage.totals(user, "month#" + day_period[4:11])
    assert day.calls == month.calls == 2
    assert day.input_tokens == sum(u["input_tokens"] for u in usages)
    assert day.output_tokens == sum(u["output_tokens"] for u in usages)
    assert day.cost_nano_usd > 0


def test_a_user_over_the_daily_budget_is_told_when_it_resets_and_no_model_request_is_made() -> None:
    stack = MemoryStack(env={"DAILY_TOKEN_BUDGET": "100"})
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


def test_the_default_budget_refuses_a_turn_past_it_and_usage_shows_the_cap(stack: MemoryStack) -> None:
    """No DAILY_TOKEN_BUDGET given: the template's default (DEFAULT_DAILY_TOKEN_BUDGET) caps the day."""
    assert stack.settings.daily_token_budget == DEFAULT_DAILY_TOKEN_BUDGET
    user = stack.new_user()
    spent = UsageTotals(input_tokens=DEFAULT_DAILY_TOKEN_BUDGET - 10, calls=1)
    stack.usage.add(user, "earlier#0", [day_key(stack.now())], spent)
    stack.say(user, "hello")  # 10 tokens short of the cap: this turn runs (and goes past it)
    assert stack.replies(user) == ["You said: hello"]
    requests = len(stack.anthropic.requests)
    stack.say(user, "and again?")
    assert len(stack.anthropic.requests) == requests, "no model request past the default budget"
    refused = stack.replies(user)[-1]
    assert "today's usage limit" in refused and "of 1,000,000 tokens" in refused
    stack.say(user, "/usage")
    assert "of 1,000,000 tokens (100%), resets at midnight UTC" in stack.replies(user)[-1]


def test_a_429_with_retry_after_is_waited_out_then_answered(stack: MemoryStack) -> None:
    user = stack.new_user()
    stack.anthropic.script(rate_limited("7"), rate_limited("0.2", status=529), text("Here I am"))
    execution = stack.say(user, "hello")
    assert stack.replies(user) == ["Here I am"]
    assert len(stack.anthropic.requests) == 3
    assert execution["states"].count("WaitOutTheRateLimit") == 2
    assert stack.waited == [7, 1], "at least what retry-after said, in whole seconds"
    assert today(stack, user).calls == 1, "rate-limited calls cost nothing"


def test_a_retry_after_longer_than_a_minute_waits_a_minute(stack: MemoryStack) -> None:
    user = stack.new_user()
    stack.anthropic.script(rate_limited("3600"), text("Back"))
    stack.say(user, "hello")
    assert stack.waited == [60]
    assert stack.replies(user) == ["Back"]
