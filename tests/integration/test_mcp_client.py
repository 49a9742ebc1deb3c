"""Stepwise as a client of outside MCP servers, through the real state machine on the emulation, against the
MCP project's reference time server (`mcp-server-time` from the package index) on 127.0.0.1."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from boto3.dynamodb.conditions import Key
from support.mcp_servers import SilentServer, TimeServer
from support.stack import Stack

from stepwise.remote_tools.results import marker
from stepwise_local.anthropic_server import text, tool_use

MCP_SERVERS = "/stepwise/mcp/servers"


def tool_results(request: dict[str, Any]) -> list[dict[str, Any]]:
    return [b for b in request["messages"][-1]["content"] if b.get("type") == "tool_result"]


def tool_names(request: dict[str, Any]) -> list[str]:
    return [tool["name"] for tool in request["tools"]]


@pytest.fixture
def servers(stack: Stack, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """`servers([...])` lists outside servers for this test; the list is empty again afterwards, and the
    emulation's clock goes back."""
    monkeypatch.setattr(stack.emulation, "_clock_offset", stack.emulation._clock_offset)

    def listed(entries: list[dict[str, Any]]) -> None:
        stack.emulation.put_parameter(MCP_SERVERS, json.dumps(entries))

    yield listed
    stack.emulation.put_parameter(MCP_SERVERS, "[]")


def test_the_model_calls_a_tool_of_a_real_mcp_server_and_gets_its_result(
    stack: Stack, servers: Any, time_server: TimeServer
) -> None:
    user = stack.new_user()
    servers([{"name": "time", "url": time_server.url}])
    stack.anthropic.script(
        tool_use(("time__get_current_time", {"timezone": "Europe/Lisbon"})), text("It is late in Lisbon.")
    )
    calls_before, lists_before = time_server.count("tools/call"), time_server.count("tools/list")
    assert stack.say(user, "what time is it in Lisbon?")["status"] == "SUCCEEDED"
    offered = {tool["name"]: tool for tool in stack.anthropic.requests[0]["tools"]}
    assert {"time__convert_time", "time__get_current_time"} <= offered.keys()
    assert offered["time__get_current_time"]["description"].startswith(
        "[Tool of the outside MCP server “time”]"
    )
    assert offered["time__get_current_time"]["input_schema"]["required"] == ["timezone"]
    (result,) = tool_results(stack.anthropic.requests[1])
    assert result["is_error"] is False
    assert result["content"].startswith(marker("time"))
    answer = json.loads(result["content"].split("\n", 1)[1])
    assert answer["timezone"] == "Europe/Lisbon" and answer["day_of_week"]
    assert time_server.count("tools/call") == calls_before + 1
    assert time_server.count("tools/list") == lists_before + 1  # CallModel's fetch; the call lists nothing
    assert stack.replies(user) == ["It is late in Lisbon."]
    (entry,) = stack.emulation.table("AuditTable").query(KeyConditionExpression=Key("user_id").eq(user))[
        "Items"
    ]
    assert (entry["tool"], entry["outcome"], entry["approval"]) == (
        "time__get_current_time",
        "ok",
        "not_needed",
    )
    ledger = stack.emulation.table("ToolCallsTable").scan()["Items"]
    (record,) = [r for r in ledger if r["result"] == result["content"]]
    assert record["kind"] == "done"


def test_the_tool_list_is_cached_byte_stable_and_fetched_again_once_stale(
    stack: Stack, servers: Any, time_server: TimeServer
) -> None:
    user = stack.new_user()
    stack.emulation.config.env["REMOTE_TOOLS_REFRESH_SECONDS"] = "600"
    servers([{"name": "cached", "url": time_server.url}])
    lists_before = time_server.count("tools/list")
    for n in range(2):
        stack.anthropic.script(text(f"Hello {n}"))
        stack.say(user, f"hello {n}")
    first, second = stack.anthropic.requests
    assert "cached__get_current_time" in tool_names(first)
    assert json.dumps(first["tools"]) == json.dumps(second["tools"])  # the cached prefix stays byte-stable
    assert time_server.count("tools/list") == lists_before + 1  # the second turn asked the server nothing
    stack.emulation.advance_clock(timedelta(minutes=11))
    stack.anthropic.script(text("Later"))
    stack.say(user, "later")
    assert time_server.count("tools/list") == lists_before + 2
    assert json.dumps(stack.anthropic.requests[2]["tools"]) == json.dumps(first["tools"])


