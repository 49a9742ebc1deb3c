"""The Mini App's page and API on the in-memory stack (support.memory_stack, support.memory_api: the
AppFunction's core, `stepwise.miniapp.endpoint.serve`, over the stack's stores): what chat turns made shows
on the page, the page's actions go through the tools and show in the chat's commands, an approval answered on
the page resumes its turn once, and every request without Telegram's signature, with a forged or stale one,
or of someone else, gets 401/403 and nothing. The emulated stack keeps the wiring over real HTTP (the page
and its headers through the HTTP API's routes; the state and actions over DynamoDB, tests/integration/
test_miniapp.py), and the browser's view (test_miniapp_browser.py)."""

from __future__ import annotations

import json
import time

import pytest
from support.memory_api import act, app, init_data, state
from support.memory_stack import NOT_ALLOWED_USER, MemoryStack

from stepwise_local import updates
from stepwise_local.anthropic_server import text, tool_use


def add_by_chat(stack: MemoryStack, user: int, title: str) -> None:
    stack.anthropic.script(tool_use(("add_task", {"title": title})), text(f"Added {title}."))
    assert stack.say(user, f"add {title}")["status"] == "SUCCEEDED"


def test_the_page_is_served_with_a_strict_policy_and_no_cors(stack: MemoryStack) -> None:
    page = app(stack, "GET", "/app", {"Origin": "https://evil.example"})
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert '<script src="https://telegram.org/js/telegram-web-app.js"></script>' in page.text
    policy = page.headers["content-security-policy"]
    assert "default-src 'none'" in policy and "script-src 'sha256-" in policy and "unsafe" not in policy
    assert "connect-src 'self'" in policy
    assert not any(name.lower().startswith("access-control") for name in page.headers)
    data = init_data(stack.new_user())
    answer = app(
        stack, "GET", "/app/api/state", {"Authorization": f"tma {data}", "Origin": "https://evil.example"}
    )
    assert not any(name.lower().startswith("access-control") for name in answer.headers)
    assert app(stack, "OPTIONS", "/app/api/state").status_code in (404, 405)
    assert app(stack, "POST", "/app").status_code == 405


def test_the_page_shows_what_chat_turns_made_and_its_actions_show_in_the_chat(stack: MemoryStack) -> None:
    user = stack.new_user()
    add_by_chat(stack, user, "buy milk")
    add_by_chat(stack, user, "old plan")
    stack.anthropic.script(tool_use(("remember", {"fact": "The user takes coffee black"})), text("Noted."))
    stack.say(user, "remember I take my coffee black")
    data = init_data(user)

    shown = state(stack, data)
    assert shown.status_code == 200, shown.text
    body = shown.json()
    assert [t["title"] for t in body["tasks"]] == ["buy milk", "old plan"]
    (memory,) = body["memories"]
    assert memory["text"] == "The user takes coffee black"
    assert body["settings"]["timezone_set"] is False and body["approvals"] == []
    assert len(body["usage"]["days"]) == 30

    done = act(stack, data, "task_done", 1, "tap-done-0001")
    assert done.status_code == 200 and done.json() == {"done": "Completed task #1: buy milk"}
    deleted = act(stack, data, "task_delete", 2, "tap-delete-0001")
    assert deleted.status_code == 200 and deleted.json() == {"done": "Deleted task #2: old plan"}
    again = act(stack, data, "task_delete", 2, "tap-delete-0002")  # a second tap: nothing more
    assert again.status_code == 404 and "no task #2" in again.json()["error"]
    forgot = act(stack, data, "memory_forget", memory["id"], "tap-forget-0001")
    assert forgot.status_code == 200, forgot.text

    stack.say(user, "/tasks")
    assert "old plan" not in stack.replies(user)[-1] and "buy milk" in stack.replies(user)[-1]
    stack.say(user, "/memory")
    assert "coffee" not in stack.replies(user)[-1]
    assert not any("Approval needed" in reply for reply in stack.replies(user)), "no second prompt"
    from_page = [e for e in stack.audited(user) if e["turn_id"] == "app"]
    assert sorted((e["tool"], e["outcome"], e["approval"]) for e in from_page) == [
        ("complete_task", "ok", "not_needed"),
        ("delete_task", "error", "approved"),
        ("delete_task", "ok", "approved"),
        ("forget", "ok", "approved"),
    ]
    assert all(e["tool_use_id"].startswith(f"app:{user}:tap-") for e in from_page)


def test_a_retried_tap_runs_its_tool_once(stack: MemoryStack) -> None:
    user = stack.new_user()
    add_by_chat(stack, user, "walk the dog")
    data = init_data(user)
    first = act(stack, data, "task_delete", 1, "same-tap-000001")
    retried = act(stack, data, "task_delete", 1, "same-tap-000001")
    assert first.json() == retried.json() == {"done": "Deleted task #1: walk the dog"}
    assert stack.tasks(user) == []


