"""Outside MCP servers' tools on in-memory fakes (no sockets): the servers list's validation, the approval
policy, deterministic offering, the cache, results, the circuit breaker and the ledger's intent."""

from __future__ import annotations

import json
import logging
from dataclasses import replace
from typing import Any

import pytest
from support.turn_fakes import ScriptedModel, tool_use, turn_start

from stepwise.remote_tools.calls import INTENT, RemoteLimits, RemoteToolCaller
from stepwise.remote_tools.catalog import RemoteTools
from stepwise.remote_tools.client import RemoteCallError
from stepwise.remote_tools.config import ServerEntry, parse_servers
from stepwise.remote_tools.results import marker, render
from stepwise.remote_tools.ssm import token_headers
from stepwise.services import Tools, TurnServices
from stepwise.states.call_model import call_model
from stepwise.states.contracts.base import Next
from stepwise.states.contracts.call_model import CallModelInput
from stepwise.states.contracts.run_tools import RunToolsInput
from stepwise.states.load_context import load_context
from stepwise.states.run_tools import run_tools
from stepwise.telegram.conversation import Conversation, Scope
from stepwise.tools.calls import parse_call, run_call
from stepwise.tools.registry import ToolContext, ToolRegistry
from stepwise_local.in_memory.ledger import InMemoryToolCallLedger
from stepwise_local.in_memory.remote_tools import FakeRemoteServers, InMemoryRemoteToolCache

PATH = "/stepwise/mcp/"
READ = {"readOnlyHint": True}
LISTING = [
    {"name": "zap", "description": "Deletes things", "inputSchema": {"type": "object"}},
    {"name": "look", "description": "Reads things", "inputSchema": {"type": "object"}, "annotations": READ},
    {"name": "safe", "inputSchema": {"type": "object"}, "annotations": {"destructiveHint": False}},
]


class Clock:
    def __init__(self) -> None:
        self.now = 1_800_000_000

    def __call__(self) -> int:
        return self.now


def setup(
    entries: list[dict[str, Any]],
    servers: FakeRemoteServers,
    *,
    refresh: bool = True,
    ledger: InMemoryToolCallLedger | None = None,
) -> tuple[RemoteTools, RemoteToolCaller, Clock]:
    clock = Clock()
    caller = RemoteToolCaller(
        cache=InMemoryRemoteToolCache(),
        servers=lambda: servers,
        ledger=ledger or InMemoryToolCallLedger(),
        headers=lambda entry: {},
        now=clock,
        limits=RemoteLimits(
            refresh_seconds=3600, max_result_chars=600, breaker_failures=3, breaker_seconds=300
        ),
    )
    parsed = tuple(ServerEntry.model_validate(entry) for entry in entries)
    return RemoteTools(lambda: parsed, caller, refresh=refresh, memo_seconds=0), caller, clock


def context(call: str) -> ToolContext:
    return ToolContext(
        Scope(Conversation(1), 1), turn_id="t", call_id=f"t:{call}", now="2026-11-25T10:00:00Z"
    )


def call(tools: RemoteTools, name: str, call_id: str = "1", arguments: Any = None) -> Any:
    registry = ToolRegistry(tools.tools(), tools._caller.ledger)
    parsed = parse_call(registry, name, arguments or {})
    assert not hasattr(parsed, "result"), parsed
    tool, args = parsed  # type: ignore[misc]
    return run_call(registry, context(call_id), tool, args, "not_needed").result


