"""The webhook's decisions, with an in-memory inbox and turn starter."""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from support.turn_fakes import RecordingStarter

from stepwise.approvals.lifecycle import PressServices
from stepwise.inbox.sequencer import Sequencer
from stepwise.secretary.connections import WELCOME
from stepwise.secretary.intake import Intake
from stepwise.telegram.conversation import Conversation
from stepwise.telegram.errors import TelegramError
from stepwise.telegram.models import Update
from stepwise.warmups.warmer import Warmups, WarmupTargets, forget_container
from stepwise.webhook import HANDLED_UPDATES, WebhookServices, handle_update, secret_matches
from stepwise_local import updates
from stepwise_local.in_memory.approvals import InMemoryApprovalStore
from stepwise_local.in_memory.history import InMemoryMessageRepository
from stepwise_local.in_memory.inbox import InMemoryChatInbox
from stepwise_local.in_memory.secretary import InMemoryBusinessConnectionStore, InMemorySuggestionStore
from stepwise_local.in_memory.telegram import InMemoryTelegram

SECRET = "s3cret-token"


@pytest.fixture
def starter() -> RecordingStarter:
    return RecordingStarter()


class RecordingResumer:
    """A TurnResumer that remembers what it resumed; tokens in `stale` have timed out."""

    def __init__(self) -> None:
        self.resumed: list[tuple[str, dict[str, Any]]] = []
        self.stale: set[str] = set()

    def resume(self, task_token: str, output: dict[str, Any]) -> bool:
        if task_token in self.stale:
            return False
        self.resumed.append((task_token, output))
        return True


@pytest.fixture
def telegram() -> InMemoryTelegram:
    return InMemoryTelegram()


@pytest.fixture
def approvals() -> InMemoryApprovalStore:
    return InMemoryApprovalStore()


@pytest.fixture
def resumer() -> RecordingResumer:
    return RecordingResumer()


@pytest.fixture
def inbox() -> InMemoryChatInbox:
    return InMemoryChatInbox()


@pytest.fixture
def services(
    starter: RecordingStarter,
    inbox: InMemoryChatInbox,
    telegram: InMemoryTelegram,
    approvals: InMemoryApprovalStore,
    resumer: RecordingResumer,
) -> WebhookServices:
    presses = PressServices(approvals=approvals, telegram=lambda: telegram, resumer=resumer)
    sequencer = Sequencer(inbox=inbox, starter=starter, approval_timeout_seconds=120)
    return WebhookServices(
        secret=SECRET,
        allowed_users=frozenset({42, 43}),
        sequencer=lambda: sequencer,
        presses=lambda: presses,
    )


def post(services: WebhookServices, update: dict[str, Any] | str, secret: str | None = SECRET) -> Any:
    return handle_update(secret, update if isinstance(update, str) else json.dumps(update), services)


def test_an_allowlisted_text_message_is_kept_in_its_inbox_and_starts_the_chats_next_turn(
    services: WebhookServices, starter: RecordingStarter, inbox: InMemoryChatInbox
) -> None:
    # Given a text message from an allowlisted user
    update = updates.text_message(42, "hello", update_id=555)
    # When it reaches the webhook
    outcome = post(services, update)
    # Then the message waits in the chat's inbox and the chat's first turn starts, carrying ids only
    assert (outcome.status, outcome.action) == (200, "started")
    assert list(starter.started) == ["chat42-turn1-update555"]
    payload = starter.started["chat42-turn1-update555"]
    assert payload == {
        "turn": {"turn_id": "chat42-turn1-update555", "chat_id": 42, "user_id": 42, "update_id": 555},
        "limits": {"approval_timeout_seconds": 120},
    }
    (waiting,) = inbox.pending(Conversation(42))
    assert (waiting.text, waiting.update_id, waiting.status) == ("hello", 555, "queued")
    assert waiting.received_at.endswith("Z")
    assert (
        inbox.holder(Conversation(42)) is not None
        and inbox.holder(Conversation(42))[0] == "chat42-turn1-update555"
    )  # type: ignore[index]


def test_a_message_for_a_busy_chat_waits_and_starts_nothing(
    services: WebhookServices, starter: RecordingStarter, inbox: InMemoryChatInbox
) -> None:
    assert post(services, updates.text_message(42, "first", update_id=600)).action == "started"
    second = post(services, updates.text_message(42, "second", update_id=601))
    assert (second.status, second.action) == (200, "queued")
    assert list(starter.started) == ["chat42-turn1-update600"]
    assert [m.text for m in inbox.pending(Conversation(42))] == ["first", "second"]


