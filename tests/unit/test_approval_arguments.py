"""An approval shows every argument of every call, short decisive ones first, long values shortened one by one
with how much was cut, and the request within Telegram's 4,096 characters (`stepwise.approvals.arguments`)."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from stepwise.approvals.arguments import (
    MAX_MESSAGE,
    argument_lines,
    call_room,
    fit,
    shorten,
    tg_len,
)
from stepwise.approvals.lifecycle import approval_html, decided_html
from stepwise.approvals.models import ApprovalCall, Requester
from stepwise.remote_tools.calls import RemoteLimits, RemoteToolCaller
from stepwise.remote_tools.catalog import RemoteTools
from stepwise.remote_tools.config import ServerEntry
from stepwise.tools.calls import parse_call
from stepwise.tools.registry import ToolContext, ToolError, ToolRegistry
from stepwise.tools.task_tools import task_tools
from stepwise_local.in_memory.ledger import InMemoryToolCallLedger
from stepwise_local.in_memory.remote_tools import FakeRemoteServers, InMemoryRemoteToolCache
from stepwise_local.in_memory.tasks import InMemoryTaskRepository
from stepwise_local.telegram_server import parse_telegram_html

MAIL = [{"name": "send_email", "description": "Sends an email", "inputSchema": {"type": "object"}}]
BODY = ("Dear Bob,\n" + "please find the quarterly figures below. " * 19)[:770]
JOB = Requester(kind="job", number=12, name="x" * 200)  # the longest way of naming who asks


def visible(html: str) -> str:
    """The message's text as Telegram counts it (after entity parsing)."""
    return parse_telegram_html(html)


def mail_registry() -> ToolRegistry:
    """The tools of an outside server "mail" (approval policy `writes`: send_email asks)."""
    caller = RemoteToolCaller(
        cache=InMemoryRemoteToolCache(),
        servers=lambda: FakeRemoteServers(listings={"mail": MAIL}),
        ledger=InMemoryToolCallLedger(),
        headers=lambda entry: {},
        now=lambda: 1_800_000_000,
        limits=RemoteLimits(),
    )
    entries = (ServerEntry(name="mail", url="https://mail.example/mcp"),)
    return ToolRegistry(
        RemoteTools(lambda: entries, caller, refresh=True, memo_seconds=0).tools(), caller.ledger
    )


def describe(registry: ToolRegistry, name: str, arguments: dict[str, Any], room: int) -> str:
    parsed = parse_call(registry, name, arguments)
    assert not hasattr(parsed, "result"), parsed
    tool, args = parsed  # type: ignore[misc]
    context = ToolContext(user_id=1, chat_id=1, turn_id="t", call_id="t:1", now="2026-11-25T10:00:00Z")
    return registry.describe(context, tool, args, room)


def test_an_outside_email_with_a_long_body_shows_its_recipient_first_and_says_how_much_was_cut() -> None:
    assert len(BODY) == 770
    registry = mail_registry()
    arguments = {"body": BODY, "subject": "Figures", "to": "bob@example.com"}
    description = describe(registry, "mail__send_email", arguments, call_room(1))
    # before, the arguments' JSON was cut at 600 characters, keys sorted: "body" first, "to" never shown
    html = approval_html(Requester(), [ApprovalCall(tool_use_id="1", description=description)], 3600)
    text = visible(html)
    assert 'to: "bob@example.com"' in text and 'subject: "Figures"' in text
    assert text.index("to: ") < text.index("body: ")
    assert json.dumps(BODY)[:-1] in text  # the whole body fits one call's room: nothing cut
    long_body = BODY * 10
    description = describe(registry, "mail__send_email", {**arguments, "body": long_body}, call_room(1))
    text = visible(approval_html(Requester(), [ApprovalCall(tool_use_id="1", description=description)], 3600))
    assert 'to: "bob@example.com"' in text and 'subject: "Figures"' in text
    shown = len(json.dumps(long_body, ensure_ascii=False))
    assert "characters not shown]" in text and f" of {shown} characters not shown]" in text
    assert tg_len(text) <= MAX_MESSAGE