# ------------------------------------------------------------------------------------------ the servers list
def test_each_bad_entry_is_one_log_line_naming_it_and_the_others_are_kept(
    caplog: pytest.LogCaptureFixture,
) -> None:
    document = json.dumps(
        [
            {"name": "ok", "url": "https://a.example/mcp"},
            {"name": "a__b", "url": "https://a.example/mcp"},
            {"name": "plain", "url": "http://a.example/mcp"},
            {"name": "ok", "url": "https://b.example/mcp"},
            {"name": "key", "url": "https://b.example/mcp", "token_parameter": "/elsewhere/token"},
            {"name": "typo", "url": "https://b.example/mcp", "aproval": "never"},
            "not an object",
            {"name": "local", "url": "http://127.0.0.1:9/mcp", "approval": "always", "allowed_tools": ["x"]},
        ]
    )
    with caplog.at_level(logging.WARNING):
        entries = parse_servers(document, PATH)
        assert parse_servers(document, PATH) == entries  # parsed (and logged) once
    assert [entry.name for entry in entries] == ["ok", "local"]
    lines = [record.getMessage() for record in caplog.records]
    assert len(lines) == 6
    assert lines[0].startswith("MCP server entry 1 ('a__b') skipped: name: must be letters")
    assert lines[1].startswith("MCP server entry 2 ('plain') skipped: url: must be https://")
    assert lines[2] == "MCP server entry 3 ('ok') skipped: another entry has the same name"
    assert lines[3].startswith(
        "MCP server entry 4 ('key') skipped: token_parameter must be under /stepwise/mcp/"
    )
    assert lines[4].startswith("MCP server entry 5 ('typo') skipped: aproval: Extra inputs are not permitted")
    assert lines[5] == "MCP server entry 6 (None) skipped: an entry must be a JSON object"


def test_oauth_entries_name_their_scopes_and_client_parameters_and_bad_ones_are_one_line_each(
    caplog: pytest.LogCaptureFixture,
) -> None:
    document = json.dumps(
        [
            {"name": "cal", "url": "https://cal.example/mcp", "auth": "oauth"},
            {
                "name": "mail",
                "url": "https://mail.example/mcp",
                "auth": "oauth",
                "scopes": ["mail.read", "offline_access"],
                "client_id_parameter": "/stepwise/mcp/mail/client-id",
                "client_secret_parameter": "/stepwise/mcp/mail/client-secret",
            },
            {"name": "both", "url": "https://b.example/mcp", "auth": "oauth", "token_parameter": f"{PATH}t"},
            {
                "name": "secret",
                "url": "https://b.example/mcp",
                "auth": "oauth",
                "client_secret_parameter": "/stepwise/mcp/s",
            },
            {"name": "far", "url": "https://b.example/mcp", "auth": "oauth", "client_id_parameter": "/x/id"},
            {"name": "spaced", "url": "https://b.example/mcp", "auth": "oauth", "scopes": ["a b"]},
            {"name": "none", "url": "https://b.example/mcp", "auth": "oauth", "scopes": []},
            {"name": "tok", "url": "https://b.example/mcp", "scopes": ["a"]},
            {"name": "basic", "url": "https://b.example/mcp", "auth": "basic"},
        ]
    )
    with caplog.at_level(logging.WARNING):
        entries = parse_servers(document, PATH)
    assert [(e.name, e.auth, e.scopes, e.client_id_parameter) for e in entries] == [
        ("cal", "oauth", None, None),
        ("mail", "oauth", ("mail.read", "offline_access"), "/stepwise/mcp/mail/client-id"),
    ]
    assert entries[1].client_secret_parameter == "/stepwise/mcp/mail/client-secret"
    assert ServerEntry(name="t", url="https://t.example/mcp").auth == "token"
    lines = [record.getMessage().removeprefix("MCP server entry ") for record in caplog.records]
    assert lines == [
        "2 ('both') skipped: entry: an \"oauth\" server signs each person in: it takes no token_parameter",
        "3 ('secret') skipped: entry: client_secret_parameter needs client_id_parameter",
        "4 ('far') skipped: client_id_parameter must be under /stepwise/mcp/ (McpParametersPath), "
        "the only parameters the functions may read",
        "5 ('spaced') skipped: scopes: each scope must be a non-empty string without spaces, "
        "quotes or backslashes",
        "6 ('none') skipped: scopes: Tuple should have at least 1 item after validation, not 0",
        '7 (\'tok\') skipped: entry: scopes: only for "auth": "oauth"',
        "8 ('basic') skipped: auth: Input should be 'token' or 'oauth'",
    ]


@pytest.mark.parametrize(
    "url",
    [
        "http://192.0.2.2:8099\\@localhost/mcp",  # urllib3 (and httpx) send it to 192.0.2.2
        "https://a.example\\@b.example/mcp",
        "https://user:secret@a.example/mcp",
        "http://user@127.0.0.1:9/mcp",
        "https://@a.example/mcp",
    ],
)
def test_a_server_url_with_a_backslash_or_user_info_is_skipped_without_repeating_it(
    url: str, caplog: pytest.LogCaptureFixture
) -> None:
    document = json.dumps([{"name": "odd", "url": url}, {"name": "ok", "url": "http://[::1]:9/mcp"}])
    with caplog.at_level(logging.WARNING):
        entries = parse_servers(document, PATH)
    assert [entry.name for entry in entries] == ["ok"]
    (line,) = [record.getMessage() for record in caplog.records]
    assert line.startswith("MCP server entry 0 ('odd') skipped: url: must not hold a backslash or a user")
    assert "secret" not in line


