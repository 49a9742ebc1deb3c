"""List prices of the Claude models, in US dollars per million tokens (checked 2026-11).

Cache writes (5-minute lifetime) cost 1.25 times the input price, cache reads 0.1 times. Models not listed
are priced as claude-sonnet-4-5, and `price_for` says so.
"""

from decimal import Decimal
from typing import NamedTuple

CACHE_WRITE_FACTOR = Decimal("1.25")
CACHE_READ_FACTOR = Decimal("0.1")
# Web search: $10 per 1,000 searches (checked 2026-11), besides the tokens of its results; web fetch costs
# its tokens only.
WEB_SEARCH_NANO_USD = 10_000_000
NANO_PER_MICRO = 1000  # a price per million tokens is micro-dollars per token; costs are kept in nano-dollars


class Price(NamedTuple):
    """Dollars per million input and output tokens of one model; `model` is the table's entry used."""

    model: str
    input: Decimal
    output: Decimal
    known: bool = True


# Voice (us-east-1 list prices, 2026-11): Amazon Transcribe batch bills $0.024 a minute per second of audio
# with a 15-second minimum; an OpenAI-compatible API's price is a setting (VOICE_TRANSCRIPTION_USD_PER_MINUTE;
# OpenAI's whisper-1: $0.006 a minute); the offline recognizer costs nothing. Amazon Polly bills per million
# characters by engine.
TRANSCRIBE_USD_PER_MINUTE = Decimal("0.024")
TRANSCRIBE_MINIMUM_SECONDS = 15
POLLY_USD_PER_MILLION_CHARACTERS = {
    "standard": Decimal(4),
    "neural": Decimal(16),
    "long-form": Decimal(100),
    "generative": Decimal(30),
    "local": Decimal(0),
}
NANO_PER_DOLLAR = 1_000_000_000

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


def transcription_nano_usd(transcriber: str, seconds: float, openai_usd_per_minute: Decimal) -> int:
    """What transcribing `seconds` of audio costs with `transcriber` ("transcribe", "openai", "local")."""
    if transcriber == "transcribe":
        billed = max(Decimal(TRANSCRIBE_MINIMUM_SECONDS), Decimal(str(seconds)))
        return int((billed / 60 * TRANSCRIBE_USD_PER_MINUTE * NANO_PER_DOLLAR).to_integral_value())
    if transcriber == "openai":
        return int((Decimal(str(seconds)) / 60 * openai_usd_per_minute * NANO_PER_DOLLAR).to_integral_value())
    return 0


def speech_nano_usd(engine: str, characters: int) -> int:
    """What speaking `characters` costs with Polly's `engine` (or "local": nothing)."""
    per_million = POLLY_USD_PER_MILLION_CHARACTERS.get(engine, POLLY_USD_PER_MILLION_CHARACTERS["neural"])
    return int((per_million * characters * NANO_PER_DOLLAR / 1_000_000).to_integral_value())


def cost_budget_tokens(price: Price, nano_usd: int) -> int:
    """What a cost other than tokens counts against the daily token budget: the input tokens it buys at the
    model's price, rounded up (DAILY_TOKEN_BUDGET is a money limit expressed in tokens)."""
    micro = Decimal(nano_usd) / (price.input * NANO_PER_MICRO)
    return int(micro.to_integral_value(rounding="ROUND_CEILING"))
