"""`/usage`: the user's tokens and estimated cost today and this month, and the daily budget (or that there is
none)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from stepwise.usage.budget import reset_phrase
from stepwise.usage.models import UsageTotals, day_key, month_key
from stepwise.usage.prices import UNKNOWN_MODEL_PRICE

if TYPE_CHECKING:
    from datetime import datetime

    from stepwise.usage.store import UsageStore

NO_BUDGET = "daily budget: none (DAILY_TOKEN_BUDGET is 0: no cap)"


def usage_report(
    user_id: int, store: UsageStore, now: datetime, daily_token_budget: int = 0, timezone: str = "UTC"
) -> str:
    """The text of `/usage` for one user at `now` (days and months are UTC; `timezone`, the user's IANA
    zone, says when the budget resets)."""
    today = store.totals(user_id, day_key(now))
    month = store.totals(user_id, month_key(now))
    lines = [
        "Your usage (estimated at list prices):",
        f"today: {_line(today)}",
        f"this month: {_line(month)}",
    ]
    if daily_token_budget > 0:
        used = today.budget_tokens
        share = min(100, used * 100 // daily_token_budget)
        lines.append(
            f"daily budget: {used:,} of {daily_token_budget:,} tokens ({share}%), "
            f"resets {reset_phrase(now, timezone)}"
        )
    else:
        lines.append(NO_BUDGET)
    unpriced = sorted(today.unpriced_models | month.unpriced_models)
    if unpriced:
        lines.append(f"(not in the price table, priced as {UNKNOWN_MODEL_PRICE}: {', '.join(unpriced)})")
    return "\n".join(lines)


def _line(totals: UsageTotals) -> str:
    if totals.is_empty:
        return "no tokens, $0"
    return (
        f"{totals.tokens:,} tokens (in {totals.input_tokens:,}, out {totals.output_tokens:,}, "
        f"cache read {totals.cache_read_tokens:,}, cache write {totals.cache_write_tokens:,}), "
        f"{_searches(totals.web_searches)}{_voice(totals)}≈ {_dollars(totals.cost_usd)}"
    )


def _voice(totals: UsageTotals) -> str:
    """The voice notes transcribed and the characters spoken, when there were any (in the cost)."""
    parts = []
    if totals.voice_notes:
        notes = f"{totals.voice_notes:,} voice note{'s' if totals.voice_notes != 1 else ''}"
        parts.append(f"{notes} ({_duration(totals.voice_seconds)} transcribed)")
    if totals.spoken_characters:
        parts.append(f"{totals.spoken_characters:,} characters spoken")
    return "".join(f"{part}, " for part in parts)


def _duration(seconds: int) -> str:
    minutes, rest = divmod(seconds, 60)
    return f"{minutes} min {rest} s" if minutes else f"{rest} s"


def _searches(count: int) -> str:
    """The web searches of a period, when there were any ($0.01 each, in the cost)."""
    if not count:
        return ""
    return f"{count:,} web search{'es' if count != 1 else ''}, "


def _dollars(amount: float) -> str:
    return f"${amount:.2f}" if amount >= 0.995 else f"${amount:.4f}"