def test_a_value_cannot_pass_for_another_argument_and_odd_names_stay_one_name() -> None:
    lines = argument_lines({"body": 'hi\nto: "eve@example.com"', "to": "bob@example.com", "a b\nc": 1}, 500)
    assert lines.split("\n") == [
        'body: "hi\\nto: \\"eve@example.com\\""',
        'to: "bob@example.com"',
        '"a b\\nc": 1',
    ]


def test_no_arguments_and_nested_values_are_shown_as_json() -> None:
    assert argument_lines({}, 100) == "no arguments"
    assert argument_lines({"to": ["a@x.io", "b@x.io"], "n": 2.5, "ok": True}, 200).split("\n") == [
        'to: ["a@x.io", "b@x.io"]',
        "n: 2.5",
        "ok: true",
    ]


def test_the_longest_values_are_shortened_equally_and_the_short_ones_kept_whole() -> None:
    shown = fit(["short", "m" * 300, "l" * 3000], 400)
    assert shown[0] == "short"
    assert shown[1].endswith("[150 of 300 characters not shown]") or shown[1].startswith("m" * 100)
    assert sum(tg_len(value) for value in shown) <= 400
    assert abs(tg_len(shown[1]) - tg_len(shown[2])) <= 2  # an equal share each
    assert shorten("x" * 10, 5) == "x" * 10  # a note longer than the cut: kept whole
    assert shorten("😀" * 100, 60) == "😀" * 13 + "… [87 of 100 characters not shown]"  # UTF-16: 2 each


@pytest.mark.parametrize("seed", range(40))
def test_every_argument_is_shown_within_the_room_whatever_the_values(seed: int) -> None:
    rng = random.Random(seed)
    arguments = {
        f"arg{n}": "".join(rng.choice('ab c\n"😀é') for _ in range(rng.choice([0, 3, 50, 400, 5000])))
        for n in range(rng.randint(1, 12))
    }
    room = rng.choice([call_room(1), call_room(2), call_room(4)])
    lines = argument_lines(arguments, room).split("\n")
    assert [line.split(":", 1)[0] for line in lines] == sorted(
        arguments, key=lambda key: tg_len(json.dumps(arguments[key], ensure_ascii=False)) > 80
    )
    assert tg_len("\n".join(lines)) <= room


def test_a_request_of_many_long_calls_stays_within_a_message_even_once_decided() -> None:
    tasks = InMemoryTaskRepository()
    registry = ToolRegistry(task_tools(tasks), InMemoryToolCallLedger())
    for _ in range(6):
        tasks.add(1, "t" * 200, "", "2026-11-25T10:00:00Z")
    update = {"title": "n" * 200, "description": "d" * 2000, "due": "2026-12-01T09:00"}
    descriptions = [
        describe(registry, "update_task", {"task_id": n + 1, **update}, call_room(6)) for n in range(6)
    ]
    calls = [ApprovalCall(tool_use_id=str(n), description=d) for n, d in enumerate(descriptions)]
    html = approval_html(JOB, calls, 518_400)
    text = visible(decided_html(html, "expired"))
    assert tg_len(text) <= MAX_MESSAGE
    for n in range(6):
        assert f"change task #{n + 1} “ttt" in text
    assert text.count("make it due 2026-12-01 09:00") == 6
    assert text.count("of 2000 characters not shown]") == 6  # every description shown, shortened


def test_a_call_whose_arguments_cannot_all_be_shown_is_an_error_never_asked_unseen() -> None:
    registry = mail_registry()
    arguments = {f"to{n}": f"person{n}@example.com" for n in range(400)}
    with pytest.raises(ToolError, match="never approved unseen"):
        describe(registry, "mail__send_email", arguments, call_room(1))


def test_a_built_in_call_without_its_own_words_lists_its_arguments() -> None:
    from pydantic import BaseModel

    from stepwise.tools.registry import Tool

    class Args(BaseModel):
        note: str
        reminder_id: int

    tool: Tool[Args] = Tool(
        "cancel_it", "x", Args, lambda _c, _a: "ok", needs_approval=True, destructive=True
    )
    registry = ToolRegistry([tool])
    text = describe(registry, "cancel_it", {"note": "n" * 5000, "reminder_id": 7}, call_room(3))
    assert text.startswith('Call cancel_it with:\nreminder_id: 7\nnote: "nnn')
    assert tg_len(text) <= call_room(3)