@pytest.mark.parametrize("document", ["{not json", '{"servers": 3}', '"a string"'])
def test_an_unreadable_document_is_one_line_and_no_servers(
    caplog: pytest.LogCaptureFixture, document: str
) -> None:
    with caplog.at_level(logging.WARNING):
        assert parse_servers(document, PATH) == ()
    assert len(caplog.records) == 1 and "no outside tools" in caplog.records[0].getMessage()


def test_a_token_parameter_is_a_bearer_token_or_a_header() -> None:
    assert token_headers("abc") == {"Authorization": "Bearer abc"}
    assert token_headers("Bearer abc") == {"Authorization": "Bearer abc"}
    assert token_headers("X-Api-Key: s3cret") == {"X-Api-Key": "s3cret"}


# ------------------------------------------------------------------------------- offering the tools
def test_tools_are_namespaced_sorted_marked_and_ask_per_policy() -> None:
    servers = FakeRemoteServers(listings={"b": LISTING, "a": LISTING, "c": LISTING})
    tools, _, _ = setup(
        [
            {"name": "b", "url": "https://b.example/mcp"},
            {"name": "a", "url": "https://a.example/mcp", "approval": "always", "allowed_tools": ["look"]},
            {"name": "c", "url": "https://c.example/mcp", "approval": "never"},
        ],
        servers,
    )
    offered = {tool.name: tool for tool in tools.tools()}
    assert list(offered) == ["a__look", "b__look", "b__safe", "b__zap", "c__look", "c__safe", "c__zap"]
    assert {name: tool.needs_approval for name, tool in offered.items()} == {
        "a__look": True,  # always
        "b__look": False,  # writes: read-only
        "b__safe": True,  # writes: not marked read-only
        "b__zap": True,
        "c__look": False,  # never
        "c__safe": False,
        "c__zap": False,
    }
    assert offered["b__zap"].description == "[Tool of the outside MCP server “b”] Deletes things"
    assert offered["b__zap"].api_spec()["input_schema"] == {"type": "object"}


def test_the_offered_tools_are_the_same_bytes_whatever_order_the_server_lists_them_in() -> None:
    servers = FakeRemoteServers(listings={"s": LISTING})
    tools, caller, clock = setup([{"name": "s", "url": "https://s.example/mcp"}], servers)
    first = json.dumps(ToolRegistry(tools.tools(), caller.ledger).api_tools())
    servers.listings["s"] = [{**tool, "inputSchema": {"type": "object"}} for tool in reversed(LISTING)]
    clock.now += 3600  # stale: fetched again, listed in another order
    assert json.dumps(ToolRegistry(tools.tools(), caller.ledger).api_tools()) == first
    assert servers.requests == [("s", "tools/list"), ("s", "tools/list")]


def test_a_list_is_fetched_once_until_stale_or_its_entry_changes_and_runtools_never_fetches() -> None:
    servers = FakeRemoteServers(listings={"s": LISTING})
    tools, caller, clock = setup([{"name": "s", "url": "https://s.example/mcp"}], servers)
    tools.tools()
    clock.now += 3599
    tools.tools()
    assert servers.requests == [("s", "tools/list")]
    run_tools = RemoteTools(tools._servers, caller, refresh=False, memo_seconds=0)
    clock.now += 10
    assert len(run_tools.tools()) == 3 and len(servers.requests) == 1
    changed = RemoteTools(
        lambda: (ServerEntry(name="s", url="https://s.example/mcp", approval="always"),), caller, refresh=True
    )
    changed.tools()
    assert len(servers.requests) == 2


