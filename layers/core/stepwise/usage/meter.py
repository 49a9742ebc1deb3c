"""Counting one model call: its tokens and estimated cost, added once to the user's day and month."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from stepwise.usage.models import UsageTotals, day_key
from stepwise.usage.prices import (
    cost_budget_tokens,
    cost_nano_usd,
    price_for,
    search_budget_tokens,
    speech_nano_usd,
    transcription_nano_usd,
)

if TYPE_CHECKING:
    from datetime import datetime
    from decimal import Decimal

    from stepwise.model.types import Usage
    from stepwise.usage.store import UsageStore

logger = logging.getLogger(__name__)


def call_usage(model: str, usage: Usage) -> UsageTotals:
    """One call's counters, priced with the model's list price (an unknown model as Sonnet 4.5), its web
    searches at theirs."""
    price = price_for(model)
    return UsageTotals(
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        cache_read_tokens=usage.cache_read_input_tokens,
        cache_write_tokens=usage.cache_creation_input_tokens,
        cost_nano_usd=cost_nano_usd(
            price,
            usage.input_tokens,
            usage.output_tokens,
            usage.cache_read_input_tokens,
            usage.cache_creation_input_tokens,
            usage.web_search_requests,
        ),
        calls=1,
        web_searches=usage.web_search_requests,
        web_search_tokens=search_budget_tokens(price, usage.web_search_requests),
        unpriced_models=frozenset() if price.known else frozenset({model}),
    )


def transcription_usage(
    model: str, transcriber: str, seconds: float, openai_usd_per_minute: Decimal
) -> UsageTotals:
    """One voice note's counters: its length, rounded up, and its price, counted against the daily budget as
    the input tokens it buys at the model's price."""
    cost = transcription_nano_usd(transcriber, seconds, openai_usd_per_minute)
    return UsageTotals(
        voice_notes=1,
        voice_seconds=int(-(-seconds // 1)),
        cost_nano_usd=cost,
        voice_tokens=cost_budget_tokens(price_for(model), cost),
    )


def speech_usage(model: str, engine: str, characters: int) -> UsageTotals:
    """One spoken answer's counters: its characters and their price (the daily budget as above)."""
    cost = speech_nano_usd(engine, characters)
    return UsageTotals(
        spoken_characters=characters,
        cost_nano_usd=cost,
        voice_tokens=cost_budget_tokens(price_for(model), cost),
    )


def count_call(
    store: UsageStore, user_id: int, call_key: str, model: str, usage: Usage, now: datetime
) -> bool:
    """Add the call to the user's counter of `now`'s UTC day (a month is the sum of its days), once per
    `call_key` (a model step of a turn); True when it was added now. A call that used no tokens is not
    written."""
    return count_totals(store, user_id, call_key, call_usage(model, usage), now)


def count_totals(store: UsageStore, user_id: int, call_key: str, used: UsageTotals, now: datetime) -> bool:
    """`count_call` for a call already priced (`call_usage`)."""
    if used.is_empty:
        return False
    if used.unpriced_models:
        model = ", ".join(sorted(used.unpriced_models))
        logger.warning("model not in the price table; priced as Sonnet 4.5", extra={"model": model})
    return store.add(user_id, call_key, [day_key(now)], used)
