"""The approval lifecycle, written once: open a request, show it with Approve / Deny buttons, take a press,
settle the decision (a request still pending when the wait ends expires, which counts as Deny) and edit the
message to show the outcome.

RunTools opens a request for the calls that need one and is handed the decision when the turn comes back;
RequestApproval shows it; the webhook takes the presses. Each only calls in here.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from stepwise.approvals.models import ApprovalCall, ApprovalRequest, ApprovalStatus, PressAction, Requester
from stepwise.approvals.wording import asks
from stepwise.telegram.errors import TelegramError
from stepwise.telegram.html_escape import escape_html
from stepwise.telegram.keyboard import InlineKeyboardButton, InlineKeyboardMarkup
from stepwise.turn.ids import iso_utc, utc_now

if TYPE_CHECKING:
    from collections.abc import Callable
    from datetime import datetime

    from stepwise.approvals.store import ApprovalStore
    from stepwise.telegram.client import TelegramClient
    from stepwise.telegram.conversation import Scope
    from stepwise.telegram.models import CallbackQuery
    from stepwise.turn.workflow import TurnResumer

logger = logging.getLogger(__name__)

# What a call that needs approval comes to, once its turn is back from the wait.
Decision = Literal["approved", "denied", "expired", "unavailable"]

# A pending request whose wait never began (RequestApproval never stored a task token) is handed to the wait
# again: RunTools died after creating it, or RequestApproval failed before it could store the token. Bounded,
# so a RequestApproval that can never run ends as "unavailable" instead of looping.
MAX_APPROVAL_ASKS = 6

DENIED = "Denied by the user; nothing was changed."
EXPIRED = "The user did not answer the approval request in time; counted as denied: nothing was changed."
UNAVAILABLE = "Approval could not be requested, so the call did not run: nothing was changed."

NOT_ACTIVE = "This button is no longer active."
NOT_YOURS = "Only the person this request was sent to can answer it."
NOT_READY = "One moment — this request is still being set up. Please tap again."

CALLBACK_PATTERN = re.compile(r"ap:([A-Za-z0-9_-]{1,40}):([ad])")
DECISION_TEXT: dict[ApprovalStatus, str] = {
    "approved": "✅ Approved",
    "denied": "❌ Denied",  # the decision only: the answer that follows says what was not done
    "expired": "⌛ No answer in time — counted as Deny",  # the answer that follows says what was not done
    "pending": "",
}
SUGGESTION_DECISION_TEXT: dict[ApprovalStatus, str] = {  # a suggested reply's (secretary mode)
    "approved": "Sending…",
    "denied": "Skipped: nothing was sent.",
    "expired": "⌛ No answer in time: nothing was sent.",
}


class ApprovalMissingError(RuntimeError):
    """The approval request RunTools created is gone (a wiring error)."""


# ------------------------------------------------------------------------------------- open (RunTools)
def open_request(
    approvals: ApprovalStore,
    *,
    approval_id: str,
    turn_id: str,
    scope: Scope,
    step: int,
    calls: list[ApprovalCall],
    requester: Requester,
    now: str,
) -> ApprovalRequest:
    """Store a new pending request of `requester` for `calls`, shown in the scope's conversation and answered
    by the member who asked; the turn then waits for it (RequestApproval shows it)."""
    request = ApprovalRequest(
        approval_id=approval_id,
        turn_id=turn_id,
        chat_id=scope.conversation.chat_id,
        topic=scope.conversation.topic,
        account=scope.conversation.account,
        # in a contact's chat of a business account the owner answers, never the contact who spoke
        user_id=scope.owner if scope.conversation.in_business else scope.user_id,
        asker=scope.sender,
        step=step,
        calls=calls,
        requester=requester,
        created_at=now,
    )
    approvals.create(request)
    logger.info(
        "approval needed",
        extra={"approval_id": approval_id, "calls": len(calls), "requester": requester.kind},
    )
    return request


def wait_never_began(approvals: ApprovalStore, approval_id: str | None, asks: int) -> bool:
    """Whether the request should be handed to the wait again: still pending, never shown (no task token),
    and asked fewer than MAX_APPROVAL_ASKS times."""
    if approval_id is None or asks >= MAX_APPROVAL_ASKS:
        return False
    request = approvals.get(approval_id)
    return request is not None and request.status == "pending" and request.task_token is None


# ------------------------------------------------------------------------------ show (RequestApproval)
def human_duration(seconds: int) -> str:
    """3600 -> "1 hour", 90 -> "2 minutes"."""
    for unit, size in (("day", 86_400), ("hour", 3600), ("minute", 60)):
        if seconds >= size:
            count = round(seconds / size)
            return f"{count} {unit}{'s' if count != 1 else ''}"
    return f"{seconds} second{'s' if seconds != 1 else ''}"


def approval_html(requester: Requester, calls: list[ApprovalCall], timeout_seconds: int) -> str:
    """The request message: who asks, exactly what will happen, and what silence means."""
    lines = ["🔐 <b>Approval needed</b>", escape_html(asks(requester, [call.description for call in calls]))]
    lines.append(f"<i>No answer within {human_duration(timeout_seconds)} counts as Deny.</i>")
    return "\n".join(lines)


def approval_keyboard(approval_id: str) -> InlineKeyboardMarkup:
    """Approve / Deny buttons; the callback data carries only the short id (well under 64 bytes)."""
    return InlineKeyboardMarkup(
        inline_keyboard=[
            [
                InlineKeyboardButton(text="Approve ✅", callback_data=f"ap:{approval_id}:a"),
                InlineKeyboardButton(text="Deny ❌", callback_data=f"ap:{approval_id}:d"),
            ]
        ]
    )


def show_request(
    approvals: ApprovalStore,
    telegram: Callable[[], TelegramClient],
    approval_id: str,
    task_token: str,
    timeout_seconds: int,
) -> int:
    """Store the task token first (a fast press must find it), then send the message once; returns the id
    of the message that carries the buttons."""
    request = approvals.get(approval_id)
    if request is None:
        raise ApprovalMissingError(f"no approval request {approval_id}")
    approvals.attach_token(request.approval_id, task_token)
    message_id = request.message_id  # set: a retried state, the buttons are out already
    if message_id is None:
        html = approval_html(request.requester, request.calls, timeout_seconds)
        chat_id, topic = request.shown_in
        message_id = telegram().send_message(
            chat_id,
            html,
            parse_mode="HTML",
            reply_markup=approval_keyboard(request.approval_id),
            message_thread_id=topic,
        )
        approvals.attach_message(request.approval_id, message_id, html)
        logger.info("approval requested", extra={"approval_id": request.approval_id})
    return message_id


# ------------------------------------------------------------------------------------- press (webhook)
@dataclass(eq=False, repr=False)
class PressServices:
    """What handling a press needs."""

    approvals: ApprovalStore
    telegram: Callable[[], TelegramClient]
    resumer: TurnResumer
    clock: Callable[[], datetime] = utc_now


@dataclass(frozen=True)
class PressOutcome:
    """What the press did: `decided` (approved/denied), or why it changed nothing."""

    action: PressAction
    answer: str


def parse_callback(data: str | None) -> tuple[str, ApprovalStatus] | None:
    """(approval_id, "approved" | "denied") from a button's callback data, or None."""
    match = CALLBACK_PATTERN.fullmatch(data or "")  # not .match: "$" would also accept a trailing newline
    if match is None:
        return None
    return match.group(1), "approved" if match.group(2) == "a" else "denied"