def test_a_retried_delivery_of_a_waiting_message_restarts_a_start_that_never_happened(
    services: WebhookServices, starter: RecordingStarter, inbox: InMemoryChatInbox
) -> None:
    # Given a first delivery that took the lease but died before StartExecution
    update = updates.text_message(42, "hello", update_id=610)

    class DiesOnce:
        def start(self, name: str, payload: dict[str, Any]) -> bool:
            raise ConnectionError("Step Functions unreachable")

    services.sequencer().starter = DiesOnce()
    with pytest.raises(ConnectionError):
        post(services, update)
    # When Telegram retries the update (it got no 200)
    services.sequencer().starter = starter
    outcome = post(services, update)
    # Then the turn that holds the lease is started, once
    assert outcome.action == "queued"
    assert list(starter.started) == ["chat42-turn1-update610"]
    assert post(services, update).action == "queued"  # and again: still the same single turn
    assert list(starter.started) == ["chat42-turn1-update610"]


def test_the_same_update_twice_starts_one_turn(services: WebhookServices, starter: RecordingStarter) -> None:
    update = updates.text_message(42, "hello", update_id=556)
    assert post(services, update).action == "started"
    second = post(services, update)  # still waiting: not a new message, and its turn exists
    assert (second.status, second.action) == (200, "queued")
    services.sequencer().take_batch(Conversation(42), "chat42-turn1-update555")
    third = post(services, update)  # being answered
    assert (third.status, third.action) == (200, "duplicate")
    services.sequencer().end_turn(Conversation(42), "chat42-turn1-update555", "answered")
    fourth = post(services, update)  # answered
    assert (fourth.status, fourth.action) == (200, "duplicate")
    assert len(starter.started) == 1


@pytest.mark.parametrize(("secret", "status"), [(None, 401), ("wrong", 403), ("", 403), (SECRET + "x", 403)])
def test_a_missing_or_wrong_secret_is_rejected_and_starts_nothing(
    services: WebhookServices, starter: RecordingStarter, secret: str | None, status: int
) -> None:
    outcome = post(services, updates.text_message(42, "hello"), secret=secret)
    assert outcome.status == status
    assert starter.started == {}


@pytest.mark.parametrize(
    "update",
    [
        updates.text_message(99, "let me in"),
        updates.edited_message(42, "edited"),
        {"update_id": 1, "my_chat_member": {"chat": {"id": 1, "type": "private"}}},
        {
            "update_id": 2,
            "message": {"message_id": 1, "date": 0, "chat": {"id": 5, "type": "channel"}, "text": "x"},
        },
    ],
    ids=["not-allowlisted", "edit", "chat-member", "no-sender"],
)
def test_updates_it_does_not_handle_get_200_and_start_nothing(
    services: WebhookServices, starter: RecordingStarter, update: dict[str, Any]
) -> None:
    outcome = post(services, update)
    assert outcome.status == 200 and outcome.action in {"ignored", "not_allowed"}
    assert starter.started == {}


def test_a_bot_sender_is_never_allowed(services: WebhookServices, starter: RecordingStarter) -> None:
    update = updates.text_message(42, "I am a bot")
    update["message"]["from"]["is_bot"] = True
    assert post(services, update).action == "not_allowed"
    assert starter.started == {}


def test_an_empty_allowlist_allows_nobody(services: WebhookServices, starter: RecordingStarter) -> None:
    services = services._replace(allowed_users=frozenset())
    assert post(services, updates.text_message(42, "hello")).action == "not_allowed"


@pytest.mark.parametrize("body", ["", "not json", "[]", "{}", '{"update_id": "abc"}', "\x00\xff"])
def test_a_body_that_is_not_an_update_never_crashes_and_starts_nothing(
    services: WebhookServices, starter: RecordingStarter, body: str
) -> None:
    outcome = post(services, body)
    assert (outcome.status, outcome.action) == (200, "invalid"), "200: Telegram must not redeliver it"
    assert starter.started == {}


def test_secret_comparison() -> None:
    assert secret_matches("abc", "abc")
    assert not secret_matches(None, "abc")
    assert not secret_matches("abd", "abc")
    assert not secret_matches("ünïcode", "abc")


