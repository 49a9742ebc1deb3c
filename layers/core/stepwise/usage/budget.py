"""DAILY_TOKEN_BUDGET: no model call once the user's tokens today reach it, and a message saying when it
resets."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING
from zoneinfo import ZoneInfo

from stepwise.usage.models import day_key

if TYPE_CHECKING:
    from stepwise.usage.store import UsageStore


def tokens_today(store: UsageStore, user_id: int, now: datetime, *, consistent: bool = True) -> int:
    """The user's tokens of the current UTC day, as the budget counts them (cache reads at a tenth)."""
    return store.totals(user_id, day_key(now), consistent=consistent).budget_tokens


def is_over_budget(store: UsageStore, user_id: int, now: datetime, daily_budget: int) -> int | None:
    """The tokens used today when they reached `daily_budget` (0: no budget), else None. The read may miss the
    last second's counts (an eventually consistent read, half the price): a turn that starts while the one
    before it is still being counted can run past the budget by that one turn, as it could anyway."""
    if daily_budget <= 0:
        return None
    used = tokens_today(store, user_id, now, consistent=False)
    return used if used >= daily_budget else None


def next_reset(now: datetime) -> datetime:
    """The next UTC midnight: when the day's counter starts again."""
    today = now.astimezone(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    return today + timedelta(days=1)


def reset_phrase(now: datetime, timezone: str) -> str:
    """When the budget resets, in words: "at midnight UTC (01:00 on Tue 24 Nov your time, Europe/Lisbon), in
    3 h 12 min"; only UTC when the user's zone is UTC."""
    reset = next_reset(now)
    left = max(timedelta(0), reset - now)
    minutes = -(-int(left.total_seconds()) // 60)
    wait = f"{minutes // 60} h {minutes % 60} min" if minutes >= 60 else f"{minutes} min"
    local = reset.astimezone(ZoneInfo(timezone))
    if local.utcoffset() == timedelta(0) and timezone in ("UTC", "Etc/UTC"):
        return f"at midnight UTC, in {wait}"
    return f"at midnight UTC ({local.strftime('%H:%M on %a %d %b')} your time, {timezone}), in {wait}"


def budget_message(
    daily_budget: int, used: int, now: datetime, timezone: str, group_member: str | None = None
) -> str:
    """The reply of a turn refused for the budget. In a group (`group_member`: the first name of the member
    who asked, "" when unknown) it names neither their figures nor their time zone: /usage, in the private
    chat, shows them."""
    if group_member is not None:
        lead = f"{group_member}, you've" if group_member else "You've"
        return (
            f"{lead} reached your daily usage limit, so I'm pausing the language model for your messages to "
            f"keep costs in check. It resets {reset_phrase(now, 'UTC')}; /usage in our private chat shows "
            "more. Your message is saved; write to me again after that."
        )
    return (
        f"I've reached today's usage limit for you ({used:,} of {daily_budget:,} tokens), so I'm pausing the "
        f"language model to keep costs in check. The limit resets {reset_phrase(now, timezone)}. Your "
        "message is saved; write to me again after that."
    )
