"""A tap on Approve or Deny: check who pressed, record the decision once, resume the waiting turn."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from aws_lambda_powertools import Logger

from stepwise.approvals.messages import decided_html, parse_callback
from stepwise.approvals.store import ApprovalStore
from stepwise.ids import iso_utc, utc_now
from stepwise.telegram.client import TelegramClient
from stepwise.telegram.errors import TelegramError
from stepwise.telegram.models import CallbackQuery
from stepwise.workflow import TurnResumer

logger = Logger(child=True)

NOT_ACTIVE = "This button is no longer active."
NOT_YOURS = "Only the person this request was sent to can answer it."
NOT_READY = "One moment — this request is still being set up. Please tap again."


@dataclass
class PressServices:
    """What handling a press needs."""

    approvals: ApprovalStore
    telegram: Callable[[], TelegramClient]
    resumer: TurnResumer
    clock: Callable[[], datetime] = utc_now


PressAction = Literal["decided", "expired", "already_decided", "not_ready", "not_allowed", "ignored"]


@dataclass(frozen=True)
class PressOutcome:
    """What the press did: `decided` (approved/denied), or why it changed nothing."""

    action: PressAction
    answer: str


def handle_press(
    query: CallbackQuery, services: PressServices, allowed_users: frozenset[int]
) -> PressOutcome:
    """Decide a pending approval at most once; every press gets an answer, a stray one changes nothing."""
    if query.from_user.id in allowed_users:
        outcome = _decide(query, services)
    else:
        outcome = PressOutcome("not_allowed", NOT_YOURS)
    try:
        services.telegram().answer_callback_query(query.id, outcome.answer)
    except TelegramError as error:
        logger.warning("answerCallbackQuery failed", extra={"error": str(error)})
    return outcome


def _decide(query: CallbackQuery, services: PressServices) -> PressOutcome:
    parsed = parse_callback(query.data)
    if parsed is None:
        return PressOutcome("ignored", NOT_ACTIVE)
    approval_id, status = parsed
    request = services.approvals.get(approval_id)
    if request is None:
        return PressOutcome("ignored", NOT_ACTIVE)
    if query.from_user.id != request.user_id:
        logger.info(
            "press by someone else", extra={"approval_id": approval_id, "user_id": query.from_user.id}
        )
        return PressOutcome("not_allowed", NOT_YOURS)
    if request.status != "pending":
        return PressOutcome("already_decided", f"Already decided: {request.status}.")
    if request.task_token is None:
        return PressOutcome("not_ready", NOT_READY)
    now = iso_utc(services.clock())
    if not services.approvals.decide(approval_id, status, now, query.from_user.id):
        return PressOutcome("already_decided", "Already decided.")
    try:
        resumed = services.resumer.resume(request.task_token, {"decision": status})
    except Exception:
        services.approvals.decide(approval_id, "pending", now, None, expected=status)  # let a retry redo it
        raise
    if not resumed:
        services.approvals.decide(approval_id, "expired", now, None, expected=status)
        status = "expired"
    if request.message_id is not None:
        try:
            services.telegram().edit_message_text(
                request.chat_id,
                request.message_id,
                decided_html(request.message_html, status),
                parse_mode="HTML",
            )
        except TelegramError as error:
            logger.warning("could not show the decision", extra={"error": str(error)})
    logger.info("approval decided", extra={"approval_id": approval_id, "status": status})
    answers = {"approved": "Approved ✅", "denied": "Denied ❌", "expired": "This request has expired."}
    return PressOutcome("decided" if resumed else "expired", answers[status])
