"""Spend cap and usage: the price table, counters added once per model step, the daily budget, `/usage`,
and the API's retry-after turned into a wait of the state machine."""

from __future__ import annotations

from datetime import UTC, datetime
from types import SimpleNamespace
from typing import Any

import pytest
from support.turn_fakes import ScriptedModel, text_response, turn_settings, turn_start

from stepwise.config import DEFAULT_DAILY_TOKEN_BUDGET, DEFAULT_MODEL, Settings
from stepwise.model.errors import ModelRateLimitedError, ModelTransientError
from stepwise.model.rate_limits import MAX_WAITS, retry_after_seconds, wait_seconds
from stepwise.model.types import ModelResponse, Usage
from stepwise.services import TurnServices
from stepwise.states.call_model import call_model
from stepwise.states.contracts.base import Next
from stepwise.states.contracts.call_model import CallModelInput
from stepwise.states.contracts.run_tools import RunToolsInput
from stepwise.states.load_context import load_context
from stepwise.states.run_tools import run_tools
from stepwise.usage.budget import budget_message, next_reset
from stepwise.usage.meter import call_usage, count_call
from stepwise.usage.models import UsageTotals, day_key, month_key
from stepwise.usage.prices import cost_nano_usd, price_for
from stepwise.usage.report import usage_report
from stepwise_local.in_memory.usage import InMemoryUsageStore

NOW = datetime(2026, 11, 23, 21, 48, tzinfo=UTC)
USAGE = Usage(
    input_tokens=1000, output_tokens=200, cache_read_input_tokens=3000, cache_creation_input_tokens=400
)


def answer(text: str, usage: Usage = USAGE, model: str = "claude-haiku-4-5-20251001") -> ModelResponse:
    response = text_response(text)
    return response.model_copy(update={"usage": usage, "model": model})


@pytest.fixture
def usage(services: TurnServices) -> InMemoryUsageStore:
    store = InMemoryUsageStore()
    services.stores.usage = store
    return store


# ------------------------------------------------------------------------------------------ price table
def test_haiku_and_sonnet_are_priced_at_their_list_prices_with_cache_writes_and_reads_scaled() -> None:
    haiku, sonnet = price_for("claude-haiku-4-5"), price_for("claude-sonnet-4-5")
    # a million of each: $1 in, $5 out, $1.25 cache write, $0.10 cache read
    assert cost_nano_usd(haiku, 1_000_000, 1_000_000, 1_000_000, 1_000_000) == 7_350_000_000
    assert cost_nano_usd(sonnet, 1_000_000, 0, 0, 0) == 3_000_000_000
    assert cost_nano_usd(sonnet, 0, 1_000_000, 0, 0) == 15_000_000_000
    assert cost_nano_usd(sonnet, 0, 0, 1_000_000, 1_000_000) == 300_000_000 + 3_750_000_000