def _set(update: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    """The update with the field at a dotted path set to `value`."""
    *parents, last = path.split(".")
    target = update
    for key in parents:
        target = target[key]
    target[last] = value
    return update


@pytest.mark.parametrize(
    ("path", "value"),
    [
        ("update_id", 10**40),
        ("update_id", 2**53),
        ("update_id", -1),
        ("update_id", True),
        ("update_id", "557"),
        ("update_id", 557.0),
        ("message.from.id", 10**40),
        ("message.from.id", 2**53),
        ("message.from.id", True),
        ("message.from.id", "42"),
        ("message.from.is_bot", "false"),
        ("message.from.is_bot", 0),
        ("message.chat.id", 10**40),
        ("message.chat.id", -(2**53)),
        ("message.chat.id", 42.0),
        ("message.message_id", 0),
        ("message.message_id", 2**31),
        ("message.message_id", False),
        ("message.date", -1),
        ("message.date", "1700000000"),
        ("message.text", 12345),
        ("message.text", "x" * 8193),
        ("message.text", ["hello"]),
    ],
)
def test_numbers_and_texts_outside_telegrams_ranges_or_types_are_rejected(
    services: WebhookServices, starter: RecordingStarter, path: str, value: Any
) -> None:
    # Given an allowlisted text message with one field out of Telegram's documented range or type
    update = _set(updates.text_message(42, "hello", update_id=557), path, value)
    # When it reaches the webhook
    outcome = post(services, update)
    # Then it is dropped (200, so that Telegram does not redeliver it) and nothing starts (no 500, nothing
    # that DynamoDB or Step Functions would refuse)
    assert (outcome.status, outcome.action) == (200, "invalid")
    assert path in outcome.detail, "the reason names the field"
    assert str(value)[:6] not in outcome.detail.split(":", 1)[1].replace(path, ""), "and never its value"
    assert starter.started == {}


def test_the_largest_values_telegram_may_send_start_a_turn_with_a_valid_execution_name(
    services: WebhookServices, starter: RecordingStarter
) -> None:
    # Given the extreme in-range values: update_id, a supergroup chat id, message_id and a text of 8192 chars
    services = services._replace(allowed_users=frozenset({2**53 - 1}))
    update = updates.text_message(2**53 - 1, "é" * 8192, chat_id=-(2**53 - 1), update_id=2**53 - 1)
    update["message"]["message_id"] = 2**31 - 1
    # When it reaches the webhook
    outcome = post(services, update)
    # Then the turn starts with exactly those numbers, under a name Step Functions accepts (<= 80 chars)
    assert (outcome.status, outcome.action) == (200, "started")
    ((name, payload),) = starter.started.items()
    assert len(name) <= 80 and name == f"chat-{2**53 - 1}-turn1-update{2**53 - 1}"
    assert (payload["turn"]["chat_id"], payload["turn"]["user_id"]) == (-(2**53 - 1), 2**53 - 1)
    assert payload["turn"]["update_id"] == 2**53 - 1
    assert services.sequencer().inbox.pending(Conversation(-(2**53 - 1)))[0].telegram_message_id == 2**31 - 1


@pytest.mark.parametrize(
    "text", ['"\\ud800"', '"a\\udfffb"'], ids=["lone-high-surrogate", "lone-low-surrogate"]
)
def test_text_with_a_lone_surrogate_is_rejected(
    services: WebhookServices, starter: RecordingStarter, text: str
) -> None:
    body = json.dumps(updates.text_message(42, "PLACEHOLDER")).replace('"PLACEHOLDER"', text)
    outcome = post(services, body)
    assert (outcome.status, outcome.action, starter.started) == (200, "invalid", {})


def test_callback_data_over_64_bytes_is_rejected(
    services: WebhookServices, telegram: InMemoryTelegram
) -> None:
    message = {"message_id": 1, "date": 0, "chat": {"id": 42, "type": "private"}, "text": "?"}
    fits = updates.callback_query(42, "é" * 32, message)  # 64 bytes in UTF-8
    too_long = updates.callback_query(42, "é" * 32 + "x", message)
    assert post(services, fits).status == 200
    assert (post(services, too_long).status, post(services, too_long).action) == (200, "invalid")
    assert len(telegram.calls_of("answer_callback_query")) == 1, "only the valid press was answered"


def test_a_secret_header_with_a_lone_surrogate_is_forbidden(
    services: WebhookServices, starter: RecordingStarter
) -> None:
    outcome = post(services, updates.text_message(42, "hello"), secret="\ud800" + SECRET)
    assert (outcome.status, starter.started) == (403, {})


def test_a_photo_with_a_caption_waits_in_the_inbox_with_its_file_id_and_starts_a_turn(
    services: WebhookServices, starter: RecordingStarter, inbox: InMemoryChatInbox
) -> None:
    outcome = post(services, updates.photo_message(42, "AgACphoto", 90_000, caption="dinner?", update_id=700))
    assert (outcome.status, outcome.action) == (200, "started")
    (waiting,) = inbox.pending(Conversation(42))
    assert waiting.text == "dinner?"
    assert waiting.attachment is not None
    assert (waiting.attachment.kind, waiting.attachment.file_id, waiting.attachment.size) == (
        "photo",
        "AgACphoto",
        90_000,
    )


def test_a_sticker_starts_a_turn_that_tells_the_user_what_cannot_be_done(
    services: WebhookServices, starter: RecordingStarter, inbox: InMemoryChatInbox
) -> None:
    assert post(services, updates.sticker_message(42)).action == "started"
    (waiting,) = inbox.pending(Conversation(42))
    assert waiting.attachment is not None and waiting.attachment.refusal is not None


def test_a_voice_note_starts_a_turn_that_transcribes_it(
    services: WebhookServices, starter: RecordingStarter, inbox: InMemoryChatInbox
) -> None:
    assert post(services, updates.voice_message(42, caption="for the shop")).action == "started"
    (waiting,) = inbox.pending(Conversation(42))
    assert waiting.attachment is not None and waiting.attachment.taken and waiting.attachment.seconds == 3
    assert waiting.text == "for the shop"  # the caption, kept beside the transcript


def test_a_message_with_neither_text_nor_a_file_starts_nothing(
    services: WebhookServices, starter: RecordingStarter
) -> None:
    update = updates.text_message(42, "x")
    del update["message"]["text"]
    update["message"]["location"] = {"latitude": 1.0, "longitude": 2.0}
    assert post(services, update).action == "ignored"
    assert starter.started == {}


class OrderedStarter(RecordingStarter):
    """A RecordingStarter that writes its starts into a shared log of events."""

    def __init__(self, events: list[str]) -> None:
        super().__init__()
        self.events = events
        self.expect_warmups = 0  # wait (up to a second) for this many warm-ups already on their way

    def start(self, name: str, payload: dict[str, Any]) -> bool:
        deadline = time.monotonic() + 1.0
        while sum(e.startswith("warm") for e in self.events) < self.expect_warmups:
            if time.monotonic() > deadline:
                break
            time.sleep(0.001)
        self.events.append("turn started")
        return super().start(name, payload)


def warmed_webhook(events: list[str], clock: list[datetime]) -> WebhookServices:
    """Webhook services whose warm-ups and turn starts are logged in order, on a clock the test moves."""
    targets = WarmupTargets("CallModel", "FinishTurn", "RunTools")
    sequencer = Sequencer(inbox=InMemoryChatInbox(), starter=OrderedStarter(events), clock=lambda: clock[0])
    return WebhookServices(
        secret=SECRET,
        allowed_users=frozenset({42}),
        sequencer=lambda: sequencer,
        presses=lambda: pytest.fail("no press here"),
        clock=lambda: clock[0],
        warmups=Warmups(targets, lambda function: events.append(f"warm {function}"), quiet_seconds=300),
    )


def test_after_a_quiet_spell_of_the_whole_stack_warm_ups_leave_before_the_turn_starts() -> None:
    # Given a webhook container that is new (the stack was quiet)
    forget_container()
    events: list[str] = []
    services = warmed_webhook(events, [datetime(2026, 11, 25, 22, 0, tzinfo=UTC)])
    # (warm-ups run in worker threads: the start waits for two already sent, if they were, before it)
    services.sequencer().starter.expect_warmups = 2  # type: ignore[attr-defined]
    # When a message arrives
    assert post(services, updates.text_message(42, "hello", update_id=900)).action == "started"
    # Then CallModel's and FinishTurn's warm-ups were invoked before the turn was started
    assert set(events[:2]) == {"warm CallModel", "warm FinishTurn"} and events[2:] == ["turn started"]


def test_a_quiet_chat_on_a_busy_stack_is_warmed_once_its_turn_has_started() -> None:
    # Given a webhook that answered another chat a minute ago
    forget_container()
    events: list[str] = []
    clock = [datetime(2026, 11, 25, 22, 0, tzinfo=UTC)]
    services = warmed_webhook(events, clock)
    services = services._replace(allowed_users=frozenset({42, 43}))
    post(services, updates.text_message(43, "hi", update_id=901))
    events.clear()
    clock[0] += timedelta(minutes=1)
    # When a chat that never spoke sends a message
    post(services, updates.text_message(42, "hello", update_id=902))
    # Then its turn started first, and the warm-ups followed (its chat was quiet, the stack was not)
    assert events[0] == "turn started" and set(events[1:]) == {"warm CallModel", "warm FinishTurn"}
    # And a second message from a busy chat a moment later sends none
    events.clear()
    clock[0] += timedelta(seconds=5)
    post(services, updates.text_message(42, "and more", update_id=903))
    assert not any(e.startswith("warm") for e in events)


# ---------------------------------------------------------------------- secretary mode (docs/secretary.md)
def with_business(services: WebhookServices, telegram: InMemoryTelegram) -> tuple[WebhookServices, Any]:
    store = InMemoryBusinessConnectionStore()
    intake = Intake(
        connections=store,
        suggestions=InMemorySuggestionStore(),
        sequencer=services.sequencer,
        history=lambda: InMemoryMessageRepository(),
        presses=services.presses,
        telegram=lambda: telegram,
        new_id=lambda: "m1",
        clock=lambda: datetime(2026, 11, 28, tzinfo=UTC),
        wait_seconds=86_400,
    )
    return services._replace(
        business=lambda: store, telegram=lambda: telegram, secretary=lambda: intake
    ), store


def test_an_owners_business_connection_is_kept_and_welcomed_once(
    services: WebhookServices, telegram: InMemoryTelegram, starter: RecordingStarter
) -> None:
    services, store = with_business(services, telegram)
    update = updates.business_connection(42, connection_id="bc-42", update_id=700)
    outcome = post(services, update)
    assert (outcome.status, outcome.action, outcome.detail) == (200, "connection_noted", "welcomed")
    assert (outcome.update_id, outcome.chat_id) == (700, 42)
    again = post(services, update)  # Telegram delivers it again
    assert (again.action, again.detail) == ("connection_noted", "kept")
    assert [(m.chat_id, m.text) for m in telegram.sent] == [(42, WELCOME)]
    assert store.get("bc-42") is not None and starter.started == {}


def test_a_strangers_business_connection_keeps_nothing_and_says_nothing(
    services: WebhookServices, telegram: InMemoryTelegram
) -> None:
    services, store = with_business(services, telegram)
    outcome = post(services, updates.business_connection(99, connection_id="bc-99"))
    assert (outcome.status, outcome.action) == (200, "ignored")
    assert store.get("bc-99") is None and telegram.sent == []


def test_an_owner_telegram_could_not_tell_is_asked_for_again(
    services: WebhookServices, telegram: InMemoryTelegram
) -> None:
    services, _ = with_business(services, telegram)
    telegram.fail_next("send_message", TelegramError("sendMessage", 502, "Bad Gateway"))
    update = updates.business_connection(42, connection_id="bc-42")
    assert (post(services, update).status, post(services, update).detail) == (503, "welcomed")


def test_a_contacts_message_starts_a_secretary_turn_only_through_a_known_connection(
    services: WebhookServices, telegram: InMemoryTelegram, starter: RecordingStarter, inbox: InMemoryChatInbox
) -> None:
    services, _ = with_business(services, telegram)
    post(services, updates.business_connection(42, connection_id="bc-42"))
    unknown = post(services, updates.business_message(7, "hi", connection_id="bc-unknown"))
    assert (unknown.action, unknown.detail) == ("ignored", "unknown or disabled business connection")
    assert starter.started == {}
    known = post(services, updates.business_message(7, "hi", connection_id="bc-42", update_id=901))
    assert (known.status, known.action) == (200, "started")
    (name,) = starter.started
    assert name == "chat7b42-turn1-update901"
    (queued,) = inbox.pending(Conversation(7, account=42))
    assert (queued.kind.kind, queued.user_id, queued.sender) == ("secretary", 7, "Contact")
    assert inbox.pending(Conversation(7)) == [] and inbox.pending(Conversation(42)) == []
    deleted = {
        "update_id": 9001,
        "deleted_business_messages": {
            "business_connection_id": "bc-42",
            "chat": {"id": 7, "type": "private"},
            "message_ids": [3, 4],
        },
    }
    assert post(services, deleted).action == "ignored"
    assert list(starter.started) == [name] and [m.text for m in telegram.sent] == [WELCOME]


def test_without_secretary_mode_deployed_business_updates_are_ignored(services: WebhookServices) -> None:
    for update in (updates.business_connection(42), updates.business_message(7, "hi")):
        outcome = post(services, update)
        assert (outcome.status, outcome.action, outcome.detail) == (
            200,
            "ignored",
            "secretary mode is not deployed",
        )


def test_make_webhook_asks_telegram_for_the_business_updates_secretary_mode_handles() -> None:
    assert set(HANDLED_UPDATES) == {
        "message",
        "callback_query",
        "business_connection",
        "business_message",
        "edited_business_message",
        "deleted_business_messages",
    }
    assert set(HANDLED_UPDATES) - {"message", "callback_query"} <= set(Update.model_fields)
