"""Sending a suggested reply through a business connection, at most once ever (issue 42, items 4 and 6).

`send_suggestion_once` keys each attempt in the tool-call ledger (`secretary-send:<suggestion>:<attempt>`).
Before it calls Telegram, an attempt records its intent, a conditional write: of two calls at once one wins
and the other sends nothing. After the call it records what came of it. An intent that never got its outcome
is an attempt that may have sent the message and died before saying so: it is never made again, and the
owner is told the send could not be confirmed rather than risk a second message in their name. Only a failure
that certainly sent nothing (Telegram could not be reached, or asked to wait) lets a later call try again, in
at most three attempts in all.
"""

from __future__ import annotations

import json
import logging
import time
import uuid
from enum import StrEnum
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

from stepwise.telegram.errors import TelegramDeliveryUncertainError, TelegramError, TelegramTransientError

if TYPE_CHECKING:
    from collections.abc import Callable

    from stepwise.ledger.models import ToolCallRecord
    from stepwise.ledger.store import ToolCallLedger
    from stepwise.telegram.client import TelegramClient

logger = logging.getLogger(__name__)

MAX_ATTEMPTS = 3
# The longest a Lambda function runs: an attempt whose intent is older has ended one way or another, so its
# missing outcome means it died (maybe after sending), not that it is still waiting for Telegram.
ATTEMPT_GRACE_SECONDS = 15 * 60
_CALL_PREFIX = "secretary-send"


class RefusalReason(StrEnum):
    """Why a suggestion was not sent, for good."""

    CONNECTION_OFF = "connection_off"
    PAST_WINDOW = "past_window"
    NO_RIGHT = "no_right"
    TELEGRAM = "telegram"  # any other refusal: Telegram's own words are in the detail
    GAVE_UP = "gave_up"  # every attempt failed for now


_REASON_WORDS = {
    RefusalReason.CONNECTION_OFF: "the bot's connection to your account is off",
    RefusalReason.PAST_WINDOW: (
        "they last wrote more than 24 hours ago, and Telegram lets a bot reply only within 24 hours"
    ),
    RefusalReason.NO_RIGHT: "the bot is not allowed to reply in this chat",
    RefusalReason.TELEGRAM: "Telegram refused it",
    RefusalReason.GAVE_UP: f"Telegram could not be reached in {MAX_ATTEMPTS} attempts",
}
# Telegram's answers, by the words of their description (lower case). An unknown connection is TDLib's
# "business connection not found"; the others are the MTProto errors of messages.sendMessage, which the Bot
# API passes on by name. What Telegram answers for a disabled connection and for one without the right to
# reply is not documented for the Bot API: a 403 that names none of these is taken as no right to reply.
_CONNECTION_OFF = (
    "business connection not found",
    "business_connection_invalid",
    "business_connection_not_allowed",
)
_PAST_WINDOW = ("business_peer_usage_missing",)
_NO_RIGHT = ("bot_access_forbidden", "business_peer_invalid", "not enough rights")


class BusinessReply(NamedTuple):
    """A suggestion to send: its id (the key that makes it once), the connection, the contact's chat and the
    text."""

    key: str
    connection_id: str
    chat_id: int
    text: str


class Sent(NamedTuple):
    """This call sent it: Telegram's message id in the contact's chat."""

    message_id: int
    kind: Literal["sent"] = "sent"


class AlreadySent(NamedTuple):
    """An earlier call sent it (a second tap, a redelivered press): nothing more was sent."""

    message_id: int
    kind: Literal["already_sent"] = "already_sent"


class Refused(NamedTuple):
    """Not sent, for good; `detail` is Telegram's description (for the logs)."""

    reason: RefusalReason
    detail: str = ""
    kind: Literal["refused"] = "refused"

    @property
    def words(self) -> str:
        """Why, in words for the owner."""
        return _REASON_WORDS[self.reason]


class FailedForNow(NamedTuple):
    """Nothing was sent and it may be tried again (`attempts_left` more times)."""

    attempts_left: int
    detail: str = ""
    kind: Literal["failed_for_now"] = "failed_for_now"


class Unconfirmed(NamedTuple):
    """An attempt may have sent it and its outcome is not known: it is never sent again."""

    detail: str = ""
    kind: Literal["unconfirmed"] = "unconfirmed"


class InProgress(NamedTuple):
    """Another call is sending it now (since `started_at`): this one sent nothing; that one will tell."""

    started_at: float
    kind: Literal["in_progress"] = "in_progress"


type SendOutcome = Sent | AlreadySent | Refused | FailedForNow | Unconfirmed | InProgress


def send_call_id(key: str, attempt: int) -> str:
    """The ledger key of one attempt to send the suggestion `key`."""
    return f"{_CALL_PREFIX}:{key}:{attempt}"


