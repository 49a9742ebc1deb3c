"""List prices of the Claude models, in US dollars per million tokens (checked 2026-11).

Cache writes (5-minute lifetime) cost 1.25 times the input price, cache reads 0.1 times. Models not listed
are priced as claude-sonnet-4-5, and `price_for` says so.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

CACHE_WRITE_FACTOR = Decimal("1.25")
CACHE_READ_FACTOR = Decimal("0.1")
# Web search: $10 per 1,000 searches (checked 2026-11), besides the tokens of its results; web fetch costs
# its tokens only.
WEB_SEARCH_NANO_USD = 10_000_000
NANO_PER_MICRO = 1000  # a price per million tokens is micro-dollars per token; costs are kept in nano-dollars


@dataclass(frozen=True)
class Price:
    """Dollars per million input and output tokens of one model; `model` is the table's entry used."""

    model: str
    input: Decimal
    output: Decimal
    known: bool = True


PRICES = {
    "claude-haiku-4-5": Price("claude-haiku-4-5", Decimal(1), Decimal(5)),
    "claude-sonnet-4-5": Price("claude-sonnet-4-5", Decimal(3), Decimal(15)),
}
UNKNOWN_MODEL_PRICE = "claude-sonnet-4-5"


def price_for(model: str) -> Price:
    """The model's price; dated ids (claude-haiku-4-5-20251001) are priced as their model, others as
    Sonnet 4.5 with `known=False`."""
    for name, price in PRICES.items():
        if model == name or model.startswith(f"{name}-"):
            return price
    sonnet = PRICES[UNKNOWN_MODEL_PRICE]
    return Price(sonnet.model, sonnet.input, sonnet.output, known=False)


def search_budget_tokens(price: Price, searches: int) -> int:
    """What `searches` web searches count against the daily token budget: the input tokens their price
    buys (10,000 per search at Haiku 4.5's $1 per million), rounded up."""
    micro = searches * WEB_SEARCH_NANO_USD / (price.input * NANO_PER_MICRO)
    return int(micro.to_integral_value(rounding="ROUND_CEILING"))


def cost_nano_usd(
    price: Price,
    input_tokens: int,
    output_tokens: int,
    cache_read_tokens: int,
    cache_write_tokens: int,
    web_searches: int = 0,
) -> int:
    """The cost of one call in nano-dollars (an integer, so that counters add up exactly), its web
    searches included."""
    micro = (
        input_tokens * price.input
        + output_tokens * price.output
        + cache_write_tokens * price.input * CACHE_WRITE_FACTOR
        + cache_read_tokens * price.input * CACHE_READ_FACTOR
    )
    return int((micro * NANO_PER_MICRO).to_integral_value()) + web_searches * WEB_SEARCH_NANO_USD