def test_the_default_daily_budget_buys_what_the_docs_say_on_the_default_model(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("DAILY_TOKEN_BUDGET", raising=False)
    budget = Settings().daily_token_budget
    assert budget == DEFAULT_DAILY_TOKEN_BUDGET == 1_000_000
    assert Settings(daily_token_budget=0).daily_token_budget == 0, "0 stays an explicit no cap"
    price = price_for(DEFAULT_MODEL)
    # docs/spend-cap-and-usage.md: $1.00 all input, $1.25 all cache writes, $5.00 all output, $1.00 as cache
    # reads (which count a tenth: 10 million of them)
    assert cost_nano_usd(price, budget, 0, 0, 0) == 1_000_000_000
    assert cost_nano_usd(price, 0, 0, 0, budget) == 1_250_000_000
    assert cost_nano_usd(price, 0, budget, 0, 0) == 5_000_000_000
    assert cost_nano_usd(price, 0, 0, 10 * budget, 0) == 1_000_000_000
    assert UsageTotals(cache_read_tokens=10 * budget).budget_tokens == budget
    # an ordinary turn of about 3,000 tokens in and 200 out: 3,200 budget tokens, $0.004; 312 a day
    turn = UsageTotals(input_tokens=3000, output_tokens=200)
    assert (turn.budget_tokens, cost_nano_usd(price, 3000, 200, 0, 0)) == (3200, 4_000_000)
    assert budget // turn.budget_tokens == 312


def test_a_dated_model_id_is_priced_as_its_model() -> None:
    price = price_for("claude-haiku-4-5-20251001")
    assert (price.model, price.known) == ("claude-haiku-4-5", True)


def test_an_unknown_model_is_priced_as_sonnet_and_says_so() -> None:
    price = price_for("llama3.2")
    assert (price.model, price.known, price.input, price.output) == ("claude-sonnet-4-5", False, 3, 15)
    assert call_usage("llama3.2", USAGE).unpriced_models == {"llama3.2"}
    assert call_usage("claude-sonnet-4-5", USAGE).unpriced_models == frozenset()


def test_the_budget_counts_cache_reads_at_a_tenth() -> None:
    totals = UsageTotals(input_tokens=100, output_tokens=20, cache_read_tokens=1001, cache_write_tokens=5)
    assert totals.tokens == 1126
    assert totals.budget_tokens == 100 + 20 + 5 + 101


# ------------------------------------------------------------------------------------------ counters
def test_a_call_is_added_to_its_utc_day_once_per_call_key_and_the_month_sums_its_days() -> None:
    store = InMemoryUsageStore()
    assert count_call(store, 5, "turn-1#0", "claude-haiku-4-5", USAGE, NOW)
    assert not count_call(store, 5, "turn-1#0", "claude-haiku-4-5", USAGE, NOW), "a retry adds nothing"
    assert count_call(store, 5, "turn-1#1", "claude-haiku-4-5", USAGE, NOW)
    day, month = store.totals(5, "day#2026-11-23"), store.totals(5, "month#2026-11")
    assert day == month
    assert (day.calls, day.input_tokens, day.cache_read_tokens) == (2, 2000, 6000)
    # 1000 in + 200 * 5 out + 3000 * 0.1 read + 400 * 1.25 write = 2,800 micro-dollars per call
    assert day.cost_nano_usd == 2 * 2_800_000
    assert store.totals(6, "day#2026-11-23") == UsageTotals(), "another user's counters are their own"


def test_periods_are_utc_days_and_months() -> None:
    from zoneinfo import ZoneInfo

    late_in_lisbon = datetime(2026, 12, 1, 0, 30, tzinfo=ZoneInfo("Europe/Lisbon"))  # same as UTC in winter
    late_in_new_york = datetime(2026, 11, 30, 22, 0, tzinfo=ZoneInfo("America/New_York"))  # 03:00 UTC Dec 1
    assert (day_key(late_in_lisbon), month_key(late_in_lisbon)) == ("day#2026-12-01", "month#2026-12")
    assert (day_key(late_in_new_york), month_key(late_in_new_york)) == ("day#2026-12-01", "month#2026-12")


def test_a_call_that_used_no_tokens_writes_nothing() -> None:
    store = InMemoryUsageStore()
    assert not count_call(store, 5, "turn-1#0", "claude-haiku-4-5", Usage(), NOW)
    assert store.counted == set()


# ------------------------------------------------------------------------------------------ CallModel
def test_a_retried_call_model_counts_its_step_once(
    services: TurnServices, model: ScriptedModel, usage: InMemoryUsageStore
) -> None:
    start = turn_start(services, "hello")
    load_context(start, services)
    model.responses += [answer("Hi"), answer("Hi")]
    call_model(CallModelInput(turn=start.turn), services)
    call_model(CallModelInput(turn=start.turn), services)  # the state machine's retry after a crash
    (day,) = [totals for (user, period), totals in usage.periods.items() if period.startswith("day#")]
    assert (day.calls, day.input_tokens, day.output_tokens) == (1, 1000, 200)


def test_a_user_over_the_daily_budget_gets_the_budget_message_and_no_model_call(
    services: TurnServices, model: ScriptedModel, usage: InMemoryUsageStore
) -> None:
    services.settings = turn_settings(daily_token_budget=1000)
    services.stores.profiles.reminders.set_timezone(7, "Europe/Lisbon")
    first = turn_start(services, "hello")
    load_context(first, services)
    model.responses.append(answer("Hi"))
    call_model(CallModelInput(turn=first.turn), services)  # 1000 + 200 + 400 + 300 budget tokens
    second = turn_start(services, "and now?", update_id=2)
    result = load_context(second, services)
    assert result.route == "reply", "the turn's kind is decided where it starts: no model call"
    assert len(model.requests) == 1, "no second model call"
    reply = services.stores.turns.get_reply(second.turn.turn_id)
    assert reply is not None and reply.source == "budget"
    assert "1,900 of 1,000 tokens" in reply.text
    assert "at midnight UTC (00:00 on Mon 23 Nov your time, Europe/Lisbon)" in reply.text


def test_in_a_group_the_budget_message_shows_neither_the_members_figures_nor_their_zone(
    services: TurnServices, model: ScriptedModel, usage: InMemoryUsageStore
) -> None:
    services.settings = turn_settings(daily_token_budget=1000)
    services.stores.profiles.reminders.set_timezone(7, "Europe/Lisbon")
    first = turn_start(services, "hello")
    load_context(first, services)
    model.responses.append(answer("Hi"))
    call_model(CallModelInput(turn=first.turn), services)  # Ana's private turn spends her budget
    in_group = turn_start(
        services, "@stepwise_bot hi all", chat_id=-100, user_id=7, sender="Ana", update_id=2
    )
    assert load_context(in_group, services).route == "reply"
    reply = services.stores.turns.get_reply(in_group.turn.turn_id)
    assert reply is not None and reply.source == "budget"
    assert reply.text.startswith("Ana, you've reached your daily usage limit")
    assert "at midnight UTC, in 14 h 30 min; /usage in our private chat shows more." in reply.text
    assert "1,900" not in reply.text and "Europe/Lisbon" not in reply.text


def test_a_turn_under_the_budget_finishes_its_tool_rounds(
    services: TurnServices, model: ScriptedModel, usage: InMemoryUsageStore
) -> None:
    services.settings = turn_settings(daily_token_budget=1)
    start = turn_start(services, "add milk")
    load_context(start, services)
    tool_round = ModelResponse(
        content=[{"type": "tool_use", "id": "toolu_1", "name": "add_task", "input": {"title": "milk"}}],
        stop_reason="tool_use",
        model="claude-haiku-4-5",
        usage=USAGE,
    )
    model.responses += [tool_round, answer("Added")]
    routed = call_model(CallModelInput(turn=start.turn), services)
    assert routed.route == "tools"
    run_tools(RunToolsInput(turn=start.turn, next=routed), services)
    assert call_model(CallModelInput(turn=start.turn, next=routed), services).route == "reply"
    assert len(model.requests) == 2


def test_offline_command_turns_are_neither_refused_nor_counted(
    services: TurnServices, usage: InMemoryUsageStore
) -> None:
    services.settings = turn_settings(daily_token_budget=1)
    usage.add(7, "earlier", [day_key(services.clock())], UsageTotals(input_tokens=50))
    start = turn_start(services, "/timezone Europe/Lisbon")
    assert load_context(start, services).route == "model", "not refused"
    assert call_model(CallModelInput(turn=start.turn), services).route == "tools"  # set_timezone, offline
    assert usage.counted == {(7, "earlier")}


def test_a_rate_limit_with_retry_after_asks_the_state_machine_to_wait(
    services: TurnServices, model: ScriptedModel
) -> None:
    start = turn_start(services, "hello")
    load_context(start, services)
    model.responses.append(ModelRateLimitedError("HTTP 429", retry_after_seconds=7.2))
    result = call_model(CallModelInput(turn=start.turn), services)
    assert (result.route, result.wait_seconds, result.final, result.step) == ("wait", 8, False, 0)
    assert result.waits == 1, "the turn's waits are counted"
    assert services.stores.turns.steps(start.turn.turn_id) == [], "nothing stored: the same call comes again"


def test_past_the_waits_of_a_turn_a_rate_limit_is_an_ordinary_transient_error(
    services: TurnServices, model: ScriptedModel
) -> None:
    start = turn_start(services, "hello")
    load_context(start, services)
    model.responses.append(ModelRateLimitedError("HTTP 429", retry_after_seconds=1))
    with pytest.raises(ModelTransientError):
        call_model(CallModelInput(turn=start.turn, next=Next(route="model", waits=MAX_WAITS)), services)


# ------------------------------------------------------------------------------------------ retry-after
@pytest.mark.parametrize(
    ("headers", "seconds"),
    [
        ({"retry-after": "12"}, 12.0),
        ({"Retry-After": "0.5"}, 0.5),
        ({"retry-after-ms": "1500", "retry-after": "9"}, 1.5),
        ({"retry-after": "Mon, 23 Nov 2026 21:48:30 GMT"}, 30.0),
        ({"retry-after": "soon"}, None),
        ({"retry-after": "-3"}, None),
        ({}, None),
    ],
)
def test_retry_after_is_read_in_seconds_milliseconds_or_as_a_date(
    headers: dict[str, str], seconds: float | None
) -> None:
    assert retry_after_seconds(headers, now=NOW) == seconds


def test_a_wait_is_at_least_the_retry_after_and_at_most_a_minute() -> None:
    assert [wait_seconds(s) for s in (0, 0.2, 7, 7.01, 60, 3600)] == [1, 1, 7, 8, 60, 60]


# ------------------------------------------------------------------------------------------ messages
def test_the_budget_resets_at_the_next_utc_midnight() -> None:
    assert next_reset(NOW) == datetime(2026, 11, 24, tzinfo=UTC)
    assert next_reset(datetime(2026, 11, 24, tzinfo=UTC)) == datetime(2026, 11, 25, tzinfo=UTC)


def test_the_budget_message_says_when_it_resets_in_the_users_zone() -> None:
    text = budget_message(50_000, 51_234, NOW, "America/New_York")
    assert "51,234 of 50,000 tokens" in text
    assert "at midnight UTC (19:00 on Mon 23 Nov your time, America/New_York), in 2 h 12 min" in text
    assert "at midnight UTC, in 2 h 12 min." in budget_message(50_000, 51_234, NOW, "UTC")


def test_usage_report_shows_today_this_month_and_the_budget() -> None:
    store = InMemoryUsageStore()
    count_call(store, 5, "t1#0", "claude-haiku-4-5", USAGE, datetime(2026, 11, 2, tzinfo=UTC))
    count_call(store, 5, "t2#0", "claude-sonnet-4-5", USAGE, NOW)
    report = usage_report(5, store, NOW, daily_token_budget=10_000, timezone="Europe/Lisbon")
    assert report.splitlines() == [
        "Your usage (estimated at list prices):",
        "today: 4,600 tokens (in 1,000, out 200, cache read 3,000, cache write 400), ≈ $0.0084",
        "this month: 9,200 tokens (in 2,000, out 400, cache read 6,000, cache write 800), ≈ $0.0112",
        "daily budget: 1,900 of 10,000 tokens (19%), resets at midnight UTC (00:00 on Tue 24 Nov your time, "
        "Europe/Lisbon), in 2 h 12 min",
    ]


def test_usage_report_without_usage_or_budget_and_with_an_unpriced_model() -> None:
    store = InMemoryUsageStore()
    assert usage_report(5, store, NOW) == (
        "Your usage (estimated at list prices):\ntoday: no tokens, $0\nthis month: no tokens, $0\n"
        "daily budget: none (DAILY_TOKEN_BUDGET is 0: no cap)"
    )
    count_call(store, 5, "t1#0", "llama3.2", USAGE, NOW)
    assert usage_report(5, store, NOW).endswith(
        "(not in the price table, priced as claude-sonnet-4-5: llama3.2)"
    )


class _RecordingTable:
    """A DynamoDB table that answers every GetItem with nothing and keeps what it was asked."""

    def __init__(self) -> None:
        self.reads: list[dict[str, Any]] = []
        self.meta = SimpleNamespace(client=None)  # the store keeps its client for transactions only

    def get_item(self, **kwargs: Any) -> dict[str, Any]:
        self.reads.append(kwargs)
        return {}


def test_the_budget_check_reads_the_day_eventually_consistent_and_usage_reads_it_consistent() -> None:
    # Given the DynamoDB usage store over a table that records its reads
    from stepwise.usage.budget import is_over_budget
    from stepwise.usage.dynamodb import DynamoUsageStore

    table = _RecordingTable()
    store = DynamoUsageStore(table, marker_ttl_days=2)
    now = datetime(2026, 11, 27, 12, 0, tzinfo=UTC)
    # When the turn's budget check and /usage's day read run
    assert is_over_budget(store, 7, now, 1_000_000) is None
    store.totals(7, "day#2026-11-27")
    # Then the check costs half a read unit (eventually consistent), /usage's read stays strongly consistent
    assert [read["ConsistentRead"] for read in table.reads] == [False, True]
