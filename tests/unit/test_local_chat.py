"""`make chat` without a stack: the arguments of /clock, messages arriving while the prompt waits, Ctrl-D,
the line history, and the settings check that runs before the stack starts."""

from __future__ import annotations

import io
import readline
import signal
import sys
import time
import weakref
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from stepwise_local.chat import (
    DEFAULT_WAIT_SECONDS,
    PROMPT,
    Terminal,
    _quiet_interrupts,
    describe_clock,
    describe_span,
    line_history,
    parse_advance,
    report_delivery,
    summarize,
    wait_seconds,
)
from stepwise_local.scheduler import Fired
from stepwise_local.settings_check import chat_problems, settings_problems


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


def test_the_clock_line_is_in_the_chats_zone_with_utc_beside_it_when_the_clocks_differ() -> None:
    now = datetime(2026, 11, 24, 2, 5, 12, tzinfo=UTC)
    assert describe_clock(now, timedelta(0)) == "(clock: Tue 24 Nov 2026 02:05:12 UTC, the real time)"
    assert describe_clock(now, timedelta(hours=3), ZoneInfo("America/New_York")) == (
        "(clock: Mon 23 Nov 2026 21:05:12 America/New_York, Tue 24 Nov 2026 02:05:12 UTC, "
        "3h ahead of the real time)"
    )
    lisbon_in_winter = describe_clock(now, timedelta(0), ZoneInfo("Europe/Lisbon"))
    assert lisbon_in_winter == "(clock: Tue 24 Nov 2026 02:05:12 Europe/Lisbon, the real time)"
    lisbon_in_summer = describe_clock(now.replace(month=7), timedelta(0), ZoneInfo("Europe/Lisbon"))
    assert lisbon_in_summer == (
        "(clock: Fri 24 Jul 2026 03:05:12 Europe/Lisbon, Fri 24 Jul 2026 02:05:12 UTC, the real time)"
    )


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


class SummarizerEmulation:
    """Stands in for the emulation's scheduled summarizer: returns `result`, or raises `error`."""

    def __init__(self, result: dict[str, Any] | None = None, error: Exception | None = None) -> None:
        self.result, self.error = result, error

    def run_summarizer(self, force: bool = False) -> dict[str, Any]:
        if self.error is not None:
            raise self.error
        assert force and self.result is not None
        return self.result


@pytest.mark.parametrize(
    ("emulation", "line"),
    [
        (
            SummarizerEmulation({"summarized": 1, "messages": 4, "kept": 1, "failed": []}),
            "(memory: summarized 1 chat(s), 4 message(s))",
        ),
        (
            SummarizerEmulation({"summarized": 1, "messages": 2, "kept": 0, "failed": []}),
            "(memory: read 2 message(s) in 1 chat(s), nothing worth keeping (small talk, questions and "
            "commands are left out): memory is as it was)",
        ),
        (
            SummarizerEmulation({"summarized": 0, "messages": 0, "kept": 0, "failed": []}),
            "(memory: nothing new to summarize since the last run)",
        ),
        (
            SummarizerEmulation({"summarized": 0, "messages": 0, "failed": [1001]}),
            "(memory: summarized 0 chat(s), 0 message(s); 1 failed, see .chat.log)",
        ),
        (
            SummarizerEmulation(error=RuntimeError("VECTOR_BUCKET_NAME is not configured")),
            "(memory: the summarizer failed: VECTOR_BUCKET_NAME is not configured; see .chat.log)",
        ),
    ],
    ids=["done", "kept-nothing", "nothing-new", "a-chat-failed", "the-run-failed"],
)
def test_summarize_says_what_it_did_or_that_it_failed_in_one_line(
    emulation: SummarizerEmulation, line: str
) -> None:
    out = io.StringIO()
    summarize(emulation, Terminal(out), Path(".chat.log"))  # type: ignore[arg-type]
    assert out.getvalue() == f"{line}\n"