def send_suggestion_once(
    ledger: ToolCallLedger,
    telegram: TelegramClient,
    reply: BusinessReply,
    *,
    now: Callable[[], float] = time.time,
    grace_seconds: float = ATTEMPT_GRACE_SECONDS,
) -> SendOutcome:
    """Send `reply.text` to the contact's chat through the connection, unless a call for the same key already
    did, is doing, or may have done it; returns what came of it (see the outcomes above)."""
    if not reply.key or not reply.connection_id:
        raise ValueError("a suggestion to send needs its key and its business connection id")
    token = uuid.uuid4().hex  # names this call's intents: a record with another token is another call's
    for attempt in range(1, MAX_ATTEMPTS + 1):
        call_id = send_call_id(reply.key, attempt)
        try:
            record = ledger.record_intent(call_id, json.dumps({"started_at": now()}), ref=token)
        except Exception as error:  # the store said no: nothing was sent, so this is safe to try again
            logger.warning("secretary send %s: could not record the attempt first: %r", call_id, error)
            return FailedForNow(MAX_ATTEMPTS - attempt + 1, "the attempt could not be recorded")
        if record.kind == "intent" and record.ref == token:
            return _attempt(ledger, telegram, reply, call_id, attempt)
        settled = _settled(record, now(), grace_seconds)
        if settled is not None:
            return settled
    return Refused(RefusalReason.GAVE_UP)


def refusal_reason(status: int | None, description: str) -> RefusalReason:
    """Why Telegram refused a business send, by its answer's status and words."""
    words = description.lower()
    if any(marker in words for marker in _CONNECTION_OFF):
        return RefusalReason.CONNECTION_OFF
    if any(marker in words for marker in _PAST_WINDOW):
        return RefusalReason.PAST_WINDOW
    if status == 403 or any(marker in words for marker in _NO_RIGHT):
        return RefusalReason.NO_RIGHT
    return RefusalReason.TELEGRAM


def _attempt(
    ledger: ToolCallLedger, telegram: TelegramClient, reply: BusinessReply, call_id: str, attempt: int
) -> SendOutcome:
    """Make the attempt whose intent this call recorded, then record its outcome."""
    outcome: SendOutcome
    try:
        message_id = telegram.send_message(
            reply.chat_id, reply.text, business_connection_id=reply.connection_id
        )
    except TelegramError as error:
        outcome = _after_failure(error, attempt)
        logger.warning("secretary send %s: %s (%s)", call_id, outcome.kind, error.description)
    else:
        outcome = Sent(message_id)
    try:
        ledger.complete(call_id, json.dumps(_stored(outcome)), is_error=not isinstance(outcome, Sent))
    except Exception:  # the outcome stands for this call; later ones find the intent and cannot confirm it
        logger.exception("secretary send %s: %s, but its record could not be written", call_id, outcome.kind)
    return outcome


def _after_failure(error: TelegramError, attempt: int) -> SendOutcome:
    if isinstance(error, TelegramDeliveryUncertainError) or (error.status or 0) >= 500:
        return Unconfirmed(error.description)  # Telegram may have sent it before failing to answer
    if isinstance(error, TelegramTransientError):  # it was never reached, or it asked to wait (429)
        left = MAX_ATTEMPTS - attempt
        return (
            FailedForNow(left, error.description)
            if left
            else Refused(RefusalReason.GAVE_UP, error.description)
        )
    return Refused(refusal_reason(error.status, error.description), error.description)


def _stored(outcome: SendOutcome) -> dict[str, Any]:
    """An attempt's outcome as its ledger record keeps it (the last failure for now too is kept as failed)."""
    match outcome:
        case Sent(message_id=message_id):
            return {"outcome": "sent", "message_id": message_id}
        case Refused(reason=RefusalReason.GAVE_UP, detail=detail) | FailedForNow(detail=detail):
            return {"outcome": "failed", "detail": detail}
        case Refused(reason=reason, detail=detail):
            return {"outcome": "refused", "reason": str(reason), "detail": detail}
        case Unconfirmed(detail=detail):
            return {"outcome": "unconfirmed", "detail": detail}
        case _:  # already sent, in progress: another call's attempt, never this one's
            raise ValueError(f"an attempt does not end {outcome.kind}")


def _settled(record: ToolCallRecord, now: float, grace_seconds: float) -> SendOutcome | None:
    """What another call's record of an attempt says; None when that attempt failed for now (try the next)."""
    data = _load(record.result)
    if record.kind == "intent":
        started_at = data.get("started_at")
        if isinstance(started_at, (int, float)) and now - started_at < grace_seconds:
            return InProgress(float(started_at))
        return Unconfirmed("an earlier attempt may have sent it; its outcome was never recorded")
    match data.get("outcome"):
        case "sent" if isinstance(data.get("message_id"), int):
            return AlreadySent(data["message_id"])
        case "refused" if data.get("reason") in RefusalReason:
            return Refused(RefusalReason(data["reason"]), str(data.get("detail", "")))
        case "failed":
            return None
        case _:
            return Unconfirmed(str(data.get("detail", "")))


def _load(text: str) -> dict[str, Any]:
    try:
        data = json.loads(text)
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}
