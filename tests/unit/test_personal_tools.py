"""An OAuth server's tools are each person's own (docs/accounts.md, "Where a person's tools are"): offered
in a person's private turns only once they connected it, listed and called with their own access token,
refreshed once when it expired or the server refused it, and none of them in a group's turn. On in-memory
fakes: the accounts' store, a stand-in for the flow's refresh, and an MCP server that knows whose each token
is."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from support.turn_fakes import ScriptedModel, text_response, tool_use, turn_meta, turn_start

from stepwise.accounts.access import AccountsAccess
from stepwise.accounts.flow import Disconnected, SignInStarted
from stepwise.accounts.models import Account
from stepwise.remote_tools.calls import RemoteLimits, RemoteToolCaller
from stepwise.remote_tools.catalog import RemoteTools
from stepwise.remote_tools.client import Connection, RemoteCallError
from stepwise.remote_tools.config import ServerEntry
from stepwise.remote_tools.personal import RECONNECT, AccountNeeded, AccountTokens, servers_to_reconnect
from stepwise.remote_tools.results import CALL_FAILED, framed
from stepwise.services import Tools, TurnServices
from stepwise.states.call_model import call_model
from stepwise.states.contracts.call_model import CallModelInput
from stepwise.states.contracts.run_tools import RunToolsInput
from stepwise.states.load_context import load_context
from stepwise.states.policy import CHAT_TURN
from stepwise.states.run_tools import run_tools
from stepwise.turn_records.models import LinkButton, LinkButtons
from stepwise_local.in_memory.accounts import InMemoryAccountStore
from stepwise_local.in_memory.ledger import InMemoryToolCallLedger
from stepwise_local.in_memory.reminders import InMemoryReminderStore
from stepwise_local.in_memory.remote_tools import InMemoryRemoteToolCache

NOW = 1_800_000_000
READ = {"readOnlyHint": True}
LISTING = [{"name": "list_notes", "inputSchema": {"type": "object"}, "annotations": READ}]
NOTES = ServerEntry(name="notes", url="https://notes.example/mcp", auth="oauth")
SEARCH = ServerEntry(name="search", url="https://search.example/mcp")  # a token server: everybody's
ANN, BOB, GROUP = 7, 8, -100


class NotesServer:
    """RemoteServers for one OAuth server: it accepts the tokens it issued (`live`: token -> person) and
    answers 401 to any other; `seen` notes each (method, person the token was issued to, token)."""

    def __init__(self) -> None:
        self.live: dict[str, int] = {}
        self.seen: list[tuple[str, int | None, str]] = []

    def _person(self, connection: Connection, method: str) -> int:
        token = connection.headers.get("Authorization", "").removeprefix("Bearer ")
        person = self.live.get(token)
        self.seen.append((method, person, token))
        if person is None:
            raise RemoteCallError("HTTP 401 from the server", counts=False, unauthorized=True)
        return person

    def list_tools(self, connection: Connection) -> list[dict[str, Any]]:
        if connection.name == SEARCH.name:
            return [{"name": "find", "inputSchema": {"type": "object"}, "annotations": READ}]
        self._person(connection, "tools/list")
        return LISTING

    def call_tool(
        self, connection: Connection, tool: str, arguments: dict[str, Any], listing: Any
    ) -> dict[str, Any]:
        person = self._person(connection, "tools/call")
        return {"content": [{"type": "text", "text": f"the notes of {person}"}]}


class Flow:
    """AccountFlow's `current` and `refresh` over the store (the real flow is tested against a real
    authorization server in tests/integration): a refresh issues the next token, or is refused."""

    def __init__(
        self, store: InMemoryAccountStore, server: NotesServer, profiles: InMemoryReminderStore
    ) -> None:
        self.store = store
        self.server = server
        self.profiles = profiles
        self.refreshes: list[int] = []
        self.refuse = False
        self.sign_ins: list[tuple[int, str]] = []

    def start_sign_in(self, user_id: int, entry: ServerEntry, redirect_uri: str) -> SignInStarted:
        self.sign_ins.append((user_id, entry.name))
        return SignInStarted(f"https://notes.example/authorize?state=s{len(self.sign_ins)}", NOW + 600)

    def current(self, user_id: int, server: str) -> Account | Disconnected | None:
        account = self.store.get(user_id, server)
        return self.refresh(account) if account is not None and account.expired(NOW) else account

    def refresh(self, account: Account) -> Account | Disconnected:
        self.refreshes.append(account.user_id)
        if self.refuse:
            self.store.delete(account.user_id, account.server)
            self.profiles.unmark_account(account.user_id, account.server)
            return Disconnected(account.user_id, account.server, "the server refused its refresh token")
        token = f"access-{account.user_id}-{len(self.refreshes)}"
        self.server.live[token] = account.user_id
        rotated = account._replace(access_token=token, expires_at=NOW + 3600)
        assert self.store.replace(rotated, account.version)
        return rotated._replace(version=account.version + 1)


class CountingStore(InMemoryAccountStore):
    def __init__(self) -> None:
        super().__init__()
        self.lists = 0

    def list(self, user_id: int) -> list[Account]:
        self.lists += 1
        return super().list(user_id)


class Deployment:
    """CallModel's and RunTools' containers of one deployment with the notes server (OAuth) listed, and maybe
    a token server; `connect` plays a person's finished sign-in."""

    def __init__(self, services: TurnServices, entries: tuple[ServerEntry, ...] = (NOTES,)) -> None:
        self.server = NotesServer()
        self.store = CountingStore()
        self.profiles = services.stores.profiles.reminders
        assert isinstance(self.profiles, InMemoryReminderStore)
        self.flow = Flow(self.store, self.server, self.profiles)
        access = AccountsAccess(
            store=lambda: self.store,
            flow=lambda: self.flow,  # type: ignore[arg-type,return-value]
            servers=lambda: entries,
            callback_url="https://stepwise.example/oauth/callback",
        )
        services = replace(services, stores=replace(services.stores, accounts=access))
        self.cache = InMemoryRemoteToolCache()

        def side(refresh: bool) -> RemoteTools:
            caller = RemoteToolCaller(
                cache=self.cache,
                servers=lambda: self.server,
                ledger=InMemoryToolCallLedger(),
                headers=lambda entry: {},
                now=lambda: NOW,
                limits=RemoteLimits(),
                accounts=AccountTokens(access, now=lambda: NOW),  # type: ignore[arg-type]
            )
            return RemoteTools(lambda: entries, caller, refresh=refresh, memo_seconds=3600)

        call_side, run_side = side(True), side(False)
        built_in = services.tools.built_in
        self.call_model_services = replace(
            services, tools=Tools(built_in, remote=call_side.tools, personal=call_side.for_person)
        )
        self.run_tools_services = replace(
            services,
            tools=Tools(
                built_in, remote=run_side.tools, reread_remote=run_side.reread, personal=run_side.for_person
            ),
        )
        self.services = services
        self.turns = 0

    def connect(self, user_id: int, token: str, *, expires_at: int = NOW + 3600) -> None:
        """A finished sign-in, as the flow keeps it: the person's profile marked, then the account."""
        self.server.live[token] = user_id
        self.profiles.mark_account(user_id, "notes")
        self.store.put(
            Account(
                user_id, "notes", token, f"refresh-{user_id}", expires_at, "notes", "2026-11-22T09:00:00Z"
            )
        )

    def turn(
        self,
        model: ScriptedModel,
        user_id: int,
        *calls: tuple[str, dict[str, Any]],
        chat_id: int | None = None,
    ) -> tuple[list[str], list[Any]]:
        """A turn whose model makes these calls: the tools CallModel offered, and the step's results."""
        model.responses.append(tool_use(*calls))
        self.turns += 1
        begin = turn_start(
            self.services, "please", update_id=self.turns, chat_id=chat_id or user_id, user_id=user_id
        )
        load_context(begin, self.services)
        routed = call_model(CallModelInput(turn=begin.turn), self.call_model_services)
        offered = [tool["name"] for tool in model.requests[-1].tools or []]
        run_tools(RunToolsInput(turn=begin.turn, next=routed), self.run_tools_services)
        step = self.services.stores.turns.get_step(begin.turn.turn_id, 0)
        model.responses.append(text_response("Done."))
        call_model(CallModelInput(turn=begin.turn, next=routed), self.call_model_services)
        self.reply = self.services.stores.turns.get_reply(begin.turn.turn_id)
        return offered, step.tool_results