def test_a_failed_fetch_serves_the_list_it_had_and_counts_toward_the_breaker() -> None:
    servers = FakeRemoteServers(listings={"s": LISTING})
    tools, caller, clock = setup([{"name": "s", "url": "https://s.example/mcp"}], servers)
    assert len(tools.tools()) == 3
    del servers.listings["s"]
    for _ in range(3):
        clock.now += 3600
        assert len(tools.tools()) == 3
    assert caller.cache.get_many(["s"])["s"].skipped(clock.now)
    clock.now += 3600
    tools.tools()
    assert servers.requests.count(("s", "tools/list")) == 5  # the breaker's wait has passed: one try


# ------------------------------------------------------------------------------------------ calls
def test_results_are_marked_capped_and_errors_are_errors() -> None:
    text, is_error = render("s", {"content": [{"type": "text", "text": "x" * 5000}]}, 600)
    assert text.startswith(marker("s") + "\n") and len(text) <= 600 and "[cut: the result was 5000" in text
    assert not is_error
    text, is_error = render("s", {"content": [], "structuredContent": {"b": 1, "a": 2}, "isError": True}, 600)
    assert text.endswith('{"a": 2, "b": 1}') and is_error
    text, _ = render("s", {"content": [{"type": "image", "data": "..."}]}, 600)
    assert text.endswith("[image content not shown]")


def test_a_call_records_an_intent_then_its_answer_and_a_retry_returns_the_answer() -> None:
    servers = FakeRemoteServers(listings={"s": LISTING})
    tools, caller, _ = setup([{"name": "s", "url": "https://s.example/mcp"}], servers)
    result = call(tools, "s__zap", arguments={"what": "x"})
    assert result.content == marker("s") + "\nzap ran" and not result.is_error
    assert caller.ledger.get("t:1").kind == "done"  # type: ignore[union-attr]
    again = call(tools, "s__zap", arguments={"what": "x"})
    assert again.content == result.content
    assert servers.requests.count(("s", "tools/call")) == 1


def test_a_retry_that_finds_only_the_intent_does_not_send_a_write_again_but_reads_again() -> None:
    servers = FakeRemoteServers(listings={"s": LISTING})
    tools, caller, _ = setup([{"name": "s", "url": "https://s.example/mcp"}], servers)
    caller.ledger.record_intent("t:1", INTENT)  # RunTools died after sending it
    caller.ledger.record_intent("t:2", INTENT)
    unknown = call(tools, "s__zap", "1")
    assert unknown.is_error and "The outcome of this call is unknown" in unknown.content
    assert servers.requests.count(("s", "tools/call")) == 0
    read = call(tools, "s__look", "2")
    assert not read.is_error and servers.requests.count(("s", "tools/call")) == 1


def test_server_errors_are_error_results_and_the_breaker_skips_the_server_without_a_request() -> None:
    failures = iter(
        [
            RemoteCallError("no answer within 12 s", may_have_run=True),
            RemoteCallError("the server answered with an error: Unknown tool (code -32602)", counts=False),
            RemoteCallError("HTTP 502 from the server"),
            RemoteCallError("the server could not be reached (connection failed)"),
        ]
    )
    servers = FakeRemoteServers(listings={"s": LISTING}, answer=lambda *_: next(failures))
    tools, caller, clock = setup([{"name": "s", "url": "https://s.example/mcp"}], servers)
    results = [call(tools, "s__look", str(n)) for n in range(5)]
    assert all(result.is_error for result in results)
    assert "It may or may not have acted" in results[0].content
    assert "Unknown tool" in results[1].content  # an answer, not a failure of the server
    assert "temporarily unavailable" in results[4].content and "Nothing was sent" in results[4].content
    assert servers.requests.count(("s", "tools/call")) == 4
    assert caller.cache.get_many(["s"])["s"].failures == 3
    servers.answer = lambda *_: {"content": [{"type": "text", "text": "back"}]}
    clock.now += 301
    fresh = RemoteTools(tools._servers, caller, refresh=False, memo_seconds=0)  # another invocation
    assert not call(fresh, "s__look", "9").is_error
    assert caller.cache.get_many(["s"])["s"].failures == 0


def test_an_isError_answer_is_recorded_as_an_error_and_a_retry_keeps_it_one() -> None:
    servers = FakeRemoteServers(
        listings={"s": LISTING},
        answer=lambda *_: {"content": [{"type": "text", "text": "no such thing"}], "isError": True},
    )
    tools, _, _ = setup([{"name": "s", "url": "https://s.example/mcp"}], servers)
    first, retried = call(tools, "s__zap"), call(tools, "s__zap")
    assert first.is_error and retried.is_error and first.content == retried.content
    assert servers.requests.count(("s", "tools/call")) == 1


