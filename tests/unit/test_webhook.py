"""The webhook's decisions, with an in-memory turn starter."""

from __future__ import annotations

import json
from typing import Any

import pytest

from stepwise.approvals.memory import InMemoryApprovalStore
from stepwise.approvals.press import PressServices
from stepwise.telegram.fake import InMemoryTelegram
from stepwise.webhook import WebhookServices, handle_update, secret_matches
from stepwise_local import updates

SECRET = "s3cret-token"


class RecordingStarter:
    """A TurnStarter that remembers names, like Step Functions does."""

    def __init__(self) -> None:
        self.started: dict[str, dict[str, Any]] = {}

    def start(self, name: str, payload: dict[str, Any]) -> bool:
        if name in self.started:
            return False
        self.started[name] = payload
        return True


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
def services(
    starter: RecordingStarter,
    telegram: InMemoryTelegram,
    approvals: InMemoryApprovalStore,
    resumer: RecordingResumer,
) -> WebhookServices:
    presses = PressServices(approvals=approvals, telegram=lambda: telegram, resumer=resumer)
    return WebhookServices(
        secret=SECRET,
        allowed_users=frozenset({42, 43}),
        starter=starter,
        presses=presses,
        approval_timeout_seconds=120,
    )


def post(services: WebhookServices, update: dict[str, Any] | str, secret: str | None = SECRET) -> Any:
    return handle_update(secret, update if isinstance(update, str) else json.dumps(update), services)


def test_an_allowlisted_text_message_starts_one_turn_named_after_the_update(
    services: WebhookServices, starter: RecordingStarter
) -> None:
    # Given a text message from an allowlisted user
    update = updates.text_message(42, "hello", update_id=555)
    # When it reaches the webhook
    outcome = post(services, update)
    # Then one turn starts, named after the update, carrying ids and the text
    assert (outcome.status, outcome.action) == (200, "started")
    assert list(starter.started) == ["update-555"]
    payload = starter.started["update-555"]
    assert payload["turn"] | {"turn_id": "x"} == {
        "turn_id": "x",
        "chat_id": 42,
        "user_id": 42,
        "update_id": 555,
    }
    assert payload["message"]["text"] == "hello"
    assert payload["message"]["created_at"].endswith("Z")
    assert payload["limits"] == {"approval_timeout_seconds": 120}


def test_the_same_update_twice_starts_one_turn(services: WebhookServices, starter: RecordingStarter) -> None:
    update = updates.text_message(42, "hello", update_id=556)
    assert post(services, update).action == "started"
    second = post(services, update)
    assert (second.status, second.action) == (200, "duplicate")
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
        updates.sticker_message(42),
        updates.edited_message(42, "edited"),
        {"update_id": 1, "my_chat_member": {"chat": {"id": 1, "type": "private"}}},
        {
            "update_id": 2,
            "message": {"message_id": 1, "date": 0, "chat": {"id": 5, "type": "channel"}, "text": "x"},
        },
    ],
    ids=["not-allowlisted", "sticker", "edit", "chat-member", "no-sender"],
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
    services.allowed_users = frozenset()
    assert post(services, updates.text_message(42, "hello")).action == "not_allowed"


@pytest.mark.parametrize("body", ["", "not json", "[]", "{}", '{"update_id": "abc"}', "\x00\xff"])
def test_a_body_that_is_not_an_update_never_crashes_and_starts_nothing(
    services: WebhookServices, starter: RecordingStarter, body: str
) -> None:
    outcome = post(services, body)
    assert (outcome.status, outcome.action) == (400, "invalid")
    assert starter.started == {}


def test_secret_comparison() -> None:
    assert secret_matches("abc", "abc")
    assert not secret_matches(None, "abc")
    assert not secret_matches("abd", "abc")
    assert not secret_matches("ünïcode", "abc")