@pytest.mark.parametrize("press", ["Approve", "Deny"])
def test_a_server_with_approval_always_asks_and_runs_once_only_when_approved(
    stack: Stack, servers: Any, time_server: TimeServer, press: str
) -> None:
    user = stack.new_user()
    servers([{"name": "asking", "url": time_server.url, "approval": "always"}])
    stack.anthropic.script(
        tool_use(("asking__get_current_time", {"timezone": "Asia/Tokyo"})), text("Done as you decided.")
    )
    calls_before = time_server.count("tools/call")
    name = stack.send(user, "time in Tokyo?")
    message = stack.buttons(user)
    assert (
        'asks to call get_current_time on the outside MCP server “asking” with:\ntimezone: "Asia/Tokyo"'
        in (stack.telegram.text_of(message))
    )
    assert time_server.count("tools/call") == calls_before  # nothing sent before the tap
    stack.press(user, message, press)
    assert stack.emulation.wait(name)["status"] == "SUCCEEDED"
    (result,) = tool_results(stack.anthropic.requests[1])
    if press == "Approve":
        assert time_server.count("tools/call") == calls_before + 1
        assert not result["is_error"] and "Asia/Tokyo" in result["content"]
    else:
        assert time_server.count("tools/call") == calls_before
        assert result["is_error"] and "Denied by the user" in result["content"]


def test_an_outside_tool_that_turns_read_only_still_asks_for_the_tap(
    stack: Stack, servers: Any, time_server: TimeServer
) -> None:
    # Given a server whose get_current_time was first seen without the read-only label (its record in
    # RemoteToolsTable, as an earlier refresh pinned it), and which now labels it read-only
    user = stack.new_user()
    servers([{"name": "relabel", "url": time_server.url}])
    table = stack.emulation.table("RemoteToolsTable")
    first_seen = {"get_current_time": {}, "convert_time": {"readOnlyHint": True}}
    table.put_item(Item={"server": "relabel", "pinned_json": json.dumps(first_seen), "noticed_json": "[]"})
    stack.anthropic.script(
        tool_use(("relabel__get_current_time", {"timezone": "Asia/Tokyo"})), text("Done as you decided.")
    )
    calls_before = time_server.count("tools/call")
    # When the model calls it (CallModel fetched the list: the server's labels say read-only)
    name = stack.send(user, "time in Tokyo?")
    # Then the call waits for the tap under the `writes` policy, nothing sent before it
    message = stack.buttons(user)
    assert "get_current_time" in stack.telegram.text_of(message)
    assert time_server.count("tools/call") == calls_before
    stack.press(user, message, "Approve")
    assert stack.emulation.wait(name)["status"] == "SUCCEEDED"
    assert time_server.count("tools/call") == calls_before + 1
    # And the record keeps the first-seen labels, with the change noted once
    record = table.get_item(Key={"server": "relabel"})["Item"]
    assert json.loads(str(record["pinned_json"]))["get_current_time"] == {}
    noticed = json.loads(str(record["noticed_json"]))
    assert [line for line in noticed if line.startswith("tool 'get_current_time' changed its labels from {}")]


class MailServer(TimeServer):
    """An outside server with one writing tool, `send_email(to, subject, body)`, which answers "sent"."""

    def __init__(self) -> None:
        super().__init__()
        from mcp.server.mcpserver import MCPServer

        server = MCPServer("mail")

        @server.tool()
        def send_email(to: str, subject: str, body: str) -> str:
            """Send an email."""
            return f"sent to {to}"

        self._app = server.streamable_http_app()