# ------------------------------------------------------------------------------------ labels as first seen
def approvals(tools: RemoteTools) -> dict[str, bool]:
    return {tool.name: tool.needs_approval for tool in tools.tools()}


def relabelled(name: str, annotations: dict[str, Any]) -> list[dict[str, Any]]:
    return [{**tool, "annotations": annotations} if tool["name"] == name else tool for tool in LISTING]


def label_lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if "labels" in r.getMessage()]


def test_an_outside_tool_that_turns_read_only_still_asks_until_the_owner_accepts(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING)
    servers = FakeRemoteServers(listings={"s": LISTING})
    entry = {"name": "s", "url": "https://s.example/mcp"}
    tools, caller, clock = setup([entry], servers)
    assert approvals(tools)["s__zap"] is True  # writes: not labelled read-only when first seen
    # The server relabels its deleting tool "read-only"; the hourly refresh fetches the new list
    servers.listings["s"] = relabelled("zap", READ)
    clock.now += 3600
    assert approvals(tools)["s__zap"] is True
    run_tools = RemoteTools(tools._servers, caller, refresh=False, memo_seconds=0)
    assert approvals(run_tools)["s__zap"] is True  # RunTools reads the same record
    # A retry that finds only the intent still treats it as a write: not sent again
    caller.ledger.record_intent("t:1", INTENT)
    assert "The outcome of this call is unknown" in call(run_tools, "s__zap", "1").content
    # The change is logged once, with how to accept it; later refreshes do not log it again
    (line,) = label_lines(caplog)
    assert "tool 'zap' changed its labels from {} to {\"readOnlyHint\":true}" in line
    accept = line.split('"accept_labels": "')[1][:12]
    clock.now += 3600
    tools.tools()
    assert len(label_lines(caplog)) == 1
    # The owner accepts the server's current labels in its entry: the next list is fetched and trusted
    accepted = RemoteTools(
        lambda: (ServerEntry.model_validate({**entry, "accept_labels": accept}),),
        caller,
        refresh=True,
        memo_seconds=0,
    )
    assert approvals(accepted)["s__zap"] is False
    assert "the owner accepted its tools' labels" in label_lines(caplog)[-1]


def test_a_wrong_or_stale_acceptance_changes_nothing() -> None:
    servers = FakeRemoteServers(listings={"s": LISTING})
    tools, caller, _ = setup([{"name": "s", "url": "https://s.example/mcp"}], servers)
    tools.tools()
    servers.listings["s"] = relabelled("zap", READ)
    wrong = RemoteTools(
        lambda: (ServerEntry(name="s", url="https://s.example/mcp", accept_labels="0123456789ab"),),
        caller,
        refresh=True,
        memo_seconds=0,
    )
    assert approvals(wrong)["s__zap"] is True


def test_a_new_tool_asks_under_every_policy_until_accepted_and_other_label_changes_are_logged_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING)
    servers = FakeRemoteServers(listings={"n": LISTING})
    tools, caller, clock = setup(
        [{"name": "n", "url": "https://n.example/mcp", "approval": "never"}], servers
    )
    assert not any(approvals(tools).values())
    send = {"name": "send", "inputSchema": {"type": "object"}, "annotations": READ}
    servers.listings["n"] = [*relabelled("safe", {"destructiveHint": True}), send]
    clock.now += 3600
    assert approvals(tools) == {"n__look": False, "n__safe": False, "n__send": True, "n__zap": False}
    lines = label_lines(caplog)
    assert len(lines) == 2
    assert "tool 'send' is new" in lines[1] and "tool 'safe' changed its labels" in lines[0]
    # Another container refreshing the same list logs nothing more
    other = RemoteTools(tools._servers, caller, refresh=True, memo_seconds=0)
    clock.now += 3600
    other.tools()
    tools.tools()
    assert len(label_lines(caplog)) == 2