def test_ctrl_d_at_the_prompt_ends_the_input_on_a_new_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))  # input() then meets the end of the input: EOFError
    out = io.StringIO()
    terminal = Terminal(out)
    assert terminal.read(sys.stdin, interactive=True) == ""
    assert out.getvalue() == "\n" and not terminal.prompting


def test_lines_typed_in_one_chat_can_be_recalled_in_the_next(tmp_path: Path) -> None:
    path = tmp_path / ".chat_history"
    readline.clear_history()
    try:
        with line_history(path):  # no file yet: starts empty
            assert readline.get_current_history_length() == 0
            readline.add_history("add buy milk")
        assert path.read_text().splitlines()[-1] == "add buy milk"
        readline.clear_history()
        with line_history(path):
            length = readline.get_current_history_length()
            assert readline.get_history_item(length) == "add buy milk"
    finally:
        readline.clear_history()


def test_piped_input_keeps_no_history(tmp_path: Path) -> None:
    with line_history(None):
        pass
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("environment", "problem"),
    [
        ({"HISTORY_LIMIT": "500"}, "HISTORY_LIMIT must be at most 200 (got 500)"),
        ({"MAX_TOOL_STEPS": "0"}, "MAX_TOOL_STEPS must be at least 1 (got 0)"),
        ({"MAX_TOOL_STEPS": "five"}, "MAX_TOOL_STEPS must be a whole number (got five)"),
        ({"ANTHROPIC_TIMEOUT_SECONDS": "0"}, "ANTHROPIC_TIMEOUT_SECONDS must be greater than 0 (got 0)"),
        ({"FALLBACK_MODEL": "maybe"}, "FALLBACK_MODEL must be 'rules' or 'off' (got maybe)"),
        ({"TOOL_CALLS_TABLE": ""}, "TOOL_CALLS_TABLE must be at least 1 character(s) long (got '')"),
        (
            {"ALLOWED_USER_IDS": "42,alice"},
            "ALLOWED_USER_IDS must be comma-separated Telegram user ids, got 'alice'",
        ),
        (
            {"EMBEDDING_DIMENSIONS": "300"},
            "EMBEDDING_DIMENSIONS must be 256, 512 or 1024 (Titan Text Embeddings V2) (got 300)",
        ),
        # the sections, which a deployed function validates only when the code that reads them first runs
        ({"WARMUP_TIMEOUT_SECONDS": "9"}, "WARMUP_TIMEOUT_SECONDS must be at most 5 (got 9)"),
        ({"MCP_REQUESTS_PER_MINUTE": "0"}, "MCP_REQUESTS_PER_MINUTE must be at least 1 (got 0)"),
        ({"MCP_PARAMETERS_PATH": "mcp"}, "MCP_PARAMETERS_PATH must start and end with /, got 'mcp'"),
        (
            {"VOICE_TRANSCRIPTION_URL": "ftp://speech"},
            "VOICE_TRANSCRIPTION_URL must be an https:// URL (http:// only to localhost, 127.0.0.1 or ::1), "
            "got 'ftp://speech'",
        ),
        (
            {"VOICE_TRANSCRIBER": "openai"},
            "VOICE_TRANSCRIBER=openai needs VOICE_TRANSCRIPTION_URL, the API's base URL such as "
            "https://api.openai.com/v1",
        ),
        (  # the voice section hides its values: a URL's user-info may be a password
            {"VOICE_TRANSCRIPTION_URL": "https://me:hunter2@api.openai.com/v1"},
            "VOICE_TRANSCRIPTION_URL must not hold a backslash or a user-info part (user@ or "
            "user:password@); put the key in VOICE_TRANSCRIPTION_KEY or its _PARAMETER",
        ),
        ({"VOICE_TRANSCRIBE_TIMEOUT_SECONDS": "900"}, "VOICE_TRANSCRIBE_TIMEOUT_SECONDS must be at most 800"),
    ],
)
def test_a_bad_setting_is_one_line_naming_the_variable(environment: dict[str, str], problem: str) -> None:
    assert settings_problems([environment]) == [problem]


