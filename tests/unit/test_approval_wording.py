"""How an approval names who asks and what for: one rendering for every source (the chat's own model, a
background job, an MCP client, a check-in), before the tap and in the line after it."""

from __future__ import annotations

import pytest
from support.turn_fakes import turn_meta

from stepwise.approvals.lifecycle import approval_html
from stepwise.approvals.models import ApprovalCall, Requester
from stepwise.approvals.wording import asks, in_sentence, not_shown, requester_name
from stepwise.inbox.outside_call import OutsideCall
from stepwise.states.run_tools import requester_of
from stepwise.turn_records.models import Checkin, JobRun

DELETE = "Delete task #4 “old plan”."


@pytest.mark.parametrize(
    ("requester", "named"),
    [
        (Requester(), "The assistant in this chat"),
        (Requester(kind="job", number=1, name="Tidy up"), "Background job #1 “Tidy up”"),
        (Requester(kind="mcp_client", name="laptop"), "Your MCP client “laptop”"),
        (Requester(kind="checkin", number=2, name="review my week"), "Your check-in #2 “review my week”"),
        (Requester(kind="checkin", name="review my week"), "Your check-in “review my week”"),
    ],
)
def test_every_source_is_named_as_the_subject_of_the_sentence(requester: Requester, named: str) -> None:
    assert requester_name(requester) == named
    assert asks(requester, [DELETE]) == f"{named} asks to delete task #4 “old plan”."
    assert asks(requester, [DELETE], asked=True) == f"{named} asked to delete task #4 “old plan”."


def test_a_long_or_multiline_name_is_cut_to_one_short_line() -> None:
    named = requester_name(Requester(kind="checkin", number=3, name="every morning\nlook " + "x" * 100))
    assert named.startswith("Your check-in #3 “every morning look x") and named.endswith("…”")
    assert "\n" not in named and len(named) < 90


@pytest.mark.parametrize(
    ("description", "clause"),
    [
        ("Delete task #1 “buy milk”.", "delete task #1 “buy milk”"),
        ("Change task #2 “a”: rename it to “b”.", "change task #2 “a”: rename it to “b”"),
        ("Forget the memory m-1: “likes tea”.", "forget the memory m-1: “likes tea”"),
        ("Call x on the outside MCP server “s” with {}.", "call x on the outside MCP server “s” with {}"),
        ("MCP server “s” wants to reset.", "MCP server “s” wants to reset"),  # an acronym stays
        ('cancel_reminder({"reminder_id":2})', 'cancel_reminder({"reminder_id":2})'),  # a tool's name stays
        ("I will do it.", "I will do it"),
    ],
)
def test_a_description_reads_in_the_sentences_case(description: str, clause: str) -> None:
    assert in_sentence(description) == clause


def test_several_calls_are_listed_one_a_line() -> None:
    job = Requester(kind="job", number=1, name="Tidy up")
    assert asks(job, [DELETE, "Delete task #5 “x”."]) == (
        "Background job #1 “Tidy up” asks to:\n• delete task #4 “old plan”\n• delete task #5 “x”"
    )


def test_the_request_message_names_who_asks_before_the_tap_and_is_escaped() -> None:
    html = approval_html(
        Requester(kind="mcp_client", name="<laptop>"),
        [ApprovalCall(tool_use_id="t", description="Delete task #1 “a & b”.")],
        3600,
    )
    assert html.splitlines() == [
        "🔐 <b>Approval needed</b>",
        "Your MCP client “&lt;laptop&gt;” asks to delete task #1 “a &amp; b”.",
        "<i>No answer within 1 hour counts as Deny.</i>",
    ]


def test_a_turn_names_its_requester_from_what_it_carries_out() -> None:
    job = JobRun(number=4, title="Tidy up", task="t", deadline="2026-11-22T09:15:00.000Z")
    outside = OutsideCall(tool="delete_task", arguments={}, connection="laptop", description=DELETE)
    assert requester_of(turn_meta()) == Requester()
    assert requester_of(turn_meta(kind=job)) == Requester(kind="job", number=4, name="Tidy up")
    assert requester_of(turn_meta(kind=outside)) == Requester(kind="mcp_client", name="laptop")
    checkin = Checkin(number=2, text="review my week")
    assert requester_of(turn_meta(kind=checkin)) == Requester(kind="checkin", number=2, name="review my week")


@pytest.mark.parametrize("char", ["\u202e", "\u2066", "\u2069", "\u200f"])
def test_a_name_with_a_bidi_control_is_shown_escaped_and_still_cut_to_one_short_line(char: str) -> None:
    code = f"\\u{ord(char):04x}"
    assert requester_name(Requester(kind="job", number=1, name=f"Tidy{char}up")) == (
        f"Background job #1 “Tidy{code}up”"
    )
    named = requester_name(Requester(kind="checkin", number=3, name=char * 100))
    assert char not in named and named.endswith("…”")
    assert named[len("Your check-in #3 “") : -2].replace(code, "") == ""  # escapes are never cut in two
    assert len(named) < 90


def test_a_call_refused_unseen_is_told_in_one_line_naming_who_wanted_what() -> None:
    job = Requester(kind="job", number=2, name="Mail\u202eout")
    line = not_shown(job, ["mail__send_email"])
    assert line == (
        "🔐 Not asked, refused: Background job #2 “Mail\\u202eout” wanted to call mail__send_email, but "
        "its arguments cannot all be shown in one approval request, and nothing is approved unseen. "
        "Nothing was done."
    )
    several = not_shown(Requester(), ["update_task", "update_task", "forget"])
    assert "wanted to call update_task (2 calls), forget, but their arguments" in several
    assert "\n" not in several