def test_labels_written_before_pinning_are_pinned_at_the_next_refresh() -> None:
    servers = FakeRemoteServers(listings={"s": relabelled("zap", READ)})
    tools, caller, clock = setup([{"name": "s", "url": "https://s.example/mcp"}], servers)
    tools.tools()
    record = caller.cache.records["s"]  # type: ignore[attr-defined]
    caller.cache.records["s"] = record.model_copy(update={"pinned_json": ""})  # type: ignore[attr-defined]
    assert approvals(tools)["s__zap"] is False  # as before pinning: the list's own labels
    servers.listings["s"] = LISTING
    clock.now += 3600
    assert approvals(tools)["s__zap"] is True
    servers.listings["s"] = relabelled("zap", READ)
    clock.now += 3600
    assert approvals(tools)["s__zap"] is True  # pinned as not read-only at that refresh


# ---------------------------------------------------------------- RunTools read its lists before the offer
# RunTools keeps what it read for 20 s (a warm-up's read, made before CallModel fetched a list): the model may
# be offered, and call, a tool that read lacks.
PING = {"name": "ping", "inputSchema": {"type": "object"}, "annotations": READ}


class Sides:
    """One deployment's CallModel and RunTools containers: CallModel's tools refresh lists (read anew at each
    call); RunTools' keep what they read (an hour here, so that nothing depends on the test's speed)."""

    def __init__(
        self,
        services: TurnServices,
        entries: list[dict[str, Any]],
        servers: FakeRemoteServers,
        ledger: InMemoryToolCallLedger,
    ) -> None:
        self.call_side, self.caller, self.clock = setup(entries, servers, ledger=ledger)
        self.run_side = RemoteTools(self.call_side._servers, self.caller, refresh=False, memo_seconds=3600)
        built_in = services.tools.built_in
        self.call_model_services = replace(services, tools=Tools(built_in, remote=self.call_side.tools))
        self.run_tools_services = replace(
            services, tools=Tools(built_in, remote=self.run_side.tools, reread_remote=self.run_side.reread)
        )
        self.services = services
        self.turns = 0

    def round(self, model: ScriptedModel, *calls: tuple[str, dict[str, Any]]) -> tuple[Next, list[Any]]:
        """A turn whose model makes these calls: CallModel, then RunTools (or RunToolsOrAskApproval, as
        CallModel routes); RunTools' route and the step's results."""
        model.responses.append(tool_use(*calls))
        self.turns += 1
        begin = turn_start(self.services, "please", update_id=self.turns)
        load_context(begin, self.services)
        routed = call_model(CallModelInput(turn=begin.turn), self.call_model_services)
        offered = [tool["name"] for tool in model.requests[-1].tools or []]
        assert {name for name, _ in calls if "__" in name} <= set(offered) | {"s__nope"}
        request = RunToolsInput(turn=begin.turn, next=routed, approvals=routed.route == "tools_with_approval")
        after = run_tools(request, self.run_tools_services)
        step = self.services.stores.turns.get_step(begin.turn.turn_id, 0)
        return after, step.tool_results


def consistent_reads(caller: RemoteToolCaller) -> int:
    return sum(1 for _, consistent in caller.cache.reads if consistent)  # type: ignore[attr-defined]


def test_a_new_servers_tool_runs_on_its_first_call_after_run_tools_read_the_lists_before_it_was_fetched(
    services: TurnServices, model: ScriptedModel, ledger: InMemoryToolCallLedger
) -> None:
    servers = FakeRemoteServers(listings={"n": LISTING})
    sides = Sides(services, [{"name": "n", "url": "https://n.example/mcp"}], servers, ledger)
    assert sides.run_side.tools() == []  # RunTools' warm-up: the server's list was never fetched
    after, (result,) = sides.round(model, ("n__look", {}))  # CallModel fetched it and offered n__look
    assert after.route == "model"
    assert result == {
        "type": "tool_result",
        "tool_use_id": "toolu_0_n__look",
        "content": marker("n") + "\nlook ran",
        "is_error": False,
    }
    # RunTools read the records again, once, strongly consistent, and asked the server nothing but the call
    assert consistent_reads(sides.caller) == 1
    assert servers.requests == [("n", "tools/list"), ("n", "tools/call")]
    # What it read is kept: the next call of the tool reads nothing more
    _, (again,) = sides.round(model, ("n__look", {}))
    assert not again["is_error"] and consistent_reads(sides.caller) == 1


