"""`make chat` without a stack: the arguments of /clock, and messages arriving while the prompt waits."""

from __future__ import annotations

import io
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from stepwise_local.chat import (
    PROMPT,
    Terminal,
    describe_clock,
    describe_span,
    parse_advance,
    report_delivery,
)
from stepwise_local.scheduler import Fired


@pytest.mark.parametrize(
    ("argument", "expected"),
    [
        ("+3h", timedelta(hours=3)),
        ("+20m", timedelta(minutes=20)),
        ("+2d", timedelta(days=2)),
        ("+1h30m", timedelta(hours=1, minutes=30)),
        (" +1d2h3m4s ", timedelta(days=1, hours=2, minutes=3, seconds=4)),
        ("45m", timedelta(minutes=45)),
    ],
)
def test_clock_advances(argument: str, expected: timedelta) -> None:
    assert parse_advance(argument) == expected


@pytest.mark.parametrize("argument", ["", "+", "-1h", "+1x", "+30m1h", "soon", "+1.5h", "+h"])
def test_what_is_not_an_advance(argument: str) -> None:
    assert parse_advance(argument) is None


def test_spans_and_the_clock_line() -> None:
    assert describe_span(timedelta(hours=1, minutes=30)) == "1h30m"
    assert describe_span(timedelta(days=2, seconds=5)) == "2d5s"
    assert describe_span(timedelta(0)) == "0m"
    now = datetime(2026, 11, 23, 17, 0, tzinfo=UTC)
    assert describe_clock(now, timedelta(hours=3)).endswith(", 3h ahead of the real time)")
    assert describe_clock(now, timedelta(0)).endswith(", the real time)")


def test_messages_print_as_they_come_when_no_prompt_waits() -> None:
    out = io.StringIO()
    Terminal(out).show({"method": "sendMessage", "chat_id": 1, "message_id": 7, "text": "⏰ call mom"})
    assert out.getvalue() == "stepwise> ⏰ call mom\n"


def test_a_message_arriving_while_the_prompt_waits_goes_above_it() -> None:
    out = io.StringIO()
    terminal = Terminal(out)
    terminal.prompting = True
    terminal.show({"method": "sendMessage", "chat_id": 1, "message_id": 7, "text": "⏰ call mom"})
    terminal.say("(a note)")
    assert out.getvalue() == f"\r\x1b[Kstepwise> ⏰ call mom\n{PROMPT}\r\x1b[K(a note)\n{PROMPT}"


def test_an_interactive_read_shows_the_prompt() -> None:
    out = io.StringIO()
    terminal = Terminal(out)
    assert terminal.read(io.StringIO("hello\n"), interactive=True) == "hello\n"
    assert out.getvalue() == PROMPT and not terminal.prompting
    assert terminal.read(io.StringIO(""), interactive=False) == ""


def test_only_failed_deliveries_are_reported(tmp_path: Path) -> None:
    out = io.StringIO()
    delivery = Fired(
        schedule_arn="arn:aws:scheduler:us-east-1:123456789012:schedule/g/r-1",
        group="g",
        name="r-1",
        scheduled_time=datetime(2026, 11, 23, 17, 0, tzinfo=UTC),
        target_arn="arn:aws:lambda:us-east-1:123456789012:function:Reminder",
        function="Reminder",
        event={},
        execution_id="0123456789abcdef",
    )
    report_delivery(Terminal(out), delivery, tmp_path / "chat.log")
    assert out.getvalue() == ""
    report_delivery(
        Terminal(out), Fired(**{**delivery.__dict__, "error": "RuntimeError: boom"}), tmp_path / "c.log"
    )
    assert out.getvalue().startswith("(scheduler: r-1 could not reach Reminder: RuntimeError: boom; see ")
