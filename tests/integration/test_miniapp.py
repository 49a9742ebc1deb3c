"""The Mini App's wiring over real HTTP on the emulated stack: the page and its headers through the HTTP API's
routes (the AppFunction reading the page's files), and what chat turns made shown on the page and its actions
through the tools, over DynamoDB, showing in the chat's commands. What the page's API answers (approvals
answered on the page, settings, usage, every request without valid initData refused, malformed actions) is
tested on the in-memory stack (tests/behaviour/test_miniapp.py); the browser's view is in
test_miniapp_browser.py."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from boto3.dynamodb.conditions import Key
from support.miniapp import act, init_data, state
from support.stack import Stack

from stepwise_local.anthropic_server import text, tool_use
from stepwise_local.mcp_http import LocalMcpEndpoint


@pytest.fixture
def app_url(stack: Stack) -> Iterator[str]:
    with LocalMcpEndpoint(stack.emulation) as served:
        yield served.app_url


def audit(stack: Stack, user: int) -> list[dict[str, Any]]:
    table = stack.emulation.table("AuditTable")
    return list(table.query(KeyConditionExpression=Key("user_id").eq(user))["Items"])


def add_by_chat(stack: Stack, user: int, title: str) -> None:
    stack.anthropic.script(tool_use(("add_task", {"title": title})), text(f"Added {title}."))
    assert stack.say(user, f"add {title}")["status"] == "SUCCEEDED"


def test_the_page_is_served_with_a_strict_policy_and_no_cors(stack: Stack, app_url: str) -> None:
    import requests

    page = requests.get(app_url, headers={"Origin": "https://evil.example"}, timeout=30)
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert '<script src="https://telegram.org/js/telegram-web-app.js"></script>' in page.text
    policy = page.headers["content-security-policy"]
    assert "default-src 'none'" in policy and "script-src 'sha256-" in policy and "unsafe" not in policy
    assert "connect-src 'self'" in policy
    assert not any(name.lower().startswith("access-control") for name in page.headers)
    data = init_data(stack.new_user())
    answer = requests.get(
        app_url + "/api/state", headers={"Authorization": f"tma {data}", "Origin": "https://evil.example"}
    )
    assert not any(name.lower().startswith("access-control") for name in answer.headers)
    assert requests.options(app_url + "/api/state", timeout=30).status_code in (404, 405)
    assert requests.post(app_url, timeout=30).status_code == 405


def test_the_page_shows_what_chat_turns_made_and_its_actions_show_in_the_chat(
    stack: Stack, app_url: str
) -> None:
    user = stack.new_user()
    add_by_chat(stack, user, "buy milk")
    add_by_chat(stack, user, "old plan")
    stack.anthropic.script(tool_use(("remember", {"fact": "The user takes coffee black"})), text("Noted."))
    stack.say(user, "remember I take my coffee black")
    data = init_data(user)

    shown = state(app_url, data)
    assert shown.status_code == 200, shown.text
    body = shown.json()
    assert [t["title"] for t in body["tasks"]] == ["buy milk", "old plan"]
    (memory,) = body["memories"]
    assert memory["text"] == "The user takes coffee black"
    assert body["settings"]["timezone_set"] is False and body["approvals"] == []
    assert len(body["usage"]["days"]) == 30

    done = act(app_url, data, "task_done", 1, "tap-done-0001")
    assert done.status_code == 200 and done.json() == {"done": "Completed task #1: buy milk"}
    deleted = act(app_url, data, "task_delete", 2, "tap-delete-0001")
    assert deleted.status_code == 200 and deleted.json() == {"done": "Deleted task #2: old plan"}
    again = act(app_url, data, "task_delete", 2, "tap-delete-0002")  # a second tap: nothing more
    assert again.status_code == 404 and "no task #2" in again.json()["error"]
    forgot = act(app_url, data, "memory_forget", memory["id"], "tap-forget-0001")
    assert forgot.status_code == 200, forgot.text

    stack.say(user, "/tasks")
    assert "old plan" not in stack.replies(user)[-1] and "buy milk" in stack.replies(user)[-1]
    stack.say(user, "/memory")
    assert "coffee" not in stack.replies(user)[-1]
    assert not any("Approval needed" in reply for reply in stack.replies(user)), "no second prompt"
    from_page = [e for e in audit(stack, user) if e["turn_id"] == "app"]
    assert sorted((e["tool"], e["outcome"], e["approval"]) for e in from_page) == [
        ("complete_task", "ok", "not_needed"),
        ("delete_task", "error", "approved"),
        ("delete_task", "ok", "approved"),
        ("forget", "ok", "approved"),
    ]
    assert all(e["tool_use_id"].startswith(f"app:{user}:tap-") for e in from_page)


def test_the_page_is_small() -> None:
    """The page's own files, as served (docs/app.md says their size): under 24 KB (20.1 KB since issue 39 gave
    the usage chart its axes and each tap its result beside it)."""
    from support.tools import ROOT

    size = sum(path.stat().st_size for path in (ROOT / "functions" / "app" / "page").iterdir())
    assert size < 24_000, f"the page is {size} bytes"