def test_an_approval_answered_on_the_page_resumes_its_turn_once(stack: MemoryStack) -> None:
    user = stack.new_user()
    add_by_chat(stack, user, "old plan")
    stack.anthropic.script(tool_use(("delete_task", {"task_id": 1})), text("Deleted it."))
    stack.send(user, "delete the old plan")
    buttons = stack.buttons(user)
    data = init_data(user)

    (approval,) = state(stack, data).json()["approvals"]
    assert approval["asks"] == "The assistant in your private chat asks to delete task #1 “old plan”."
    other = act(stack, init_data(stack.new_user()), "approve", approval["approval_id"], "tap-other-001")
    assert other.status_code == 404 and stack.tasks(user) != [], "another user cannot answer it"

    approved = act(stack, data, "approve", approval["approval_id"], "tap-approve-01")
    assert approved.status_code == 200 and approved.json() == {"done": "Approved ✅"}
    stack.wait_idle(user)
    assert stack.tasks(user) == []
    assert stack.replies(user)[-1] == "Deleted it."
    prompt = next(m for m in stack.telegram.messages(user) if m["message_id"] == buttons["message_id"])
    assert "✅ Approved" in stack.telegram.text_of(prompt) and not prompt.get("reply_markup")

    twice = act(stack, data, "approve", approval["approval_id"], "tap-approve-02")
    assert twice.status_code == 409 and "Already decided" in twice.json()["error"]
    stack.press(user, buttons, "Deny")  # the chat's old button changes nothing now
    stack.wait_idle(user)
    runs = [e for e in stack.audited(user) if e["tool"] == "delete_task" and e["outcome"] == "ok"]
    assert len(runs) == 1 and state(stack, data).json()["approvals"] == []


def test_a_groups_pending_approval_on_a_members_page_names_the_group(stack: MemoryStack) -> None:
    ana, group = stack.new_user(), -1_009_100_000_001
    stack.anthropic.script(tool_use(("add_task", {"title": "bread"})), text("Added."))
    stack.anthropic.script(tool_use(("delete_task", {"task_id": 1})), text("Deleted the bread."))
    for words in ("@stepwise_bot add bread", "@stepwise_bot delete the bread task"):
        update = updates.group_message(ana, words, chat_id=group, first_name="Ana")
        update["message"]["chat"]["title"] = "Family 🏡"
        stack.deliver(update)  # one turn each, not a folded burst
    stack.buttons(group)  # the request is shown in the group
    data = init_data(ana)
    (approval,) = state(stack, data).json()["approvals"]
    assert approval["asks"] == "The assistant in the group “Family 🏡” asks to delete task #1 “bread”."
    assert approval["group"] == "Family 🏡"
    approved = act(stack, data, "approve", approval["approval_id"], "tap-group-0001")
    assert approved.status_code == 200, approved.text
    stack.wait_idle(group)
    assert stack.tasks(group) == [] and stack.replies(group)[-1] == "Deleted the bread."


def test_settings_and_revoke_from_the_page(stack: MemoryStack) -> None:
    user = stack.new_user()
    data = init_data(user)
    zone = act(stack, data, "set_timezone", "Europe/Lisbon", "tap-zone-00001")
    assert zone.status_code == 200 and zone.json()["done"].startswith("Time zone set to Europe/Lisbon")
    bad = act(stack, data, "set_timezone", "Mars/Olympus", "tap-zone-00002")
    assert bad.status_code == 400 and bad.json() == {
        "error": "'Mars/Olympus' is not a time zone I know; use an IANA name such as Europe/Lisbon."
    }
    settings = state(stack, data).json()["settings"]
    assert settings["timezone"] == "Europe/Lisbon" and settings["timezone_set"] is True
    stack.say(user, "/timezone")
    assert "Europe/Lisbon" in stack.replies(user)[-1]

    stack.say(user, "/connect laptop")
    assert [c["name"] for c in state(stack, data).json()["connections"]] == ["laptop"]
    assert act(stack, data, "connection_revoke", "laptop", "tap-revoke-001").status_code == 200
    assert act(stack, data, "connection_revoke", "laptop", "tap-revoke-002").status_code == 404
    assert state(stack, data).json()["connections"] == []


def test_the_usage_chart_and_its_totals_match_usage(stack: MemoryStack) -> None:
    user = stack.new_user()
    stack.anthropic.script(text("Hello!"))
    stack.say(user, "hi")
    stack.say(user, "/usage")
    report = stack.replies(user)[-1]
    usage = state(stack, init_data(user)).json()["usage"]
    days = usage["days"]
    assert sum(d["tokens"] for d in days) == usage["last_30_days"]["tokens"] > 0
    assert usage["today"]["tokens"] == days[-1]["tokens"]
    assert f"today: {usage['today']['tokens']:,} tokens" in report
    assert f"this month: {usage['this_month']['tokens']:,} tokens" in report


