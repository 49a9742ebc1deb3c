"""Stepwise as a remote MCP server on the in-memory stack (support.memory_stack, support.memory_api): the
official SDK's client against the McpFunction's core (`stepwise.mcp.endpoint.serve`), with tokens made by
/connect in the chat. Calls act for the token's user only; a destructive call waits for the tap in Telegram
and runs once; bad tokens, bodies and methods get plain HTTP refusals; the rest is JSON-RPC. The emulated
stack keeps the wiring (the SDK's client over real HTTP to the /mcp route, both protocol eras), every state of
an outside call's turn crashing, and the tokens' table throttled (tests/integration/test_mcp_endpoint.py)."""

from __future__ import annotations

import json

import pytest
from mcp import Client
from mcp.types import CallToolResult
from support.mcp_client import INITIALIZE, text
from support.memory_api import call, connect, post, with_client
from support.memory_stack import MemoryStack


@pytest.mark.parametrize("mode", ["legacy", "auto"])
def test_an_mcp_client_uses_the_users_tools_with_a_token_from_connect(stack: MemoryStack, mode: str) -> None:
    user = stack.new_user()
    token = connect(stack, user)
    assert stack.settings.mcp_url in stack.replies(user)[-1]

    async def session(client: Client) -> tuple[list[str], CallToolResult, CallToolResult]:
        listed = await client.list_tools()
        added = await client.call_tool("add_task", {"title": "buy milk"})
        tasks = await client.call_tool("list_tasks", {"status": "pending"})
        return [tool.name for tool in listed.tools], added, tasks

    names, added, tasks = with_client(stack, token, session, mode)
    assert {"add_task", "list_tasks", "delete_task", "set_timezone"} <= set(names)
    assert not added.is_error and "buy milk" in text(added)
    assert tasks.structured_content is not None
    assert [t["title"] for t in tasks.structured_content["tasks"]] == ["buy milk"]
    assert [t["title"] for t in stack.tasks(user)] == ["buy milk"]
    assert {e["tool"] for e in stack.audited(user)} == {"add_task", "list_tasks"}


def test_the_token_is_shown_once_and_never_kept_in_the_history(stack: MemoryStack) -> None:
    user = stack.new_user()
    token = connect(stack, user)
    stored = " ".join(str(item.get("content", "")) for item in stack.stored(user))
    assert token not in stored and "shown here once" in stored
    items = [c.model_dump(mode="json") for c in stack.connections.list(user)]
    assert items and token not in json.dumps(items)  # only its hash is stored

    stack.say(user, "/connect")
    assert "laptop" in stack.replies(user)[-1] and token not in stack.replies(user)[-1]
    stack.say(user, "/connect laptop")
    assert "already" in stack.replies(user)[-1]


def test_a_token_acts_as_its_user_only_whatever_the_arguments(stack: MemoryStack) -> None:
    owner, other = stack.new_user(), stack.new_user()
    owner_token, other_token = connect(stack, owner), connect(stack, other)
    assert not call(stack, owner_token, "add_task", {"title": "owner's secret"}).is_error
    task_id = int(stack.tasks(owner)[0]["task_id"])

    seen = call(stack, other_token, "get_task", {"task_id": task_id})
    assert seen.is_error and "secret" not in text(seen)
    forged = call(stack, other_token, "get_task", {"task_id": task_id, "user_id": owner})
    assert forged.is_error and "user_id" in text(forged)  # no argument names a user
    listed = call(stack, other_token, "list_tasks", {"status": "all"})
    assert "secret" not in text(listed)
    assert [t["title"] for t in stack.tasks(owner)] == ["owner's secret"]


@pytest.mark.parametrize(
    ("label", "deleted", "said"), [("Approve", True, "Done."), ("Deny", False, "Not done.")]
)
def test_a_destructive_call_from_outside_waits_for_the_tap_in_telegram(
    stack: MemoryStack, label: str, deleted: bool, said: str
) -> None:
    user = stack.new_user()
    token = connect(stack, user)
    assert not call(stack, token, "add_task", {"title": "old plan"}).is_error
    task_id = int(stack.tasks(user)[0]["task_id"])

    asked = call(stack, token, "delete_task", {"task_id": task_id})
    assert not asked.is_error and "Approval requested in Telegram" in text(asked)
    assert len(stack.tasks(user)) == 1  # nothing yet
    buttons = stack.buttons(user)
    assert stack.telegram.text_of(buttons).splitlines()[:2] == [
        "🔐 Approval needed",
        f"Your MCP client “laptop” asks to delete task #{task_id} “old plan”.",
    ], "the request names the client before the tap"
    assert stack.press(user, buttons, label)["statusCode"] == 200
    stack.wait_idle(user)

    assert (stack.tasks(user) == []) is deleted
    reply = stack.replies(user)[-1]
    assert reply.startswith(f"Your MCP client “laptop” asked to delete task #{task_id} “old plan”. {said}"), (
        reply
    )
    runs = [e for e in stack.audited(user) if e["tool"] == "delete_task"]
    assert sorted(e["approval"] for e in runs) == sorted(["requested", "approved" if deleted else "denied"])
    # the chat's history tells the model later what happened
    stored = [str(item.get("content", "")) for item in stack.stored(user)]
    assert any("laptop" in s and "delete_task" in s for s in stored)


