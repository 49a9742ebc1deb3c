"""Usage counters: what one model call used, and the totals of a period (a UTC day or month)."""

from datetime import UTC, datetime
from typing import NamedTuple

NANO_PER_DOLLAR = 1_000_000_000


class UsageTotals(NamedTuple):
    """Tokens and estimated cost (nano-dollars) counted for one user in one period, or used by one call (a
    voice note's transcription and a reply's speech are counted the same way, by their own keys)."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    cost_nano_usd: int = 0
    calls: int = 0
    web_searches: int = 0
    web_search_tokens: int = 0  # the searches' price in input tokens, for the daily budget
    voice_notes: int = 0  # voice notes, audio files and video messages transcribed
    voice_seconds: int = 0  # their length, rounded up per note
    spoken_characters: int = 0  # characters of replies spoken (Polly bills per character)
    voice_tokens: int = 0  # the transcription's and speech's price in input tokens, for the daily budget
    unpriced_models: frozenset[str] = frozenset()

    @property
    def tokens(self) -> int:
        """Every token, cache reads and writes included."""
        return self.input_tokens + self.output_tokens + self.cache_read_tokens + self.cache_write_tokens

    @property
    def budget_tokens(self) -> int:
        """What counts against DAILY_TOKEN_BUDGET: input, output and cache writes in full, cache reads at a
        tenth (what they cost), rounded up, and web searches as the input tokens their price buys."""
        return (
            self.web_search_tokens
            + self.voice_tokens
            + self.input_tokens
            + self.output_tokens
            + self.cache_write_tokens
            + -(-self.cache_read_tokens // 10)
        )

    @property
    def cost_usd(self) -> float:
        return self.cost_nano_usd / NANO_PER_DOLLAR

    @property
    def is_empty(self) -> bool:
        return self.tokens == 0 and self.voice_notes == 0 and self.spoken_characters == 0

    def plus(self, other: "UsageTotals") -> "UsageTotals":
        """The sum of two totals (a month is the sum of its days)."""
        return UsageTotals(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cache_read_tokens=self.cache_read_tokens + other.cache_read_tokens,
            cache_write_tokens=self.cache_write_tokens + other.cache_write_tokens,
            cost_nano_usd=self.cost_nano_usd + other.cost_nano_usd,
            calls=self.calls + other.calls,
            web_searches=self.web_searches + other.web_searches,
            web_search_tokens=self.web_search_tokens + other.web_search_tokens,
            voice_notes=self.voice_notes + other.voice_notes,
            voice_seconds=self.voice_seconds + other.voice_seconds,
            spoken_characters=self.spoken_characters + other.spoken_characters,
            voice_tokens=self.voice_tokens + other.voice_tokens,
            unpriced_models=self.unpriced_models | other.unpriced_models,
        )


def day_key(now: datetime) -> str:
    """The counter of `now`'s UTC day: `day#2026-11-23`."""
    return f"day#{now.astimezone(UTC).strftime('%Y-%m-%d')}"


def month_key(now: datetime) -> str:
    """`now`'s UTC month: `month#2026-11`. No counter is kept under it: its totals are those of its days."""
    return f"month#{now.astimezone(UTC).strftime('%Y-%m')}"


def days_prefix(month: str) -> str:
    """The sort-key prefix of a month's day counters: `month#2026-11` -> `day#2026-11-`."""
    return "day#" + month.removeprefix("month#") + "-"