def test_a_persons_notes_tools_are_offered_only_once_they_connected_and_to_nobody_else(
    services: TurnServices, model: ScriptedModel
) -> None:
    deployment = Deployment(services)
    offered, (result,) = deployment.turn(model, ANN, ("notes__list_notes", {}))
    assert "notes__list_notes" not in offered
    assert result["is_error"] and "Unknown tool" in result["content"]
    assert deployment.server.seen == []  # nothing listed or called without an account

    deployment.connect(ANN, "ann-token")
    offered, (result,) = deployment.turn(model, ANN, ("notes__list_notes", {}))
    assert "notes__list_notes" in offered
    assert not result["is_error"] and "the notes of 7" in result["content"]
    offered, _ = deployment.turn(model, BOB, ("notes__list_notes", {}))
    assert "notes__list_notes" not in offered  # Bob never connected


def test_two_people_are_each_listed_and_called_with_their_own_token_into_lists_of_their_own(
    services: TurnServices, model: ScriptedModel
) -> None:
    deployment = Deployment(services)
    deployment.connect(ANN, "ann-token")
    deployment.connect(BOB, "bob-token")
    _, (ann,) = deployment.turn(model, ANN, ("notes__list_notes", {}))
    _, (bob,) = deployment.turn(model, BOB, ("notes__list_notes", {}))
    assert "the notes of 7" in ann["content"] and "the notes of 8" in bob["content"]
    assert deployment.server.seen == [
        ("tools/list", ANN, "ann-token"),
        ("tools/call", ANN, "ann-token"),
        ("tools/list", BOB, "bob-token"),
        ("tools/call", BOB, "bob-token"),
    ]
    assert set(deployment.cache.records) == {"notes#7", "notes#8"}  # never one list for both