@pytest.mark.parametrize(
    ("label", "status"),
    [
        ("no initData", 401),
        ("a forged hash", 401),
        ("a non-ASCII hash", 401),
        ("a non-ASCII hash, percent-encoded", 401),
        ("a hash of 64 characters that are not hex", 401),
        ("a hash of the wrong length", 401),
        ("signed with another bot's token", 401),
        ("stale: over an hour old", 401),
        ("from the future", 401),
        ("a user that is not JSON", 401),
        ("not URL-encoded", 401),
        ("huge", 401),
        ("another scheme", 401),
        ("a user off the allowlist", 403),
    ],
)
def test_requests_without_valid_initData_get_nothing(stack: MemoryStack, label: str, status: int) -> None:
    owner = stack.new_user()
    add_by_chat(stack, owner, "owner's secret")
    good = init_data(owner)
    now = int(time.time())
    data: str | None = {
        "no initData": None,
        "a forged hash": good[: good.index("hash=") + 5] + "0" * 64,
        "a non-ASCII hash": good[: good.index("hash=") + 5] + "é" * 64,
        "a non-ASCII hash, percent-encoded": good[: good.index("hash=") + 5] + "%C3%A9" * 64,
        "a hash of 64 characters that are not hex": good[: good.index("hash=") + 5] + "z" * 64,
        "a hash of the wrong length": good + "00",
        "signed with another bot's token": init_data(owner, bot_token="654321:other"),
        "stale: over an hour old": init_data(owner, auth_date=now - 3700),
        "from the future": init_data(owner, auth_date=now + 3600),
        "a user that is not JSON": _signed({"user": "{id: 1", "auth_date": str(now)}),
        "not URL-encoded": "user=%ZZ&auth_date=1&hash=" + "0" * 64,
        "huge": good + "&pad=" + "x" * 5000,
        "another scheme": None,
        "a user off the allowlist": init_data(NOT_ALLOWED_USER),
    }[label]
    headers = {"Authorization": f"Bearer {good}"} if label == "another scheme" else None
    answers = [
        app(stack, "GET", "/app/api/state", headers) if headers else state(stack, data),
        app(
            stack,
            "POST",
            "/app/api/action",
            headers or ({"Authorization": f"tma {data}"} if data else {}),
            {"action": "task_delete", "target": 1, "request_id": "tap-replay-001"},
        ),
    ]
    for answer in answers:
        assert answer.status_code == status, (label, answer.text)
        assert "secret" not in answer.text and "owner" not in answer.text
        assert json.loads(answer.text) == {"error": "unauthorized" if status == 401 else "forbidden"}
    if status == 401:
        assert answers[0].headers["www-authenticate"].startswith('tma realm="stepwise"')
    assert [t["title"] for t in stack.tasks(owner)] == ["owner's secret"]


def _signed(fields: dict[str, str]) -> str:
    from urllib.parse import urlencode

    from support.memory_stack import BOT_TOKEN

    from stepwise.miniapp.init_data import sign

    return urlencode({**fields, "hash": sign(fields, BOT_TOKEN)})


@pytest.mark.parametrize(
    ("body", "status"),
    [
        ("not json", 400),
        ('{"action": "task_delete", "target": 1}', 400),  # no request id
        ('{"action": "explode", "target": 1, "request_id": "tap-bad-0001"}', 400),
        ('{"action": "task_delete", "target": "one", "request_id": "tap-bad-0002"}', 400),
        ('{"action": "task_delete", "target": 999, "request_id": "tap-bad-0003"}', 404),
        ('{"action": "approve", "target": "no-such", "request_id": "tap-bad-0004"}', 404),
        ('{"action": "set_voice_replies", "target": "yes", "request_id": "tap-bad-0005"}', 400),
    ],
)
def test_malformed_actions_get_a_clear_4xx_and_change_nothing(
    stack: MemoryStack, body: str, status: int
) -> None:
    user = stack.new_user()
    add_by_chat(stack, user, "keep me")
    answer = app(
        stack,
        "POST",
        "/app/api/action",
        {"Authorization": f"tma {init_data(user)}", "Content-Type": "application/json"},
        body,
    )
    assert answer.status_code == status, answer.text
    assert answer.json()["error"]
    assert [t["title"] for t in stack.tasks(user)] == ["keep me"]


def test_another_users_ids_are_not_found(stack: MemoryStack) -> None:
    owner, other = stack.new_user(), stack.new_user()
    add_by_chat(stack, owner, "owner's task")
    answer = act(stack, init_data(other), "task_delete", 1, "tap-other-0001")
    assert answer.status_code == 404 and "owner" not in answer.text
    assert state(stack, init_data(other)).json()["tasks"] == []
    assert [t["title"] for t in stack.tasks(owner)] == ["owner's task"]


def test_the_app_command_answers_with_a_web_app_button(stack: MemoryStack) -> None:
    user = stack.new_user()
    stack.say(user, "/app")
    message = stack.telegram.messages(user)[-1]
    (row,) = message["reply_markup"]["inline_keyboard"]
    assert row == [{"text": "Open Stepwise", "web_app": {"url": stack.settings.app_url}}]
    assert "tap the button below" in stack.telegram.text_of(message)