def test_an_outside_email_with_a_long_body_asks_showing_its_recipient_and_sends_only_once_approved(
    stack: Stack, servers: Any
) -> None:
    user = stack.new_user()
    body = ("Hello Eve,\n" + "here are the figures you asked for, as promised. " * 16)[:770]
    with MailServer() as mail:
        servers([{"name": "mail", "url": mail.url}])  # approval: writes (send_email is not read-only)
        arguments = {"body": body, "subject": "Figures", "to": "eve@example.com"}
        stack.anthropic.script(tool_use(("mail__send_email", arguments)), text("Sent."))
        name = stack.send(user, "send Eve the figures")
        shown = stack.telegram.text_of(stack.buttons(user))
        assert mail.count("tools/call") == 0  # nothing sent before the tap
        stack.press(user, stack.buttons(user), "Approve")
        assert stack.emulation.wait(name)["status"] == "SUCCEEDED"
        assert mail.count("tools/call") == 1
    # Before, the arguments' JSON with its keys sorted was cut at 600 characters: the body hid the recipient.
    assert "asks to call send_email on the outside MCP server “mail” with:" in shown
    assert '\nto: "eve@example.com"\n' in shown and '\nsubject: "Figures"\n' in shown
    assert f"\nbody: {json.dumps(body)}\nNo answer" in shown  # the whole body: it fits one call's room
    assert shown.index("to: ") < shown.index("body: ") and shown.index("subject: ") < shown.index("body: ")
    (result,) = tool_results(stack.anthropic.requests[1])
    assert not result["is_error"] and "sent to eve@example.com" in result["content"]


class GrowingServer(TimeServer):
    """An outside server with one read-only tool, `ping`; `add(name)` gives it another (read-only, answering
    "<name> ran") while it runs."""

    def __init__(self) -> None:
        super().__init__()
        from mcp.server.mcpserver import MCPServer
        from mcp_types import ToolAnnotations

        self._mcp = MCPServer("growing")
        self._read_only = ToolAnnotations(readOnlyHint=True)

        def ping() -> str:
            """Answers pong."""
            return "pong"

        self._mcp.add_tool(ping, annotations=self._read_only)
        self._app = self._mcp.streamable_http_app()

    def add(self, name: str) -> None:
        def added() -> str:
            return f"{name} ran"

        self._mcp.add_tool(added, name=name, description=f"The {name} tool.", annotations=self._read_only)