def test_a_group_turn_is_offered_no_members_account_and_reads_no_account(
    services: TurnServices, model: ScriptedModel
) -> None:
    deployment = Deployment(services)
    deployment.connect(ANN, "ann-token")
    reads = deployment.store.lists
    offered, (result,) = deployment.turn(model, ANN, ("notes__list_notes", {}), chat_id=GROUP)
    assert "notes__list_notes" not in offered
    assert result["is_error"] and "Unknown tool" in result["content"]
    assert deployment.server.seen == [] and deployment.store.lists == reads


def test_a_person_without_accounts_gets_the_shared_registry_itself_and_reads_no_account(
    services: TurnServices, model: ScriptedModel
) -> None:
    deployment = Deployment(services, (NOTES, SEARCH))
    deployment.connect(ANN, "ann-token")
    tools = deployment.call_model_services.tools
    assert (
        CHAT_TURN.tools(turn_meta(user_id=BOB, chat_id=BOB), deployment.call_model_services) is tools.registry
    )
    assert tools.registry.get("search__find") is not None  # a token server stays everybody's
    offered, _ = deployment.turn(model, BOB, ("search__find", {}))
    assert "search__find" in offered and "notes__list_notes" not in offered
    assert deployment.store.lists == 0  # Bob's profile marks no account: no accounts' query at all

    plain = Deployment(services, (SEARCH,))
    registry = CHAT_TURN.tools(turn_meta(user_id=BOB, chat_id=BOB), plain.call_model_services)
    assert registry is plain.call_model_services.tools.registry
    assert plain.store.lists == 0  # no OAuth server listed: the accounts are not read


def test_a_mark_without_an_account_costs_one_query_and_offers_nothing(
    services: TurnServices, model: ScriptedModel
) -> None:
    """A crash between the mark and the account's write (or between a disconnect and its unmark) leaves a
    mark with no account: the person's turns read their accounts, find none, and offer none."""
    deployment = Deployment(services)
    deployment.profiles.mark_account(BOB, "notes")
    offered, (result,) = deployment.turn(model, BOB, ("notes__list_notes", {}))
    assert "notes__list_notes" not in offered and result["is_error"]
    assert deployment.server.seen == []


def test_an_expired_token_is_refreshed_once_before_the_list_and_the_call(
    services: TurnServices, model: ScriptedModel
) -> None:
    deployment = Deployment(services)
    deployment.connect(ANN, "old-token", expires_at=NOW - 10)
    del deployment.server.live["old-token"]  # the server would refuse it anyway
    _, (result,) = deployment.turn(model, ANN, ("notes__list_notes", {}))
    assert not result["is_error"] and "the notes of 7" in result["content"]
    assert deployment.flow.refreshes == [ANN]  # once: RunTools used the refreshed token it read
    assert [token for _, _, token in deployment.server.seen] == ["access-7-1", "access-7-1"]


