"""Outside MCP servers' tools on in-memory fakes (no sockets): the servers list's validation, the approval
policy, deterministic offering, the cache, results, the circuit breaker and the ledger's intent."""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest

from stepwise.remote_tools.calls import INTENT, RemoteLimits, RemoteToolCaller
from stepwise.remote_tools.catalog import RemoteTools
from stepwise.remote_tools.client import RemoteCallError
from stepwise.remote_tools.config import ServerEntry, parse_servers
from stepwise.remote_tools.results import marker, render
from stepwise.remote_tools.ssm import token_headers
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
    entries: list[dict[str, Any]], servers: FakeRemoteServers, *, refresh: bool = True
) -> tuple[RemoteTools, RemoteToolCaller, Clock]:
    clock = Clock()
    caller = RemoteToolCaller(
        cache=InMemoryRemoteToolCache(),
        servers=lambda: servers,
        ledger=InMemoryToolCallLedger(),
        headers=lambda entry: {},
        now=clock,
        limits=RemoteLimits(
            refresh_seconds=3600, max_result_chars=600, breaker_failures=3, breaker_seconds=300
        ),
    )
    parsed = tuple(ServerEntry.model_validate(entry) for entry in entries)
    return RemoteTools(lambda: parsed, caller, refresh=refresh, memo_seconds=0), caller, clock


def context(call: str) -> ToolContext:
    return ToolContext(user_id=1, chat_id=1, turn_id="t", call_id=f"t:{call}", now="2026-11-25T10:00:00Z")


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
