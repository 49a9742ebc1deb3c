"""Business connections (issue 42, item 2; docs/secretary.md): an owner on the allowlist who connects the bot
to their Telegram Business account is kept and told once what happens now; told once when it stops and once
when it is back; anyone else's connection, and a first one that arrives disabled, is ignored."""

from __future__ import annotations

from typing import Any

import pytest

from stepwise.secretary.connections import (
    BACK,
    CANNOT_REPLY,
    DISCONNECTED,
    NOT_YET,
    STOPPED,
    WELCOME,
    active_connection,
    on_business_connection,
)
from stepwise.telegram.errors import TelegramError
from stepwise.telegram.models import BusinessConnection
from stepwise_local.in_memory.secretary import InMemoryBusinessConnectionStore
from stepwise_local.in_memory.telegram import InMemoryTelegram

OWNER, STRANGER, OWNER_CHAT = 1001, 4242, 1001
ALLOWED = frozenset({OWNER})


def connection(
    user: int = OWNER, *, enabled: bool = True, can_reply: bool = True, date: int = 100, **more: Any
) -> BusinessConnection:
    fields: dict[str, Any] = {
        "id": "bc-1",
        "user": {"id": user, "is_bot": False, "first_name": "Ada"},
        "user_chat_id": OWNER_CHAT if user == OWNER else user,
        "date": date,
        "rights": {"can_reply": can_reply, "can_read_messages": True},
        "is_enabled": enabled,
        **more,
    }
    return BusinessConnection.model_validate(fields)


class Setup:
    def __init__(self) -> None:
        self.store = InMemoryBusinessConnectionStore()
        self.telegram = InMemoryTelegram()

    def deliver(self, update: BusinessConnection) -> str:
        return on_business_connection(update, ALLOWED, self.store, self.telegram)

    def said(self) -> list[str]:
        return [message.text for message in self.telegram.sent if message.chat_id == OWNER_CHAT]


@pytest.fixture
def setup() -> Setup:
    return Setup()


def test_an_owners_first_connection_is_kept_and_welcomed_once(setup: Setup) -> None:
    assert setup.deliver(connection()) == "welcomed"
    assert setup.deliver(connection()) == "kept"  # Telegram delivers it again: nothing more is said
    assert setup.said() == [WELCOME]
    assert "nothing is sent without your tap" in WELCOME
    kept = setup.store.get("bc-1")
    assert kept is not None and (kept.owner_id, kept.owner_chat_id, kept.owner_name) == (
        OWNER,
        OWNER_CHAT,
        "Ada",
    )
    assert active_connection(setup.store, "bc-1", ALLOWED) == kept


@pytest.mark.parametrize("stranger", [connection(STRANGER), connection(STRANGER, enabled=False)])
def test_a_connection_of_anyone_off_the_allowlist_is_ignored(
    setup: Setup, stranger: BusinessConnection
) -> None:
    assert setup.deliver(stranger) == "ignored"
    assert setup.store.connections == {} and setup.telegram.sent == []
    assert active_connection(setup.store, "bc-1", ALLOWED) is None


def test_a_bots_account_is_ignored_even_with_an_allowed_id(setup: Setup) -> None:
    bot = connection().model_copy(update={"user": connection().user.model_copy(update={"is_bot": True})})
    assert setup.deliver(bot) == "ignored" and setup.telegram.sent == []


def test_a_first_connection_that_arrives_disabled_is_ignored_without_a_welcome(setup: Setup) -> None:
    assert setup.deliver(connection(enabled=False)) == "ignored"
    assert setup.store.connections == {} and setup.said() == []
    assert setup.deliver(connection(date=200)) == "welcomed"  # enabled later: the first kept one


@pytest.mark.parametrize(
    ("stop", "why"),
    [({"enabled": False}, DISCONNECTED), ({"can_reply": False}, CANNOT_REPLY)],
)
def test_a_stop_is_said_once_and_its_return_once(setup: Setup, stop: dict[str, bool], why: str) -> None:
    setup.deliver(connection())
    assert setup.deliver(connection(date=200, **stop)) == "stopped"
    assert setup.deliver(connection(date=210, **stop)) == "kept"  # still stopped: said once
    assert active_connection(setup.store, "bc-1", ALLOWED) is None  # its chats' updates start nothing
    assert setup.deliver(connection(date=300)) == "resumed"
    assert setup.deliver(connection(date=300)) == "kept"
    assert setup.said() == [WELCOME, STOPPED.format(why=why), BACK]
    assert active_connection(setup.store, "bc-1", ALLOWED) is not None


def test_an_update_delivered_late_changes_nothing(setup: Setup) -> None:
    setup.deliver(connection(date=200))
    assert setup.deliver(connection(date=150, enabled=False)) == "kept"  # older than what is kept
    assert active_connection(setup.store, "bc-1", ALLOWED) is not None
    assert setup.said() == [WELCOME]


def test_the_right_to_reply_is_read_from_rights_or_the_older_top_level_field(setup: Setup) -> None:
    legacy = BusinessConnection.model_validate(
        {
            "id": "bc-1",
            "user": {"id": OWNER, "first_name": "Ada"},
            "user_chat_id": OWNER_CHAT,
            "date": 100,
            "can_reply": True,
            "is_enabled": True,
        }
    )
    assert legacy.may_reply and not connection(can_reply=False).may_reply
    assert setup.deliver(legacy) == "welcomed"


def test_when_telegram_refuses_the_welcome_the_next_delivery_says_it(setup: Setup) -> None:
    setup.telegram.fail_next("send_message", TelegramError("sendMessage", 502, "Bad Gateway"))
    assert setup.deliver(connection()) == "unavailable"
    assert setup.said() == []
    assert setup.deliver(connection()) == "welcomed"
    assert setup.said() == [WELCOME]


def test_a_stop_line_telegram_refused_is_said_on_the_next_delivery(setup: Setup) -> None:
    setup.deliver(connection())
    setup.telegram.fail_next("send_message", TelegramError("sendMessage", 502, "Bad Gateway"))
    assert setup.deliver(connection(date=200, enabled=False)) == "unavailable"
    assert setup.deliver(connection(date=200, enabled=False)) == "stopped"
    assert setup.said() == [WELCOME, STOPPED.format(why=DISCONNECTED)]


def test_an_update_naming_no_connection_finds_none(setup: Setup) -> None:
    assert active_connection(setup.store, None, ALLOWED) is None
    assert active_connection(setup.store, "", ALLOWED) is None
    assert active_connection(setup.store, "never-kept", ALLOWED) is None


def test_an_owner_taken_off_the_allowlist_has_their_connections_updates_start_nothing(setup: Setup) -> None:
    setup.deliver(connection())
    assert active_connection(setup.store, "bc-1", ALLOWED) is not None
    assert active_connection(setup.store, "bc-1", frozenset()) is None
    assert on_business_connection(connection(date=200), frozenset(), setup.store, setup.telegram) == "ignored"
    assert setup.said() == [WELCOME]


def test_a_first_connection_without_the_right_to_reply_says_so_then_welcomes_once_it_may(
    setup: Setup,
) -> None:
    assert setup.deliver(connection(can_reply=False)) == "stopped"
    assert setup.deliver(connection(can_reply=False)) == "kept"
    assert active_connection(setup.store, "bc-1", ALLOWED) is None
    assert setup.deliver(connection(date=200)) == "welcomed"
    assert setup.deliver(connection(date=210)) == "kept"  # no "back on" after a welcome
    assert setup.said() == [NOT_YET, WELCOME]