def test_each_bad_setting_is_named_once_whichever_functions_share_it() -> None:
    shared = {"HISTORY_LIMIT": "500", "MEMORY_TOP_K": "21"}
    assert settings_problems([shared, shared, {"HISTORY_LIMIT": "20"}]) == [
        "HISTORY_LIMIT must be at most 200 (got 500)",
        "MEMORY_TOP_K must be at most 20 (got 21)",
    ]


def test_the_settings_check_sees_only_the_functions_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HISTORY_LIMIT", "500")  # the host's, which no function sees
    assert settings_problems([{"HISTORY_LIMIT": "30", "ALLOWED_USER_IDS": "1001"}]) == []


@pytest.mark.parametrize(
    ("environ", "start"),
    [
        ({"ANTHROPIC_API_KEY": "sk-ant-abc\n"}, "ANTHROPIC_API_KEY must not contain spaces or line breaks"),
        ({"ANTHROPIC_BASE_URL": "localhost:11434"}, "ANTHROPIC_BASE_URL must be an http:// or https:// URL"),
        ({"ANTHROPIC_BASE_URL": "ftp://models"}, "ANTHROPIC_BASE_URL must be an http:// or https:// URL"),
        ({"ANTHROPIC_MODEL": "claude haiku"}, "ANTHROPIC_MODEL must be a model id such as claude-haiku-4-5"),
        (
            {"STEPWISE_CHAT_WAIT_SECONDS": "0"},
            "STEPWISE_CHAT_WAIT_SECONDS must be a number of seconds above 0",
        ),
        ({"STEPWISE_CHAT_WAIT_SECONDS": "soon"}, "STEPWISE_CHAT_WAIT_SECONDS must be a number of seconds"),
        ({"STEPWISE_CHAT_WAIT_SECONDS": "nan"}, "STEPWISE_CHAT_WAIT_SECONDS must be a number of seconds"),
    ],
)
def test_the_chats_own_variables_are_checked(environ: dict[str, str], start: str) -> None:
    (problem,) = chat_problems(environ)
    assert problem.startswith(start)


def test_usual_chat_variables_pass() -> None:
    environ = {
        "ANTHROPIC_API_KEY": "sk-ant-api03-abc_DEF-123",
        "ANTHROPIC_BASE_URL": "http://localhost:11434",
        "ANTHROPIC_MODEL": "claude-sonnet-4-5",
        "STEPWISE_CHAT_WAIT_SECONDS": "2.5",
    }
    assert chat_problems(environ) == [] and chat_problems({"ANTHROPIC_API_KEY": ""}) == []
    assert wait_seconds(environ) == 2.5 and wait_seconds({}) == DEFAULT_WAIT_SECONDS


class _Finalized:
    """Something with a weakref whose callback raises."""


@pytest.mark.parametrize(("error", "shown"), [(KeyboardInterrupt, False), (ValueError, True)])
def test_a_ctrl_c_in_a_finalizer_prints_nothing_and_still_interrupts_other_errors_still_show(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    error: type[BaseException],
    shown: bool,
) -> None:
    # Given the chat's hook for what Python cannot raise (a Ctrl-C landing in a weakref callback, say)
    monkeypatch.setattr(sys, "unraisablehook", _quiet_interrupts)
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)  # as in the chat

    def callback(_: object) -> None:
        raise error

    # When a callback raises as its object goes
    interrupted = False
    try:
        thing = _Finalized()
        ref = weakref.ref(thing, callback)
        del thing
        for _ in range(100):  # the main thread goes on: a Ctrl-C delivered again lands here (in 0.05 s)
            time.sleep(0.01)
    except KeyboardInterrupt:
        interrupted = True
    finally:
        signal.signal(signal.SIGINT, previous)
    # Then a Ctrl-C is not printed but still interrupts what the main thread does next (the chat's wait);
    # anything else is printed, as Python prints it
    assert ref() is None
    assert interrupted is (error is KeyboardInterrupt)
    assert ("Exception ignored" in capsys.readouterr().err) is shown