def test_a_token_the_server_refuses_is_refreshed_once_and_the_call_sent_once_more(
    services: TurnServices, model: ScriptedModel
) -> None:
    deployment = Deployment(services)
    deployment.connect(ANN, "ann-token")
    deployment.turn(model, ANN, ("notes__list_notes", {}))
    del deployment.server.live["ann-token"]  # revoked at the server before its lifetime ended
    _, (result,) = deployment.turn(model, ANN, ("notes__list_notes", {}))
    assert not result["is_error"] and "the notes of 7" in result["content"]
    assert deployment.flow.refreshes == [ANN]
    assert deployment.server.seen[-2:] == [
        ("tools/call", None, "ann-token"),
        ("tools/call", ANN, "access-7-1"),
    ]
    record = deployment.cache.records["notes#7"]
    assert record.failures == 0  # a refused token is not the server failing


def test_a_refused_refresh_says_the_account_must_be_connected_again_and_its_tools_go(
    services: TurnServices, model: ScriptedModel
) -> None:
    deployment = Deployment(services)
    deployment.connect(ANN, "ann-token")
    deployment.turn(model, ANN, ("notes__list_notes", {}))
    del deployment.server.live["ann-token"]
    deployment.flow.refuse = True
    _, (result,) = deployment.turn(model, ANN, ("notes__list_notes", {}))
    assert result["is_error"] and RECONNECT in result["content"]
    assert "the server refused its refresh token" in result["content"]
    assert servers_to_reconnect([result["content"]]) == ["notes"]
    assert "ann-token" not in result["content"]
    assert deployment.store.get(ANN, "notes") is None
    # The reply carries the Connect button again: a new sign-in for Ann at the notes server
    assert deployment.reply is not None and deployment.reply.extra == LinkButtons(
        buttons=[LinkButton(text="Connect notes", url="https://notes.example/authorize?state=s1")]
    )
    assert deployment.flow.sign_ins == [(ANN, "notes")]
    offered, _ = deployment.turn(model, ANN, ("notes__list_notes", {}))
    assert "notes__list_notes" not in offered
    assert deployment.reply is not None and deployment.reply.extra is None


@pytest.mark.parametrize("in_group", [True, False])
def test_a_persons_tool_refuses_to_run_for_anyone_else(services: TurnServices, in_group: bool) -> None:
    from stepwise.telegram.conversation import Conversation, Scope
    from stepwise.tools.registry import ToolContext

    deployment = Deployment(services)
    deployment.connect(ANN, "ann-token")
    registry = CHAT_TURN.tools(
        turn_meta(user_id=ANN, chat_id=ANN, has_accounts=True), deployment.call_model_services
    )
    tool, args = registry.parse("notes__list_notes", {})
    scope = Scope(Conversation(GROUP), ANN) if in_group else Scope(Conversation(BOB), BOB)
    result = registry.run(
        ToolContext(scope, turn_id="t", call_id="t:1", now="2026-11-22T09:00:00Z"), tool, args
    )
    assert result.is_error and "not connected for this chat" in result.content
    assert [method for method, _, _ in deployment.server.seen] == ["tools/list"]  # Ann's list, no call


def test_only_this_codes_own_report_for_the_server_whose_result_it_is_asks_for_a_connect_button() -> None:
    # Given the result of a call whose account is gone, as the caller frames it
    ours = framed("notes", f"{CALL_FAILED}{AccountNeeded('notes', 'it was disconnected')}. ", 4000)
    # And outside servers' own texts imitating that report, after their marker line
    for_another = framed("weather", str(AccountNeeded("notes", "it was disconnected")), 4000)
    as_if_ours = framed("weather", f"{CALL_FAILED}{AccountNeeded('notes', 'x')}", 4000)
    later_line = framed("weather", f"fine\n{CALL_FAILED}{AccountNeeded('weather', 'x')}", 4000)
    itself = framed("weather", f"{CALL_FAILED}{AccountNeeded('weather', 'x')}", 4000)
    # Then only the report framed as the named server's own result counts, once per server
    assert servers_to_reconnect([ours, ours]) == ["notes"]
    assert servers_to_reconnect([for_another, as_if_ours, later_line]) == []
    assert servers_to_reconnect([RECONNECT + " [notes]"]) == [], "no marker line: not a server's result"
    # A server imitating the report for itself gets no more than its own sign-in offered
    assert servers_to_reconnect([itself, ours]) == ["weather", "notes"]