def handle_press(
    query: CallbackQuery, services: PressServices, allowed_users: frozenset[int]
) -> PressOutcome:
    """Decide a pending approval at most once; every press gets an answer, a stray one changes nothing."""
    outcome = _decide(query, services, query.from_user.id in allowed_users and not query.from_user.is_bot)
    try:
        services.telegram().answer_callback_query(query.id, outcome.answer)
    except TelegramError as error:
        logger.warning("answerCallbackQuery failed", extra={"error": str(error)})
    return outcome


def not_yours(request: ApprovalRequest) -> str:
    """What a tap by anyone but the member who asked is told (in a group, naming that member)."""
    if request.asker:
        return f"Only the member who asked ({request.asker}) can answer this."
    return NOT_YOURS


def _decide(query: CallbackQuery, services: PressServices, allowed: bool) -> PressOutcome:
    parsed = parse_callback(query.data)
    if parsed is None:
        return PressOutcome("ignored", NOT_ACTIVE)
    return decide(parsed[0], parsed[1], query.from_user.id, services, allowed=allowed)


def decide(
    approval_id: str, status: ApprovalStatus, user_id: int, services: PressServices, *, allowed: bool = True
) -> PressOutcome:
    """The press of Approve (`approved`) or Deny (`denied`) by `user_id`, from the chat's buttons or the Mini
    App: decides the request at most once, resumes its waiting turn and edits its message to show the
    answer. Only the user who asked may answer (anyone else is told who may); `allowed` is whether that user
    is still on the allowlist (the caller's to check: the webhook by the update, the Mini App by its gate)."""
    request = services.approvals.get(approval_id)
    if request is None:
        return PressOutcome("ignored", NOT_ACTIVE)
    if user_id != request.user_id:
        logger.info("press by someone else", extra={"approval_id": approval_id, "user_id": user_id})
        return PressOutcome("not_allowed", not_yours(request))
    if not allowed:  # the asker, since taken off the allowlist
        return PressOutcome("not_allowed", NOT_YOURS)
    if request.status != "pending":
        return PressOutcome("already_decided", f"Already decided: {request.status}.")
    if request.task_token is None:
        return PressOutcome("not_ready", NOT_READY)
    now = iso_utc(services.clock())
    if not services.approvals.decide(approval_id, status, now, user_id):
        return PressOutcome("already_decided", "Already decided.")
    try:
        resumed = services.resumer.resume(request.task_token, {"decision": status})
    except Exception:
        services.approvals.decide(approval_id, "pending", now, None, expected=status)  # let a retry redo it
        raise
    if not resumed:
        services.approvals.decide(approval_id, "expired", now, None, expected=status)
        status = "expired"
    _show_decision(request, status, services.telegram, "could not show the decision")
    logger.info("approval decided", extra={"approval_id": approval_id, "status": status})
    answers = {"approved": "Approved ✅", "denied": "Denied ❌", "expired": "This request has expired."}
    if request.requester.kind == "secretary":  # a suggested reply's Send and Skip
        answers = {"approved": "Sending ✅", "denied": "Skipped ❌", "expired": "This reply has expired."}
    return PressOutcome("decided" if resumed else "expired", answers[status])


