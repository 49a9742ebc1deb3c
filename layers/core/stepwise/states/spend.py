"""CallModel's spend controls: the daily token budget before a turn's first model call, counting each call's
usage once, and turning the API's `retry-after` into a wait of the state machine."""

from __future__ import annotations

from typing import TYPE_CHECKING

from aws_lambda_powertools import Logger

from stepwise.ids import iso_utc
from stepwise.model.rate_limits import MAX_WAITS, wait_seconds
from stepwise.states.contracts import CallModelInput, CallModelOutput
from stepwise.turn_records.models import Reply
from stepwise.usage.budget import budget_message, is_over_budget
from stepwise.usage.meter import count_call

if TYPE_CHECKING:
    from stepwise.model.errors import ModelRateLimitedError
    from stepwise.model.types import ModelResponse
    from stepwise.states.services import TurnServices
    from stepwise.turn_records.models import TurnMeta

logger = Logger(child=True)


def refuse_over_budget(meta: TurnMeta, services: TurnServices) -> CallModelOutput | None:
    """When the user's tokens today reached DAILY_TOKEN_BUDGET, make the budget message the turn's reply
    (no model call); None otherwise. A turn that started under the budget finishes its tool rounds."""
    if services.usage is None:
        return None
    now = services.clock()
    used = is_over_budget(services.usage, meta.user_id, now, services.daily_token_budget)
    if used is None:
        return None
    logger.info("daily token budget reached; no model call", extra={"used": used})
    services.turns.put_reply(
        meta.turn_id,
        Reply(
            text=budget_message(services.daily_token_budget, used, now, meta.timezone),
            source="budget",
            message_id=services.new_id(),
            created_at=iso_utc(now),
        ),
    )
    return CallModelOutput(route="reply", stop_reason="budget", step=0)


def count_usage(meta: TurnMeta, step: int, response: ModelResponse, services: TurnServices) -> None:
    """Add the call's tokens and cost to the user's counters, once per model step of the turn. Best effort: a
    failed write is logged, not retried (a retry would call, and pay, the model again)."""
    if services.usage is None:
        return
    try:
        count_call(
            services.usage,
            meta.user_id,
            f"{meta.turn_id}#{step}",
            response.model,
            response.usage,
            services.clock(),
        )
    except Exception:
        logger.exception("usage not counted", extra={"step": step})


def wait_for_rate_limit(error: ModelRateLimitedError, request: CallModelInput, step: int) -> CallModelOutput:
    """Ask the state machine to wait what the API asked (at most a minute) before the same call; past
    MAX_WAITS waits in the turn, the error goes to the usual retries and the fallback."""
    if request.rate_limit_waits >= MAX_WAITS:
        raise error
    seconds = wait_seconds(error.retry_after_seconds)
    logger.warning(
        "model API rate limited; the turn waits",
        extra={
            "retry_after": error.retry_after_seconds,
            "wait_seconds": seconds,
            "waits": request.rate_limit_waits,
        },
    )
    return CallModelOutput(
        route="wait", stop_reason="rate_limited", step=step, final=request.final, wait_seconds=seconds
    )