def test_a_tool_added_to_a_known_server_asks_for_the_tap_on_its_first_call_as_a_new_tool_does(
    services: TurnServices, model: ScriptedModel, ledger: InMemoryToolCallLedger
) -> None:
    servers = FakeRemoteServers(listings={"s": LISTING})
    entry = {"name": "s", "url": "https://s.example/mcp", "approval": "never"}
    sides = Sides(services, [entry], servers, ledger)
    sides.call_side.tools()  # an earlier turn fetched the list (and pinned its labels)
    assert "s__ping" not in {tool.name for tool in sides.run_side.tools()}  # RunTools' warm-up read it
    servers.listings["s"] = [*LISTING, PING]
    sides.clock.now += 3600  # stale: CallModel fetches it again and offers s__ping
    after, results = sides.round(model, ("s__ping", {}))
    # A new tool asks under every policy (`never` too), with its labels as the server lists them now
    assert after.route == "approval" and results == []
    request = services.stores.approvals.get(after.approval_id or "")
    assert request is not None
    (asked,) = request.calls
    assert asked.description.startswith("Call ping on the outside MCP server “s” with:")
    assert servers.requests.count(("s", "tools/call")) == 0


def test_a_server_listed_after_run_tools_read_the_servers_list_is_read_again_past_its_cache(
    services: TurnServices, model: ScriptedModel, ledger: InMemoryToolCallLedger
) -> None:
    servers = FakeRemoteServers(listings={"s": LISTING, "n": [PING]})
    old = (ServerEntry(name="s", url="https://s.example/mcp"),)
    new = (*old, ServerEntry(name="n", url="https://n.example/mcp"))
    sides = Sides(services, [], servers, ledger)
    call_side = RemoteTools(lambda: new, sides.caller, refresh=True, memo_seconds=0)
    sides.call_model_services.tools.remote = call_side.tools
    # RunTools' cached copy of the servers list is older than the owner's addition of "n"
    run_side = RemoteTools(
        lambda: old, sides.caller, refresh=False, memo_seconds=3600, fresh_servers=lambda: new
    )
    sides.run_tools_services.tools.remote = run_side.tools
    sides.run_tools_services.tools.reread_remote = run_side.reread
    run_side.tools()
    after, (result,) = sides.round(model, ("n__ping", {}))
    assert after.route == "model"
    assert result["content"] == marker("n") + "\nping ran" and not result["is_error"]


def test_a_tool_missing_from_the_current_lists_too_is_unknown_after_one_read_and_the_server_has_its_say(
    services: TurnServices, model: ScriptedModel, ledger: InMemoryToolCallLedger
) -> None:
    def answer(server: str, tool: str, arguments: dict[str, Any]) -> dict[str, Any] | RemoteCallError:
        if tool == "zap":  # removed from the server after CallModel listed it
            return RemoteCallError(
                "the server answered with an error: Unknown tool: zap (code -32602)", counts=False
            )
        return {"content": [{"type": "text", "text": f"{tool} ran"}]}

    servers = FakeRemoteServers(listings={"s": LISTING}, answer=answer)
    sides = Sides(
        services, [{"name": "s", "url": "https://s.example/mcp", "approval": "never"}], servers, ledger
    )
    sides.call_side.tools()
    sides.run_side.tools()
    # A built-in name no tool has: nothing is read again
    _, (result,) = sides.round(model, ("add_tsk", {}))
    assert result["content"].startswith("Unknown tool 'add_tsk'") and consistent_reads(sides.caller) == 0
    # An outside name no list has, called twice in a round: read again once, then unknown
    _, results = sides.round(model, ("s__nope", {}), ("s__nope", {}))
    assert [r["content"].split(".")[0] for r in results] == ["Unknown tool 's__nope'"] * 2
    assert consistent_reads(sides.caller) == 1
    # A tool the server removed after CallModel listed it: it is in the list, so it is called, and the
    # server's refusal is the answer
    _, (refused,) = sides.round(model, ("s__zap", {}))
    assert refused["is_error"] and "Unknown tool: zap (code -32602)" in refused["content"]
    assert sides.caller.cache.get_many(["s"])["s"].failures == 0  # a refusal, not a failure of the server
    assert consistent_reads(sides.caller) == 1  # zap was in the list RunTools had: no read again