def test_a_check_in_from_outside_waits_for_the_tap_and_reminders_name_the_client(stack: MemoryStack) -> None:
    user = stack.new_user()
    token = connect(stack, user)
    checkin = {"text": "summarize my inbox", "checkin": True, "repeat": {"days": [], "time": "07:30"}}
    asked = call(stack, token, "set_reminder", checkin)
    assert not asked.is_error and "Approval requested in Telegram" in text(asked)
    buttons = stack.buttons(user)
    assert stack.telegram.text_of(buttons).splitlines()[:2] == [
        "🔐 Approval needed",
        "Your MCP client “laptop” asks to set a check-in every day at 07:30 (UTC): “summarize my inbox”.",
    ]
    listed = call(stack, token, "list_reminders", {})
    assert text(listed) == "No reminders.", "nothing is set before the tap"
    # a plain reminder is no check-in: it is set at once
    plain = call(stack, token, "set_reminder", {"text": "stand up", "in_minutes": 30})
    assert text(plain).startswith("Reminder #1 set on ")
    stack.press(user, buttons, "Approve")
    stack.wait_idle(user)
    assert stack.replies(user)[-1].startswith(
        "Your MCP client “laptop” asked to set a check-in every day at 07:30 (UTC): “summarize my inbox”. "
        "Done."
    )
    lines = text(call(stack, token, "list_reminders", {})).splitlines()[1:]
    assert [line.split(": ", 1)[1] for line in lines] == [
        "stand up [set by your MCP client “laptop”]",
        "summarize my inbox [set by your MCP client “laptop”]",
    ]


def test_revoked_wrong_and_missing_tokens_get_401_with_www_authenticate(stack: MemoryStack) -> None:
    user = stack.new_user()
    token = connect(stack, user, "phone")
    assert post(stack, INITIALIZE, token).status_code == 200

    missing = post(stack, INITIALIZE, None)
    assert missing.status_code == 401 and missing.headers["www-authenticate"] == 'Bearer realm="stepwise"'
    wrong = post(stack, INITIALIZE, token[:-2] + "xx")
    assert wrong.status_code == 401 and 'error="invalid_token"' in wrong.headers["www-authenticate"]
    assert wrong.json() == {"error": "unauthorized"}

    stack.say(user, "/connect revoke phone")
    assert "Revoked" in stack.replies(user)[-1]
    revoked = post(stack, INITIALIZE, token)
    assert revoked.status_code == 401 and revoked.json() == {"error": "unauthorized"}


def test_bad_requests_get_json_rpc_errors_and_tool_errors(stack: MemoryStack) -> None:
    token = connect(stack, stack.new_user())
    protocol = {"mcp-protocol-version": "2025-06-18"}

    malformed = post(stack, "{not json", token, **protocol)
    assert malformed.json()["error"]["code"] == -32700
    not_rpc = post(stack, {"hello": "world"}, token, **protocol)
    assert "error" in not_rpc.json() and not_rpc.status_code == 400

    unknown = call(stack, token, "launch_rockets", {})
    assert unknown.is_error and "Unknown tool" in text(unknown)
    invalid = call(stack, token, "add_task", {"title": ""})
    assert invalid.is_error and "Invalid arguments for add_task" in text(invalid)


def test_a_body_over_one_megabyte_gets_413_and_get_gets_405(stack: MemoryStack) -> None:
    token = connect(stack, stack.new_user())
    huge = {**INITIALIZE, "params": {**INITIALIZE["params"], "padding": "x" * 1_100_000}}
    assert post(stack, huge, token).status_code == 413
    got = post(stack, "", token, method="GET")
    assert got.status_code == 405 and got.headers["allow"] == "POST"


def test_a_token_past_its_requests_per_minute_gets_429() -> None:
    stack = MemoryStack(env={"MCP_REQUESTS_PER_MINUTE": "3"})
    token = connect(stack, stack.new_user())
    # the counter is per clock minute: start the four requests a second into one
    stack.advance_clock(61 - stack.now().timestamp() % 60)
    answers = [post(stack, INITIALIZE, token) for _ in range(4)]
    assert [a.status_code for a in answers] == [200, 200, 200, 429]
    assert 1 <= int(answers[-1].headers["retry-after"]) <= 60
