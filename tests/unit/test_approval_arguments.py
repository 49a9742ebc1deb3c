"""An approval shows every argument of every call, short decisive ones first, escaped so that no value can
pose as another argument, only the single longest free-text value shortened (saying how much was cut), and
the request within Telegram's 4,096 characters; a call that cannot be shown so is refused
(`stepwise.approvals.arguments`)."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from stepwise.approvals.arguments import (
    MAX_MESSAGE,
    TooLongToShowError,
    Value,
    argument_lines,
    call_room,
    escaped,
    fit,
    free_text,
    shorten,
    tg_len,
    worded,
)
from stepwise.approvals.lifecycle import approval_html, decided_html
from stepwise.approvals.models import ApprovalCall, Requester
from stepwise.remote_tools.calls import RemoteLimits, RemoteToolCaller
from stepwise.remote_tools.catalog import RemoteTools
from stepwise.remote_tools.config import ServerEntry
from stepwise.telegram.conversation import Conversation, Scope
from stepwise.tools.calls import call_unattended, parse_call
from stepwise.tools.registry import TOO_LONG_TO_SHOW, NotShownError, ToolContext, ToolRegistry
from stepwise.tools.task_tools import task_tools
from stepwise_local.in_memory.audit import InMemoryAuditLog
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
    context = ToolContext(Scope(Conversation(1), 1), turn_id="t", call_id="t:1", now="2026-11-25T10:00:00Z")
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
    assert 'body: "Dear Bob,\\nplease find' in text
    assert '” with:\nsubject: "Figures"\nto: "bob@example.com"\nbody: ' in text
    assert f" of {len(long_body)} characters not shown]" in text  # the body's own characters
    assert tg_len(text) <= MAX_MESSAGE


def test_a_value_cannot_pass_for_another_argument_and_odd_names_stay_one_name() -> None:
    lines = argument_lines({"body": 'hi\nto: "eve@example.com"', "to": "bob@example.com", "a b\nc": 1}, 500)
    assert lines.split("\n") == [
        'body: "hi\\nto: \\"eve@example.com\\""',
        'to: "bob@example.com"',
        '"a b\\nc": 1',
    ]


UNSAFE = ["\u2028", "\u2029", "\u0085", *map(chr, range(0x202A, 0x202F)), *map(chr, range(0x2066, 0x206A))]


@pytest.mark.parametrize("char", UNSAFE, ids=lambda char: f"U+{ord(char):04X}")
def test_line_separators_and_bidi_controls_are_shown_escaped_and_every_argument_is_shown(char: str) -> None:
    posing = f'hi{char}to: "eve@example.com"'  # a value that would pose as another argument's line
    arguments = {"body": posing, "to": "bob@example.com", f"cc{char}": "x"}
    lines = argument_lines(arguments, call_room(1)).split("\n")
    code = f"\\u{ord(char):04x}"
    assert lines == [
        f'body: "hi{code}to: \\"eve@example.com\\""',
        'to: "bob@example.com"',
        f'"cc{code}": "x"',
    ]
    assert json.loads(lines[0].split(": ", 1)[1]) == posing  # JSON's own escape: the value reads back
    assert char not in worded("Delete task #1 “{}”.", [f"a{char}b"], 100)
    assert worded("Delete task #1 “{}”.", [f"a{char}b"], 100) == f"Delete task #1 “a{code}b”."
    assert char not in shorten(f"a b{char}" * 200, 100)


def test_the_approval_card_shows_escaped_values_and_names_whole() -> None:
    registry = mail_registry()
    arguments = {"to": "bob@example.com", "subject": "Hi\u202eredro", "body": "a\u2028to: eve"}
    description = describe(registry, "mail__send_email", arguments, call_room(1))
    job = Requester(kind="job", number=1, name="Tidy\u202eup\u2029now")
    text = visible(approval_html(job, [ApprovalCall(tool_use_id="1", description=description)], 3600))
    assert not any(char in text for char in UNSAFE)
    assert "Background job #1 “Tidy\\u202eup now”" in text  # a name's line break is a space, its bidi escaped
    assert 'subject: "Hi\\u202eredro"' in text and 'body: "a\\u2028to: eve"' in text


def test_no_arguments_and_nested_values_are_shown_as_json() -> None:
    assert argument_lines({}, 100) == "no arguments"
    assert argument_lines({"to": ["a@x.io", "b@x.io"], "n": 2.5, "ok": True}, 200).split("\n") == [
        'to: ["a@x.io", "b@x.io"]',
        "n: 2.5",
        "ok: true",
    ]


def test_only_the_single_longest_free_text_value_is_shortened() -> None:
    recipients = [f"person{n}@example.com" for n in range(40)]  # 1,000 characters of recipients, never cut
    arguments = {
        "to": recipients,
        "thread_id": "t-" + "7" * 300,  # an id, whole
        "subject": "Quarterly figures " * 20,  # free text, but not the longest: whole
        "body": "Dear all, the figures are below. " * 100,
    }
    lines = argument_lines(arguments, 3000).split("\n")
    shown = dict(line.split(": ", 1) for line in lines)
    assert list(shown) == ["to", "thread_id", "subject", "body"]
    assert shown["to"] == json.dumps(recipients)
    assert shown["thread_id"] == json.dumps(arguments["thread_id"])
    assert shown["subject"] == json.dumps(arguments["subject"])
    assert shown["body"].startswith('"Dear all, the figures') and shown["body"].endswith(
        f" of {len(arguments['body'])} characters not shown]"
    )
    assert tg_len("\n".join(lines)) <= 3000
    assert sum("characters not shown]" in line for line in lines) == 1


@pytest.mark.parametrize(
    ("name", "value", "free"),
    [
        ("body", "Dear Bob, hello", True),
        ("message", "two words", True),
        ("body", "one-long-token-without-any-space", False),  # a token, a blob: not prose
        ("to", "bob@example.com, eve@example.com", False),  # recipients, whatever their form
        ("recipients", ["bob@example.com", "eve@example.com"], False),
        ("toRecipients", "Bob Smith <bob@example.com>", False),
        ("cc", "Eve Smith <eve@example.com>", False),
        ("user_id", "1234 5678", False),
        ("threadId", "a b", False),
        ("count", 42, False),
    ],
)
def test_free_text_is_a_text_of_words_whose_name_is_not_an_id_or_a_recipient(
    name: str, value: Any, free: bool
) -> None:
    assert free_text(name, value) is free


def test_a_recipient_list_or_an_id_is_never_cut_the_call_is_refused_instead() -> None:
    many = [f"person{n}@example.com" for n in range(200)]  # 4,800 characters of recipients
    with pytest.raises(TooLongToShowError):
        argument_lines({"to": many, "body": "Dear all, hello. " * 50}, call_room(1))
    with pytest.raises(TooLongToShowError):
        argument_lines({"to": ", ".join(many), "body": "hi there"}, call_room(1))  # a text, but recipients
    with pytest.raises(TooLongToShowError):
        argument_lines({"document_id": "x" * 5000}, call_room(1))
    with pytest.raises(TooLongToShowError):  # two long texts: only one may be shortened
        argument_lines({"summary": "a b " * 1000, "body": "c d " * 1200}, call_room(1))


def test_fit_shortens_one_value_and_refuses_when_the_others_do_not_fit() -> None:
    short, long = Value('"short"'), Value(escaped("l l" * 1000), "l l" * 1000)
    kept, cut = fit([short, long], 400)
    assert kept == '"short"' and cut.endswith("of 3000 characters not shown]") and tg_len(cut) <= 393
    assert fit([Value("a" * 300), Value("b b", "b b")], 310) == ["a" * 300, "b b"]  # all fit: nothing cut
    with pytest.raises(TooLongToShowError):
        fit([Value("a" * 390), long], 400)  # the shortened text cannot fit beside the rest
    with pytest.raises(TooLongToShowError):
        fit([Value("a" * 300), Value("b" * 300)], 400)  # nothing may be cut
    assert shorten("x" * 10, 5) == "x" * 10  # a note longer than the cut: kept whole
    assert shorten("😀" * 100, 60) == "😀" * 13 + "… [87 of 100 characters not shown]"  # UTF-16: 2 each


@pytest.mark.parametrize("seed", range(40))
def test_every_argument_is_shown_within_the_room_or_the_call_is_refused(seed: int) -> None:
    rng = random.Random(seed)
    arguments = {
        f"arg{n}": "".join(
            rng.choice('ab c\n"😀é\u2028\u202e') for _ in range(rng.choice([0, 3, 50, 400, 5000]))
        )
        for n in range(rng.randint(1, 12))
    }
    room = rng.choice([call_room(1), call_room(2), call_room(4)])
    whole = {key: escaped(json.dumps(value, ensure_ascii=False)) for key, value in arguments.items()}
    try:
        lines = argument_lines(arguments, room).split("\n")
    except TooLongToShowError:
        free = [key for key in arguments if free_text(key, arguments[key])]
        longest = max(free, key=lambda key: tg_len(whole[key]), default=None)
        others = sum(tg_len(f"{key}: {whole[key]}") + 1 for key in arguments if key != longest)
        assert others > room - (30 if longest else 0), "refused only when the others cannot fit"
        return
    assert [line.split(":", 1)[0] for line in lines] == sorted(
        arguments, key=lambda key: tg_len(whole[key]) > 80
    )
    assert tg_len("\n".join(lines)) <= room
    assert sum("characters not shown]" in line for line in lines) <= 1
    assert not any(char in line for line in lines for char in "\u2028\u202e")
    for line in lines:  # every value not cut reads back as it was given
        key, value = line.split(": ", 1)
        if not value.endswith("characters not shown]"):
            assert json.loads(value) == arguments[key]


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


def test_a_call_whose_arguments_cannot_all_be_shown_is_refused_never_asked_in_part() -> None:
    registry = mail_registry()
    arguments = {"to": [f"person{n}@example.com" for n in range(400)], "body": "Hello all, " * 100}
    with pytest.raises(NotShownError, match="never approved unseen"):
        describe(registry, "mail__send_email", arguments, call_room(1))


def test_an_mcp_clients_call_that_cannot_be_shown_is_refused_and_audited_not_handed_to_the_chat() -> None:
    registry = mail_registry()
    audit = InMemoryAuditLog()
    asked: list[str] = []

    def ask(context: ToolContext, tool: str, arguments: dict[str, Any], description: str) -> str:
        asked.append(description)
        return "asked"

    context = ToolContext(
        Scope(Conversation(1), 1), turn_id="mcp", call_id="mcp:1", now="2026-11-25T10:00:00Z"
    )
    arguments = {"to": [f"person{n}@example.com" for n in range(400)], "body": "Hello all"}
    answer = call_unattended(registry, audit, context, "mail__send_email", arguments, ask)
    assert answer.result.is_error and answer.result.content.startswith(TOO_LONG_TO_SHOW)
    assert asked == [], "nothing waits for approval"
    (entry,) = audit.entries(1)
    assert (entry.outcome, entry.approval, entry.result) == ("denied", "unavailable", answer.result.content)


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
    text = describe(registry, "cancel_it", {"note": "n n" * 5000, "reminder_id": 7}, call_room(3))
    assert text.startswith('Call cancel_it with:\nreminder_id: 7\nnote: "n nn n')
    assert tg_len(text) <= call_room(3)