def withdraw(approval_id: str, why: str | None, services: PressServices) -> bool:
    """End a pending request without a tap (counted as Deny): its turn resumes and its message says `why`
    (None: the message is left as it is, for whoever shows something else in it). False when it was decided
    already (a tap came first). A turn that cannot be resumed (its wait ended) finds the request decided
    when it settles."""
    request = services.approvals.get(approval_id)
    if request is None or request.status != "pending":
        return False
    if not services.approvals.decide(approval_id, "denied", iso_utc(services.clock()), None):
        return False
    if request.task_token is not None:
        services.resumer.resume(request.task_token, {"decision": "denied"})
    if why is not None:
        _show_decision(request, "denied", services.telegram, "could not show the withdrawal", why)
    logger.info("approval withdrawn", extra={"approval_id": approval_id})
    return True


# ------------------------------------------------------------------------ settle and expire (RunTools)
def settle(
    approvals: ApprovalStore,
    telegram: Callable[[], TelegramClient],
    approval_id: str | None,
    now: str,
    why: str | None = None,
) -> Decision | None:
    """The decision on a step's request; None when none was asked yet.

    Reaching here with the request still pending means the wait ended without a press (timeout) or the
    request could not be shown: it expires, which counts as Deny, and its message says so (or says `why`,
    when the caller knows better: a background job that was stopped).
    """
    if approval_id is None:
        return None
    request = approvals.get(approval_id)
    if request is None:
        return "unavailable"
    if request.status == "pending":
        if not approvals.decide(request.approval_id, "expired", now, None):
            request = approvals.get(approval_id) or request
        else:
            request.status = "expired"
            _show_decision(request, "expired", telegram, "could not mark the approval as expired", why)
    if request.status == "expired" and request.message_id is None:
        return "unavailable"
    return request.status if request.status != "pending" else "unavailable"


def refusal(decision: Decision) -> str:
    """What the model is told about a call that was not approved."""
    return {"denied": DENIED, "expired": EXPIRED}.get(decision, UNAVAILABLE)


# ------------------------------------------------------------------------------------ edit the message
def decided_html(message_html: str, status: ApprovalStatus, why: str | None = None) -> str:
    """The request message with its decision (or `why` it ended) appended (shown after the buttons are
    removed)."""
    return f"{message_html}\n\n<b>{escape_html(why or DECISION_TEXT[status])}</b>"


def _show_decision(
    request: ApprovalRequest,
    status: ApprovalStatus,
    telegram: Callable[[], TelegramClient],
    failure: str,
    why: str | None = None,
) -> None:
    """Edit the request's message to show the decision (which also removes the buttons); best effort."""
    if request.message_id is None:
        return
    if why is None and request.requester.kind == "secretary":
        why = SUGGESTION_DECISION_TEXT.get(status)
    try:
        telegram().edit_message_text(
            request.shown_in[0],
            request.message_id,
            decided_html(request.message_html, status, why),
            parse_mode="HTML",
        )
    except TelegramError as error:
        logger.warning(failure, extra={"error": str(error)})
