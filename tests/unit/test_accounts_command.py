"""/accounts on the in-memory stack: the listing with its Connect buttons, disconnecting, a group's answer,
and what it says where accounts are not deployed; the AccountFlow is real, on the in-memory store, its HTTP
answered by canned routes of an authorization server (no socket; the example notes server's run is in
tests/integration/test_accounts_callback.py)."""

from __future__ import annotations

import dataclasses
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import pytest
from support.oauth_routes import Routes
from support.turn_fakes import drive_turn, turn_start

from stepwise.accounts.access import AccountsAccess
from stepwise.accounts.flow import AccountFlow
from stepwise.accounts.models import Account, RegisteredClient
from stepwise.aws.http_transport import HttpTransport
from stepwise.commands.table import menu
from stepwise.remote_tools.config import ServerEntry
from stepwise.services import TurnServices
from stepwise.telegram.conversation import Conversation
from stepwise.turn.ref import TurnRef
from stepwise.turn.start import TurnStart
from stepwise_local.in_memory.accounts import InMemoryAccountStore
from stepwise_local.in_memory.reminders import InMemoryReminderStore
from stepwise_local.in_memory.telegram import InMemoryTelegram

CALLBACK = "https://api.example/oauth/callback"
NOTES = ServerEntry(name="notes", url="https://notes.example/mcp", auth="oauth")
CALENDAR = ServerEntry(name="calendar", url="https://cal.example/mcp", auth="oauth")
BROKEN = ServerEntry(name="broken", url="https://broken.example/mcp", auth="oauth")


def access_for(
    entries: tuple[ServerEntry, ...], routes: Routes
) -> tuple[AccountsAccess, InMemoryAccountStore, AccountFlow]:
    store = InMemoryAccountStore()
    flow = AccountFlow(
        store,
        HttpTransport(routes),
        lambda: entries,
        lambda name: "",
        marks=InMemoryReminderStore(),
        now=lambda: 1.8e9,
    )
    access = AccountsAccess(
        store=lambda: store, flow=lambda: flow, servers=lambda: entries, callback_url=CALLBACK
    )
    return access, store, flow


def with_accounts(services: TurnServices, access: AccountsAccess | None) -> TurnServices:
    return dataclasses.replace(services, stores=dataclasses.replace(services.stores, accounts=access))


def account(server: str, user: int = 7) -> Account:
    return Account(user, server, "access", "refresh", None, None, "2026-11-20T08:00:00Z")


def say(services: TurnServices, text: str, update_id: int) -> None:
    start = turn_start(
        services, text, update_id=update_id, created_at=f"2026-11-22T09:{update_id:02d}:00.000Z"
    )
    drive_turn(services, start)


def last(telegram: InMemoryTelegram, chat: int = 7) -> Any:
    return [m for m in telegram.sent if m.chat_id == chat][-1]


def test_accounts_lists_each_server_with_a_connect_button_for_those_not_connected(
    services: TurnServices, telegram: InMemoryTelegram
) -> None:
    routes = Routes("notes.example", "cal.example")  # broken.example answers 404 to everything
    access, store, _ = access_for((NOTES, CALENDAR, BROKEN), routes)
    store.put(account("calendar"))
    store.put(account("notes", user=8))  # another person's
    say(with_accounts(services, access), "/accounts", 1)

    sent = last(telegram)
    assert sent.text.splitlines()[:4] == [
        "Your accounts at outside servers:",
        "• notes: not connected",
        "• calendar: connected (since 2026-11-20)",
        "• broken: can't connect (it publishes no authorization server metadata)",
    ]
    assert "/accounts disconnect &lt;name&gt;" in sent.text  # as sent, in HTML
    assert sent.reply_markup is not None
    ((button,),) = sent.reply_markup.to_api()["inline_keyboard"]
    assert button["text"] == "Connect notes"
    url = button["url"]
    assert url.startswith("https://notes.example/authorize?")
    sign_in = dict(parse_qsl(urlsplit(url).query))
    assert sign_in["redirect_uri"] == CALLBACK and sign_in["client_id"] == "client-notes.example"
    (pending,) = store.sign_ins.values()
    assert (pending.state, pending.user_id, pending.server) == (sign_in["state"], 7, "notes")
    stored = services.stores.messages.recent(Conversation(7), 5)
    assert stored[-1].content.startswith("Your accounts at outside servers:\n- notes: not connected")
    assert "authorize" not in stored[-1].content, "the history keeps the text, never the sign-in link"


