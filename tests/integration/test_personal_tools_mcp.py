"""People's own tools at the example notes server (`stepwise_local.example_notes`), over real MCP: each person
signs in in the browser (`browser.sign_in`), the flow keeps their tokens, and their tools are listed and
called with the official SDK's client carrying their own access token, which the server checks: each person's
notes stay theirs. An expired token is refreshed before the call; one the server refuses (its clock moved past
the token's lifetime, Stepwise's did not) is refreshed once and the call sent once more."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import pytest

from stepwise.accounts.access import AccountsAccess
from stepwise.accounts.flow import AccountFlow
from stepwise.accounts.models import Account
from stepwise.aws.http_transport import HttpTransport
from stepwise.remote_tools.calls import RemoteLimits, RemoteToolCaller
from stepwise.remote_tools.catalog import RemoteTools
from stepwise.remote_tools.config import ServerEntry
from stepwise.remote_tools.mcp_client import McpHttpServers
from stepwise.remote_tools.personal import AccountTokens
from stepwise.telegram.conversation import Conversation, Scope
from stepwise.tools.registry import ToolContext, ToolRegistry, ToolResult
from stepwise_local.example_notes.app import TOKEN_PATH
from stepwise_local.example_notes.browser import sign_in
from stepwise_local.example_notes.server import ExampleNotesServer
from stepwise_local.in_memory.accounts import InMemoryAccountStore
from stepwise_local.in_memory.ledger import InMemoryToolCallLedger
from stepwise_local.in_memory.reminders import InMemoryReminderStore
from stepwise_local.in_memory.remote_tools import InMemoryRemoteToolCache

CALLBACK = "http://127.0.0.1:9/oauth/callback"  # never opened: the browser helper stops before it
ANN, BOB = 7, 8
LIFETIME = 600


class MovableClock:
    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


class Deployment:
    """Stepwise with the notes server listed as an OAuth server: the flow over the in-memory store, and the
    tools of a CallModel that lists and calls (`clock`: Stepwise's)."""

    def __init__(self, server: ExampleNotesServer, clock: MovableClock) -> None:
        self.server = server
        self.entry = ServerEntry(name="notes", url=server.mcp_url, auth="oauth")
        self.store = InMemoryAccountStore()
        self.profiles = InMemoryReminderStore()
        entries = (self.entry,)
        self.flow = AccountFlow(
            self.store, HttpTransport(), lambda: entries, lambda name: "", marks=self.profiles, now=clock
        )
        access = AccountsAccess(
            store=lambda: self.store, flow=lambda: self.flow, servers=lambda: entries, callback_url=CALLBACK
        )
        self.ledger = InMemoryToolCallLedger()
        caller = RemoteToolCaller(
            cache=InMemoryRemoteToolCache(),
            servers=McpHttpServers,
            ledger=self.ledger,
            headers=lambda entry: {},
            now=lambda: int(clock()),
            limits=RemoteLimits(timeout_seconds=20),
            accounts=AccountTokens(access, now=clock),
        )
        self.tools = RemoteTools(lambda: entries, caller, refresh=True, memo_seconds=0)
        self.calls = 0

    def connect(self, user_id: int, name: str) -> Account:
        started = self.flow.start_sign_in(user_id, self.entry, CALLBACK)
        callback = dict(parse_qsl(urlsplit(sign_in(started.url, name)).query))
        account = self.flow.finish_sign_in(callback.get("state"), callback.get("code"), callback.get("error"))
        assert isinstance(account, Account), account
        return account

    def call(self, user_id: int, tool: str, arguments: dict[str, Any]) -> ToolResult:
        registry = ToolRegistry(self.tools.for_person(user_id), self.ledger)
        parsed, args = registry.parse(tool, arguments)
        self.calls += 1
        context = ToolContext(
            Scope(Conversation(user_id), user_id),
            turn_id="t",
            call_id=f"t:{self.calls}",
            now="2027-01-15T08:00Z",
        )
        return registry.run(context, parsed, args)


@pytest.fixture
def server_clock() -> MovableClock:
    return MovableClock()


@pytest.fixture
def server(server_clock: MovableClock) -> Iterator[ExampleNotesServer]:
    with ExampleNotesServer(access_token_seconds=LIFETIME, clock=server_clock) as served:
        yield served


def refreshes(server: ExampleNotesServer) -> int:
    return sum(1 for r in server.seen.to(TOKEN_PATH) if r.params.get("grant_type") == "refresh_token")


def test_each_persons_tools_are_listed_and_called_with_their_own_token_over_mcp(
    server: ExampleNotesServer, server_clock: MovableClock
) -> None:
    deployment = Deployment(server, server_clock)
    assert deployment.tools.for_person(ANN) == []  # not connected: nothing offered, nothing asked
    assert server.seen.to("/mcp") == []

    deployment.connect(ANN, "Ann")
    deployment.connect(BOB, "Bob")
    assert {tool.name for tool in deployment.tools.for_person(ANN)} == {
        "notes__add_note",
        "notes__list_notes",
    }
    assert not deployment.call(ANN, "notes__add_note", {"text": "buy milk"}).is_error
    assert not deployment.call(BOB, "notes__add_note", {"text": "call mum"}).is_error
    ann = deployment.call(ANN, "notes__list_notes", {})
    bob = deployment.call(BOB, "notes__list_notes", {})
    assert "buy milk" in ann.content and "call mum" not in ann.content
    assert "call mum" in bob.content and "buy milk" not in bob.content
    assert server.notes.of("Ann") == ["buy milk"] and server.notes.of("Bob") == ["call mum"]
    assert [(call.person, call.tool) for call in server.notes.calls] == [
        ("Ann", "add_note"),
        ("Bob", "add_note"),
        ("Ann", "list_notes"),
        ("Bob", "list_notes"),
    ]
    assert refreshes(server) == 0


def test_an_expired_token_is_refreshed_before_the_call(
    server: ExampleNotesServer, server_clock: MovableClock
) -> None:
    deployment = Deployment(server, server_clock)  # Stepwise's clock is the server's
    before = deployment.connect(ANN, "Ann")
    deployment.call(ANN, "notes__add_note", {"text": "one"})
    server_clock.now += LIFETIME + 1
    result = deployment.call(ANN, "notes__list_notes", {})
    assert not result.is_error and "one" in result.content
    assert refreshes(server) == 1
    kept = deployment.store.get(ANN, "notes")
    assert (
        kept is not None and kept.access_token != before.access_token and kept.version == before.version + 1
    )


def test_a_token_the_server_refuses_is_refreshed_once_and_the_call_sent_again(
    server: ExampleNotesServer, server_clock: MovableClock
) -> None:
    stepwise_clock = MovableClock()  # does not move: the account looks in its lifetime to Stepwise
    deployment = Deployment(server, stepwise_clock)
    deployment.connect(ANN, "Ann")
    deployment.call(ANN, "notes__add_note", {"text": "one"})
    server_clock.now += LIFETIME + 1  # the server's clock moved past it: it answers 401
    result = deployment.call(ANN, "notes__add_note", {"text": "two"})
    assert not result.is_error, result.content
    assert refreshes(server) == 1
    assert server.notes.of("Ann") == ["one", "two"]  # sent once more, and once