def test_a_tool_added_to_a_known_server_works_on_its_first_call_after_run_tools_was_warmed(
    stack: Stack, servers: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    user = stack.new_user()
    stack.emulation.config.env["REMOTE_TOOLS_REFRESH_SECONDS"] = "600"
    with GrowingServer() as growing:
        servers([{"name": "grow", "url": growing.url}])
        stack.anthropic.script(text("Hi"))
        stack.say(user, "hi")  # CallModel fetched the list (ping), its labels pinned as first seen
        # From here each function's container keeps its runtime; RunTools' is warmed up: it reads the lists
        monkeypatch.setattr(stack.emulation.config, "warm_containers", True)
        monkeypatch.setattr(stack.emulation, "_warm_runtimes", {})
        stack.emulation.warm_up("RunToolsFunction")
        # The server gains a tool; the list is stale by the next turn, so its CallModel fetches and offers it
        growing.add("pong")
        stack.emulation.advance_clock(timedelta(minutes=11))
        stack.anthropic.script(tool_use(("grow__pong", {})), text("Pong ran."))
        name = stack.send(user, "pong please")
        # A tool that was not there when the labels were pinned asks for the tap (it is not "Unknown tool")
        message = stack.buttons(user)
        assert "grow__pong" in tool_names(stack.anthropic.requests[1])
        assert "asks to call pong on the outside MCP server “grow”" in stack.telegram.text_of(message)
        assert growing.count("tools/call") == 0
        stack.press(user, message, "Approve")
        assert stack.emulation.wait(name)["status"] == "SUCCEEDED"
        (result,) = tool_results(stack.anthropic.requests[2])
        assert not result["is_error"] and result["content"] == marker("grow") + "\npong ran"
        assert growing.count("tools/call") == 1
        assert growing.count("tools/list") == 2  # CallModel's two fetches: RunTools lists nothing
    assert stack.replies(user)[-1] == "Pong ran."


def test_a_server_that_stops_answering_gives_error_results_then_is_skipped_without_a_request(
    stack: Stack, servers: Any, time_server: TimeServer
) -> None:
    user = stack.new_user()
    servers([{"name": "flaky", "url": time_server.url}])
    stack.anthropic.script(text("Hi"))
    stack.say(user, "hi")  # the list is fetched while the server answers
    with SilentServer() as silent:
        servers([{"name": "flaky", "url": silent.url, "timeout_seconds": 1}])
        call = tool_use(("flaky__get_current_time", {"timezone": "UTC"}))
        stack.anthropic.script(call, text("The time server is not answering."))
        started = time.monotonic()
        stack.say(user, "time?")
        # CallModel's refresh times out (the stale list is served), the call times out, the second model
        # call's refresh times out: three failures, and the breaker opens.
        (result,) = tool_results(stack.anthropic.requests[2])
        assert result["is_error"] and "no answer within 1 s" in result["content"]
        assert "may or may not have acted" in result["content"]
        assert "flaky__get_current_time" in tool_names(stack.anthropic.requests[2])  # the list it had
        assert time.monotonic() - started < 20
        connections = silent.connections
        stack.anthropic.script(call, text("Still down."))
        stack.say(user, "time now?")
        (skipped,) = tool_results(stack.anthropic.requests[4])
        assert skipped["is_error"] and "temporarily unavailable" in skipped["content"]
        assert silent.connections == connections  # no request reached the server


def test_only_allowed_tools_are_offered_and_a_bad_entry_logs_one_line_while_the_others_work(
    stack: Stack, servers: Any, time_server: TimeServer, caplog: pytest.LogCaptureFixture
) -> None:
    user = stack.new_user()
    servers(
        [
            {"name": "bad__name", "url": time_server.url},
            {"name": "plain", "url": "http://example.com/mcp"},
            {"name": "tz", "url": time_server.url, "allowed_tools": ["convert_time"]},
        ]
    )
    stack.anthropic.script(
        tool_use(("tz__get_current_time", {"timezone": "UTC"})), text("That tool is not available.")
    )
    assert stack.say(user, "what time is it?")["status"] == "SUCCEEDED"
    names = tool_names(stack.anthropic.requests[0])
    assert "tz__convert_time" in names and "tz__get_current_time" not in names
    assert not [name for name in names if name.startswith(("bad", "plain"))]
    (result,) = tool_results(stack.anthropic.requests[1])
    assert result["is_error"] and "Unknown tool 'tz__get_current_time'" in result["content"]
    logged = [record.getMessage() for record in caplog.records if "MCP server entry" in record.getMessage()]
    assert logged == [  # one line per bad entry: a container parses a document once
        "MCP server entry 0 ('bad__name') skipped: name: must be letters, digits, _ or -, without '__' "
        "and not ending in '_' (tools are named <server>__<tool>)",
        "MCP server entry 1 ('plain') skipped: url: must be https:// (http:// only to 127.0.0.1 or "
        "localhost)",
    ]
    assert "add_task" in names  # the built-in tools are still there


def test_throttling_of_the_servers_table_is_absorbed_by_the_state_machine(
    stack: Stack, servers: Any, time_server: TimeServer
) -> None:
    user = stack.new_user()
    servers([{"name": "busy", "url": time_server.url}])
    stack.anthropic.script(tool_use(("busy__get_current_time", {"timezone": "UTC"})), text("Noon."))
    before = len(stack.emulation.throttled)
    stack.emulation.throttle("RemoteToolsTable", 2)
    assert stack.say(user, "what time is it?")["status"] == "SUCCEEDED"
    assert len(stack.emulation.throttled) - before == 2
    assert stack.replies(user) == ["Noon."]
    (result,) = tool_results(stack.anthropic.requests[-1])
    assert not result["is_error"] and '"timezone": "UTC"' in result["content"]