def test_a_person_connected_everywhere_gets_no_button(
    services: TurnServices, telegram: InMemoryTelegram
) -> None:
    access, store, _ = access_for((NOTES,), Routes())
    store.put(account("notes"))
    say(with_accounts(services, access), "/accounts", 1)
    sent = last(telegram)
    assert sent.text.startswith("Your accounts at outside servers:\n• notes: connected (since 2026-11-20)")
    assert sent.reply_markup is None
    assert store.sign_ins == {}


@pytest.mark.parametrize("spelled", ["notes", "NOTES", "Notes"])
def test_disconnect_revokes_and_forgets_the_account_by_its_name_in_any_case(
    services: TurnServices, telegram: InMemoryTelegram, spelled: str
) -> None:
    routes = Routes("notes.example")
    access, store, _ = access_for((NOTES, CALENDAR), routes)
    store.put(account("notes"))
    store.put(account("notes", user=8))
    store.put_client(
        RegisteredClient("notes", "https://notes.example", "c", "s", "client_secret_post", CALLBACK, None, "")
    )
    say(with_accounts(services, access), f"/accounts disconnect {spelled}", 1)
    assert telegram.texts(7) == ["Disconnected notes: its tools are gone for you."]
    assert store.get(7, "notes") is None
    assert store.get(8, "notes") is not None, "another person's account stays"
    assert [r["token_type_hint"] for r in routes.revoked()] == ["refresh_token", "access_token"]


def test_disconnect_names_the_servers_when_the_name_is_unknown_and_says_when_not_connected(
    services: TurnServices, telegram: InMemoryTelegram
) -> None:
    access, _, _ = access_for((NOTES, CALENDAR), Routes())
    deployed = with_accounts(services, access)
    say(deployed, "/accounts disconnect mail", 1)
    say(deployed, "/accounts disconnect calendar", 2)
    say(deployed, "/accounts connect", 3)
    assert telegram.texts(7) == [
        "There is no server named “mail” here. The servers are: notes, calendar.",
        "You were not connected to calendar.",
        "/accounts lists your accounts at outside servers; /accounts disconnect &lt;name&gt; forgets one.",
    ]


def test_without_accounts_or_oauth_servers_accounts_says_so_in_one_line(
    services: TurnServices, telegram: InMemoryTelegram
) -> None:
    say(services, "/accounts", 1)
    access, _, _ = access_for((), Routes())
    say(with_accounts(services, access), "/accounts", 2)
    say(with_accounts(services, access), "/accounts disconnect notes", 3)
    assert telegram.texts(7) == [
        "Accounts at outside servers are not set up in this deployment.",
        "No outside server here signs people in: there are no accounts to connect.",
        "No outside server here signs people in: there are no accounts to connect.",
    ]


def test_in_a_group_accounts_points_to_the_private_chat_and_starts_no_sign_in(
    services: TurnServices, telegram: InMemoryTelegram
) -> None:
    from stepwise.inbox.models import QueuedMessage

    routes = Routes("notes.example")
    access, store, _ = access_for((NOTES,), routes)
    store.put(account("notes"))
    deployed = with_accounts(services, access)
    group = -100
    for update, text in ((1, "/accounts"), (2, "/accounts disconnect notes")):
        deployed.outbound.sequencer().inbox.enqueue(
            QueuedMessage(
                chat_id=group,
                update_id=update,
                user_id=7,
                id=f"g{update}",
                text=text,
                received_at=f"2026-11-22T09:0{update}:00.000Z",
            ),
            expires_at=0,
        )
        drive_turn(
            deployed,
            TurnStart(turn=TurnRef(turn_id=f"g{update}", chat_id=group, user_id=7, update_id=update)),
        )
    assert (
        telegram.texts(group)
        == ["/accounts is about you alone: ask me in our private chat (open my profile and tap Message)."] * 2
    )
    assert routes.requests == [] and store.sign_ins == {} and store.get(7, "notes") is not None


def test_accounts_is_in_the_menu_and_help(services: TurnServices, telegram: InMemoryTelegram) -> None:
    (entry,) = [entry for entry in menu() if entry["command"] == "accounts"]
    say(services, "/help", 1)
    assert f"/accounts — {entry['description']}" in telegram.texts(7)[0].splitlines()
