"""A suggested reply goes through the business connection at most once ever, and says what came of it: sent,
refused (in words for the owner), failed for now (three attempts at most), already sent, unconfirmed (an
attempt may have sent it and its outcome was never recorded), or in progress (another call is sending it)."""

from __future__ import annotations

from typing import Any

import pytest
from botocore.exceptions import ClientError

from stepwise.ledger.models import ToolCallRecord
from stepwise.secretary.sending import (
    ATTEMPT_GRACE_SECONDS,
    AlreadySent,
    BusinessReply,
    FailedForNow,
    InProgress,
    RefusalReason,
    Refused,
    SendOutcome,
    Sent,
    Unconfirmed,
    refusal_reason,
    send_call_id,
    send_suggestion_once,
)
from stepwise.telegram.errors import (
    TelegramBadRequest,
    TelegramDeliveryUncertainError,
    TelegramForbidden,
    TelegramTransientError,
)
from stepwise_local.in_memory.ledger import InMemoryToolCallLedger
from stepwise_local.in_memory.telegram import InMemoryTelegram

CONTACT_CHAT = 555
REPLY = BusinessReply(key="sugg-1", connection_id="bc-1", chat_id=CONTACT_CHAT, text="Yes, 6 pm works.")
# Telegram's answers to a business send it refuses (see stepwise_local.telegram_server's BUSINESS_* answers)
NOT_FOUND = TelegramBadRequest("sendMessage", 400, "Bad Request: business connection not found")
DISABLED = TelegramBadRequest("sendMessage", 400, "Bad Request: BUSINESS_CONNECTION_INVALID")
PAST_WINDOW = TelegramBadRequest("sendMessage", 400, "Bad Request: BUSINESS_PEER_USAGE_MISSING")
NO_RIGHT = TelegramForbidden("sendMessage", 403, "Forbidden: BOT_ACCESS_FORBIDDEN")
NEVER_REACHED = TelegramTransientError("sendMessage", None, "could not connect, nothing was sent")
RATE_LIMITED = TelegramTransientError("sendMessage", 429, "Too Many Requests: retry after 5", retry_after=5)
NO_ANSWER = TelegramDeliveryUncertainError(
    "sendMessage", None, "no answer in time; Telegram may have delivered it"
)


class Crash(BaseException):
    """The Lambda dying mid-invocation: not an Exception, so nothing in the code catches it."""


class Clock:
    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


class SayingNo(InMemoryToolCallLedger):
    """The ledger's store refusing writes (DynamoDB throttling), or the process dying at its `complete`."""

    def __init__(self) -> None:
        super().__init__()
        self.refuse_intents = 0
        self.on_complete: BaseException | None = None

    def record_intent(self, call_id: str, result: str, ref: str = "") -> ToolCallRecord:
        if self.refuse_intents:
            self.refuse_intents -= 1
            raise _throttled("PutItem")
        return super().record_intent(call_id, result, ref)

    def complete(self, call_id: str, result: str, is_error: bool = False) -> None:
        if self.on_complete is not None:
            raise self.on_complete
        super().complete(call_id, result, is_error)


def _throttled(operation: str) -> ClientError:
    error: Any = {"Error": {"Code": "ProvisionedThroughputExceededException", "Message": "slow down"}}
    return ClientError(error, operation)


def send(
    ledger: InMemoryToolCallLedger, telegram: InMemoryTelegram, clock: Clock | None = None
) -> SendOutcome:
    return send_suggestion_once(ledger, telegram, REPLY, now=clock or Clock())


def contact_messages(telegram: InMemoryTelegram) -> list[tuple[int, str, str | None]]:
    return [(m.chat_id, m.text, m.business_connection_id) for m in telegram.sent]


def test_a_suggestion_is_sent_through_the_connection_and_a_second_tap_sends_nothing_more() -> None:
    ledger, telegram = InMemoryToolCallLedger(), InMemoryTelegram()
    # When Send is tapped, then tapped again (or Telegram delivers the press again)
    first = send(ledger, telegram)
    second = send(ledger, telegram)
    # Then exactly one message reached the contact's chat, through the connection, in the owner's name
    assert first == Sent(1)
    assert second == AlreadySent(1)
    assert contact_messages(telegram) == [(CONTACT_CHAT, "Yes, 6 pm works.", "bc-1")]
    assert len(telegram.calls_of("send_message")) == 1
    assert telegram.calls_of("send_chat_action") == []  # the contact sees no typing, nothing but the reply
    record = ledger.get(send_call_id("sugg-1", 1))
    assert record is not None and (record.kind, record.is_error) == ("done", False)


