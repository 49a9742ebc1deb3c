"""Stepwise as a remote MCP server through the emulated HTTP API's /mcp route: the official SDK's client over
real HTTP with a token from /connect in the chat (both protocol eras), the McpFunction and DynamoDB behind
it; an outside call that waits for the tap running once and told once whatever state of its turn dies; the
tokens' table throttled. What the endpoint answers (a token acting as its user only, approvals, refusals,
JSON-RPC errors, limits) is tested on the in-memory stack (tests/behaviour/test_mcp_endpoint.py)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from boto3.dynamodb.conditions import Key
from mcp import Client
from mcp.types import CallToolResult
from support.mcp_client import call, connect, post, text, with_client
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
