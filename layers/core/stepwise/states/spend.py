"""CallModel's spend controls: counting each call's usage once, and turning the API's `retry-after` into a
wait of the state machine. (The daily token budget is checked where the turn starts: `states.turn_kind`.)"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from stepwise.model.rate_limits import MAX_WAITS, wait_seconds
from stepwise.states.contracts.base import Next
from stepwise.usage.meter import count_totals

if TYPE_CHECKING:
    from stepwise.model.errors import ModelRateLimitedError
    from stepwise.services import TurnServices
    from stepwise.turn_records.models import TurnMeta
    from stepwise.usage.models import UsageTotals

logger = logging.getLogger(__name__)


def count_usage(meta: TurnMeta, step: int, used: UsageTotals, services: TurnServices) -> None:
    """Add the call's tokens and cost (`call_usage`) to the user's counters, once per model step of the turn.
    Best effort: a failed write is logged, not retried (a retry would call, and pay, the model again)."""
    if services.stores.usage is None:
        return
    try:
        count_totals(
            services.stores.usage, meta.scope.payer, f"{meta.turn_id}#{step}", used, services.clock()
        )
    except Exception:
        logger.exception("usage not counted", extra={"step": step})


def wait_for_rate_limit(error: ModelRateLimitedError, previous: Next) -> Next:
    """Ask the state machine to wait what the API asked (at most a minute) before the same call; past
    MAX_WAITS waits in the turn, the error goes to the usual retries and the fallback."""
    if previous.waits >= MAX_WAITS:
        raise error
    seconds = wait_seconds(error.retry_after_seconds)
    logger.warning(
        "model API rate limited; the turn waits",
        extra={
            "retry_after": error.retry_after_seconds,
            "wait_seconds": seconds,
            "waits": previous.waits,
        },
    )
    return previous.model_copy(update={"route": "wait", "waits": previous.waits + 1, "wait_seconds": seconds})