@pytest.mark.parametrize(
    ("answer", "reason", "words"),
    [
        (NOT_FOUND, RefusalReason.CONNECTION_OFF, "the bot's connection to your account is off"),
        (DISABLED, RefusalReason.CONNECTION_OFF, "the bot's connection to your account is off"),
        (PAST_WINDOW, RefusalReason.PAST_WINDOW, "Telegram lets a bot reply only within 24 hours"),
        (NO_RIGHT, RefusalReason.NO_RIGHT, "the bot is not allowed to reply in this chat"),
        (
            TelegramBadRequest("sendMessage", 400, "Bad Request: message is too long"),
            RefusalReason.TELEGRAM,
            "Telegram refused it",
        ),
    ],
)
def test_a_refused_send_says_why_in_words_for_the_owner_and_is_never_tried_again(
    answer: TelegramBadRequest, reason: RefusalReason, words: str
) -> None:
    ledger, telegram = InMemoryToolCallLedger(), InMemoryTelegram()
    telegram.fail_next("send_message", answer)
    # When Telegram refuses the send, and Send is tapped again
    first = send(ledger, telegram)
    second = send(ledger, telegram)
    # Then both say it was refused, why, and Telegram was asked once
    assert first == Refused(reason, answer.description)
    assert second == first
    assert words in first.words
    assert contact_messages(telegram) == []
    assert len(telegram.calls_of("send_message")) == 1


def test_refusals_are_read_from_the_status_and_the_words_of_telegrams_answer() -> None:
    assert refusal_reason(400, "Bad Request: BUSINESS_CONNECTION_NOT_ALLOWED") is RefusalReason.CONNECTION_OFF
    assert refusal_reason(400, "Bad Request: BUSINESS_PEER_INVALID") is RefusalReason.NO_RIGHT
    assert refusal_reason(403, "Forbidden: something new") is RefusalReason.NO_RIGHT
    assert refusal_reason(400, "Bad Request: chat not found") is RefusalReason.TELEGRAM


@pytest.mark.parametrize("failure", [NEVER_REACHED, RATE_LIMITED], ids=["never reached", "rate limited"])
def test_a_send_that_certainly_sent_nothing_may_be_tried_again(failure: TelegramTransientError) -> None:
    ledger, telegram = InMemoryToolCallLedger(), InMemoryTelegram()
    telegram.fail_next("send_message", failure)
    # When the first attempt fails before reaching Telegram, and Send is tapped again, and again
    first = send(ledger, telegram)
    second = send(ledger, telegram)
    third = send(ledger, telegram)
    # Then the first failed for now, the second sent it, the third sent nothing more
    assert first == FailedForNow(2, failure.description)
    assert second == Sent(1)
    assert third == AlreadySent(1)
    assert contact_messages(telegram) == [(CONTACT_CHAT, "Yes, 6 pm works.", "bc-1")]


def test_after_three_attempts_that_failed_for_now_it_is_refused_for_good() -> None:
    ledger, telegram = InMemoryToolCallLedger(), InMemoryTelegram()
    telegram.fail_next("send_message", NEVER_REACHED, times=3)
    # When every attempt fails for now, and Send is tapped a fourth time (Telegram reachable again)
    outcomes = [send(ledger, telegram) for _ in range(4)]
    # Then two attempts are left, then one, then none: refused, and nothing more is tried
    assert outcomes[:2] == [
        FailedForNow(2, NEVER_REACHED.description),
        FailedForNow(1, NEVER_REACHED.description),
    ]
    assert outcomes[2] == Refused(RefusalReason.GAVE_UP, NEVER_REACHED.description)
    assert outcomes[3] == Refused(RefusalReason.GAVE_UP)
    assert outcomes[3].words == "Telegram could not be reached in 3 attempts"
    assert len(telegram.calls_of("send_message")) == 3
    assert contact_messages(telegram) == []


@pytest.mark.parametrize(
    "failure",
    [NO_ANSWER, TelegramTransientError("sendMessage", 502, "Bad Gateway")],
    ids=["no answer", "server error"],
)
def test_a_send_telegram_may_have_made_is_unconfirmed_and_never_repeated(
    failure: TelegramTransientError,
) -> None:
    ledger, telegram = InMemoryToolCallLedger(), InMemoryTelegram()
    telegram.fail_next("send_message", failure)
    # When the request went out and no clear answer came back, and Send is tapped again
    first = send(ledger, telegram)
    second = send(ledger, telegram)
    # Then both say it could not be confirmed, and Telegram was asked once
    assert first == Unconfirmed(failure.description)
    assert second == Unconfirmed(failure.description)
    assert len(telegram.calls_of("send_message")) == 1


