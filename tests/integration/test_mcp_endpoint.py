"""Stepwise as a remote MCP server, from outside: the official SDK's client over real HTTP against the
emulated HTTP API's /mcp route, with tokens made by /connect in the chat. Calls act for the token's user
only; a destructive call waits for the tap in Telegram and runs once; bad tokens, bodies and methods get
plain HTTP refusals; the rest is JSON-RPC."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import pytest
import requests
from boto3.dynamodb.conditions import Key
from mcp import Client
from mcp.types import CallToolResult
from support.mcp_client import INITIALIZE, call, connect, post, text, with_client
from support.stack import Stack

from stepwise_local.mcp_http import LocalMcpEndpoint


def audit_entries(stack: Stack, user: int) -> list[dict[str, Any]]:
    table = stack.emulation.table("AuditTable")
    return list(table.query(KeyConditionExpression=Key("user_id").eq(user))["Items"])


@pytest.fixture
def endpoint(stack: Stack) -> Iterator[LocalMcpEndpoint]:
    with LocalMcpEndpoint(stack.emulation) as served:
        yield served


@pytest.mark.parametrize("mode", ["legacy", "auto"])
def test_an_mcp_client_uses_the_users_tools_with_a_token_from_connect(
    stack: Stack, endpoint: LocalMcpEndpoint, mode: str
) -> None:
    user = stack.new_user()
    token = connect(stack, user)
    assert endpoint.url in stack.replies(user)[-1]

    async def session(client: Client) -> tuple[list[str], CallToolResult, CallToolResult]:
        listed = await client.list_tools()
        added = await client.call_tool("add_task", {"title": "buy milk"})
        tasks = await client.call_tool("list_tasks", {"status": "pending"})
        return [tool.name for tool in listed.tools], added, tasks

    names, added, tasks = with_client(endpoint.url, token, session, mode)
    assert {"add_task", "list_tasks", "delete_task", "set_timezone"} <= set(names)
    assert not added.is_error and "buy milk" in text(added)
    assert tasks.structured_content is not None
    assert [t["title"] for t in tasks.structured_content["tasks"]] == ["buy milk"]
    assert [t["title"] for t in stack.tasks(user)] == ["buy milk"]
    audited = stack.emulation.table("AuditTable").query(KeyConditionExpression=Key("user_id").eq(user))[
        "Items"
    ]
    assert {e["tool"] for e in audited} == {"add_task", "list_tasks"}


def test_the_token_is_shown_once_and_never_kept_in_the_history(
    stack: Stack, endpoint: LocalMcpEndpoint
) -> None:
    user = stack.new_user()
    token = connect(stack, user)
    stored = " ".join(str(item.get("content", "")) for item in stack.stored(user))
    assert token not in stored and "shown here once" in stored
    items = stack.emulation.table("ConnectionsTable").scan()["Items"]
    assert token not in json.dumps(items, default=str)  # only its hash is stored

    stack.say(user, "/connect")
    assert "laptop" in stack.replies(user)[-1] and token not in stack.replies(user)[-1]
    stack.say(user, "/connect laptop")
    assert "already" in stack.replies(user)[-1]


def test_a_token_acts_as_its_user_only_whatever_the_arguments(
    stack: Stack, endpoint: LocalMcpEndpoint
) -> None:
    owner, other = stack.new_user(), stack.new_user()
    stack.emulation.table("TasksTable")
    owner_token, other_token = connect(stack, owner), connect(stack, other)
    assert not call(endpoint.url, owner_token, "add_task", {"title": "owner's secret"}).is_error
    task_id = int(stack.tasks(owner)[0]["task_id"])

    seen = call(endpoint.url, other_token, "get_task", {"task_id": task_id})
    assert seen.is_error and "secret" not in text(seen)
    forged = call(endpoint.url, other_token, "get_task", {"task_id": task_id, "user_id": owner})
    assert forged.is_error and "user_id" in text(forged)  # no argument names a user
    listed = call(endpoint.url, other_token, "list_tasks", {"status": "all"})
    assert "secret" not in text(listed)
    assert [t["title"] for t in stack.tasks(owner)] == ["owner's secret"]


@pytest.mark.parametrize(
    ("label", "deleted", "said"), [("Approve", True, "Done."), ("Deny", False, "Not done.")]
)
def test_a_destructive_call_from_outside_waits_for_the_tap_in_telegram(
    stack: Stack, endpoint: LocalMcpEndpoint, label: str, deleted: bool, said: str
) -> None:
    user = stack.new_user()
    token = connect(stack, user)
    assert not call(endpoint.url, token, "add_task", {"title": "old plan"}).is_error
    task_id = int(stack.tasks(user)[0]["task_id"])

    asked = call(endpoint.url, token, "delete_task", {"task_id": task_id})
    assert not asked.is_error and "Approval requested in Telegram" in text(asked)
    assert len(stack.tasks(user)) == 1  # nothing yet
    buttons = stack.buttons(user)
    assert stack.telegram.text_of(buttons).splitlines()[:2] == [
        "🔐 Approval needed",
        f"Your MCP client “laptop” asks to delete task #{task_id} “old plan”.",
    ], "the request names the client before the tap"
    assert stack.press(user, buttons, label)["statusCode"] == 200
    stack.emulation.wait_idle(user)

    assert (stack.tasks(user) == []) is deleted
    reply = stack.replies(user)[-1]
    assert reply.startswith(f"Your MCP client “laptop” asked to delete task #{task_id} “old plan”. {said}"), (
        reply
    )
    audited = stack.emulation.table("AuditTable").query(KeyConditionExpression=Key("user_id").eq(user))[
        "Items"
    ]
    runs = [e for e in audited if e["tool"] == "delete_task"]
    assert sorted(e["approval"] for e in runs) == sorted(["requested", "approved" if deleted else "denied"])
    # the chat's history tells the model later what happened
    stored = [str(item.get("content", "")) for item in stack.stored(user)]
    assert any("laptop" in s and "delete_task" in s for s in stored)


def test_a_check_in_from_outside_waits_for_the_tap_and_reminders_name_the_client(
    stack: Stack, endpoint: LocalMcpEndpoint
) -> None:
    user = stack.new_user()
    token = connect(stack, user)
    checkin = {"text": "summarize my inbox", "checkin": True, "repeat": {"days": [], "time": "07:30"}}
    asked = call(endpoint.url, token, "set_reminder", checkin)
    assert not asked.is_error and "Approval requested in Telegram" in text(asked)
    buttons = stack.buttons(user)
    assert stack.telegram.text_of(buttons).splitlines()[:2] == [
        "🔐 Approval needed",
        "Your MCP client “laptop” asks to set a check-in every day at 07:30 (UTC): “summarize my inbox”.",
    ]
    listed = call(endpoint.url, token, "list_reminders", {})
    assert text(listed) == "No reminders.", "nothing is set before the tap"
    # a plain reminder is no check-in: it is set at once
    plain = call(endpoint.url, token, "set_reminder", {"text": "stand up", "in_minutes": 30})
    assert text(plain).startswith("Reminder #1 set on ")
    stack.press(user, buttons, "Approve")
    stack.emulation.wait_idle(user)
    assert stack.replies(user)[-1].startswith(
        "Your MCP client “laptop” asked to set a check-in every day at 07:30 (UTC): “summarize my inbox”. "
        "Done."
    )
    lines = text(call(endpoint.url, token, "list_reminders", {})).splitlines()[1:]
    assert [line.split(": ", 1)[1] for line in lines] == [
        "stand up [set by your MCP client “laptop”]",
        "summarize my inbox [set by your MCP client “laptop”]",
    ]


def test_revoked_wrong_and_missing_tokens_get_401_with_www_authenticate(
    stack: Stack, endpoint: LocalMcpEndpoint
) -> None:
    user = stack.new_user()
    token = connect(stack, user, "phone")
    assert post(endpoint.url, INITIALIZE, token).status_code == 200

    missing = post(endpoint.url, INITIALIZE, None)
    assert missing.status_code == 401 and missing.headers["www-authenticate"] == 'Bearer realm="stepwise"'
    wrong = post(endpoint.url, INITIALIZE, token[:-2] + "xx")
    assert wrong.status_code == 401 and 'error="invalid_token"' in wrong.headers["www-authenticate"]
    assert wrong.json() == {"error": "unauthorized"}

    stack.say(user, "/connect revoke phone")
    assert "Revoked" in stack.replies(user)[-1]
    revoked = post(endpoint.url, INITIALIZE, token)
    assert revoked.status_code == 401 and revoked.json() == {"error": "unauthorized"}


def test_bad_requests_get_json_rpc_errors_and_tool_errors(stack: Stack, endpoint: LocalMcpEndpoint) -> None:
    token = connect(stack, stack.new_user())
    protocol = {"mcp-protocol-version": "2025-06-18"}

    malformed = post(endpoint.url, "{not json", token, **protocol)
    assert malformed.json()["error"]["code"] == -32700
    not_rpc = post(endpoint.url, {"hello": "world"}, token, **protocol)
    assert "error" in not_rpc.json() and not_rpc.status_code == 400

    unknown = call(endpoint.url, token, "launch_rockets", {})
    assert unknown.is_error and "Unknown tool" in text(unknown)
    invalid = call(endpoint.url, token, "add_task", {"title": ""})
    assert invalid.is_error and "Invalid arguments for add_task" in text(invalid)


def test_a_body_over_one_megabyte_gets_413_and_get_gets_405(stack: Stack, endpoint: LocalMcpEndpoint) -> None:
    token = connect(stack, stack.new_user())
    huge = {**INITIALIZE, "params": {**INITIALIZE["params"], "padding": "x" * 1_100_000}}
    assert post(endpoint.url, huge, token).status_code == 413
    got = requests.get(endpoint.url, headers={"authorization": f"Bearer {token}"}, timeout=10)
    assert got.status_code == 405 and got.headers["allow"] == "POST"


def test_a_token_past_its_requests_per_minute_gets_429(stack: Stack, endpoint: LocalMcpEndpoint) -> None:
    token = connect(stack, stack.new_user())
    stack.emulation.config.env["MCP_REQUESTS_PER_MINUTE"] = "3"
    if time.time() % 60 > 55:  # the counter is per clock minute: start the four requests in one
        time.sleep(61 - time.time() % 60)
    answers = [post(endpoint.url, INITIALIZE, token) for _ in range(4)]
    assert [a.status_code for a in answers] == [200, 200, 200, 429]
    assert 1 <= int(answers[-1].headers["retry-after"]) <= 60


@pytest.mark.parametrize(
    ("function", "when"),
    [
        ("LoadContextFunction", "after"),
        ("RequestApprovalFunction", "after"),
        ("RunToolsFunction", "before"),
        ("RunToolsFunction", "after"),
        ("FinishTurnFunction", "after"),
    ],
)
def test_an_outside_call_runs_once_and_is_told_once_whatever_state_dies(
    stack: Stack, endpoint: LocalMcpEndpoint, function: str, when: str
) -> None:
    user = stack.new_user()
    token = connect(stack, user)
    assert not call(endpoint.url, token, "add_task", {"title": "old plan"}).is_error
    task_id = int(stack.tasks(user)[0]["task_id"])
    late = function in ("RunToolsFunction", "FinishTurnFunction")  # die after the tap: RunApprovedTools...
    if not late:
        stack.emulation.crash(function, when)
    assert not call(endpoint.url, token, "delete_task", {"task_id": task_id}).is_error
    buttons = stack.buttons(user)
    if late:
        stack.emulation.crash(function, when)
    assert stack.press(user, buttons, "Approve")["statusCode"] == 200
    stack.emulation.wait_idle(user)
    assert stack.tasks(user) == []
    told = [r for r in stack.replies(user) if "asked to" in r]
    assert len(told) == 1 and "Done." in told[0], stack.replies(user)
    assert len([m for m in stack.telegram.messages(user) if m.get("reply_markup")]) <= 1


def test_a_tokens_table_that_says_no_fails_the_request_and_runs_nothing(
    stack: Stack, endpoint: LocalMcpEndpoint
) -> None:
    user = stack.new_user()
    token = connect(stack, user)
    stack.emulation.throttle("ConnectionsTable", 1, function="McpFunction")
    failed = post(
        endpoint.url,
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "add_task", "arguments": {"title": "lost?"}},
        },
        token,
        **{"mcp-protocol-version": "2025-06-18"},
    )
    assert failed.status_code == 503 and failed.headers["retry-after"] == "1"
    assert stack.tasks(user) == []
    assert not call(endpoint.url, token, "add_task", {"title": "again"}).is_error  # the client's retry
    assert [t["title"] for t in stack.tasks(user)] == ["again"]