def test_a_crash_between_the_send_and_its_record_is_never_sent_again_and_is_unconfirmed() -> None:
    ledger, telegram, clock = SayingNo(), InMemoryTelegram(), Clock()
    ledger.on_complete = Crash()
    # Given a call that sent the message and died before recording it
    with pytest.raises(Crash):
        send(ledger, telegram, clock)
    ledger.on_complete = None
    # When the press comes again at once, and again after the longest a Lambda function runs
    at_once = send(ledger, telegram, clock)
    clock.now += ATTEMPT_GRACE_SECONDS
    later = send(ledger, telegram, clock)
    # Then nothing more is sent: first it may still be running, then it could not be confirmed
    assert at_once == InProgress(1_800_000_000.0)
    assert isinstance(later, Unconfirmed)
    assert "may have sent it" in later.detail
    assert contact_messages(telegram) == [(CONTACT_CHAT, "Yes, 6 pm works.", "bc-1")]


def test_of_two_calls_at_once_one_sends_and_the_other_sends_nothing() -> None:
    ledger, clock = InMemoryToolCallLedger(), Clock()
    seen: list[SendOutcome] = []

    class SlowTelegram(InMemoryTelegram):
        """The second press arrives while the first waits for Telegram's answer."""

        def send_message(self, chat_id: int, text: str, **kwargs: Any) -> int:
            if not seen:
                seen.append(send_suggestion_once(ledger, self, REPLY, now=clock))
            return super().send_message(chat_id, text, **kwargs)

    telegram = SlowTelegram()
    # When two calls for the same suggestion overlap
    first = send_suggestion_once(ledger, telegram, REPLY, now=clock)
    # Then the first sent it, the second saw it in progress, and the contact got one message
    assert first == Sent(1)
    assert seen == [InProgress(clock.now)]
    assert contact_messages(telegram) == [(CONTACT_CHAT, "Yes, 6 pm works.", "bc-1")]
    assert send_suggestion_once(ledger, telegram, REPLY, now=clock) == AlreadySent(1)


def test_dynamodb_saying_no_before_the_send_sends_nothing_and_it_may_be_tried_again() -> None:
    ledger, telegram = SayingNo(), InMemoryTelegram()
    ledger.refuse_intents = 1
    # When the attempt cannot be recorded first, and Send is tapped again
    first = send(ledger, telegram)
    second = send(ledger, telegram)
    # Then the first sent nothing and used no attempt; the second sent it
    assert first == FailedForNow(3, "the attempt could not be recorded")
    assert second == Sent(1)
    assert len(telegram.calls_of("send_message")) == 1


def test_dynamodb_saying_no_after_the_send_reports_it_sent_and_later_calls_send_nothing() -> None:
    ledger, telegram, clock = SayingNo(), InMemoryTelegram(), Clock()
    ledger.on_complete = _throttled("PutItem")
    # When the message went out but its record could not be written
    first = send(ledger, telegram, clock)
    ledger.on_complete = None
    clock.now += ATTEMPT_GRACE_SECONDS
    later = send(ledger, telegram, clock)
    # Then this call knows it sent it; a later one cannot confirm it, and sends nothing
    assert first == Sent(1)
    assert isinstance(later, Unconfirmed)
    assert len(telegram.calls_of("send_message")) == 1


def test_a_record_it_cannot_read_is_taken_as_unconfirmed() -> None:
    ledger, telegram = InMemoryToolCallLedger(), InMemoryTelegram()
    ledger.complete(send_call_id("sugg-1", 1), "not json")
    assert isinstance(send(ledger, telegram), Unconfirmed)
    assert telegram.calls_of("send_message") == []


def test_a_suggestion_without_its_key_or_connection_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="key and its business connection"):
        send_suggestion_once(InMemoryToolCallLedger(), InMemoryTelegram(), REPLY._replace(key=""))
    with pytest.raises(ValueError, match="key and its business connection"):
        send_suggestion_once(InMemoryToolCallLedger(), InMemoryTelegram(), REPLY._replace(connection_id=""))
