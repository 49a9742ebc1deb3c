"""`make chat` end to end: a process fed through stdin (or a pseudo-terminal), the real state machine.

Most chats are forked from a launcher that has the chat's modules imported (`support.chat_launcher`: a
process of their own on real pipes, without an interpreter's start each); the tests of the process's edges
(Ctrl-C, a terminal, what loads before the stack) and one plain hello start `python -m stepwise_local.chat`
itself."""

from __future__ import annotations

import json
import os
import pty
import re
import select
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import requests
from support import chat_launcher
from support.mcp_client import TOKEN, call
from support.mcp_client import text as text_of
from support.mcp_servers import TimeServer, free_port
from support.network import refusing_base_url
from support.tools import ROOT

from stepwise.states.deliver import FRIENDLY_ERROR
from stepwise_local.anthropic_server import (
    FakeAnthropic,
    Scripted,
    hang,
    last_user_text,
    rate_limited,
    text,
    tool_use,
)
from stepwise_local.chat import AS_USAGE
from stepwise_local.chat_contacts import CONTACT_USAGE
from stepwise_local.example_notes.browser import sign_in

SETTINGS = ("ANTHROPIC_", "AWS_", "HISTORY_LIMIT", "MAX_TOOL_STEPS")


def tool_results(request: dict[str, Any]) -> list[dict[str, Any]]:
    """The tool_result blocks of a Messages API request's last message."""
    content = request["messages"][-1]["content"]
    return [block for block in content if isinstance(block, dict) and block.get("type") == "tool_result"]


def chat_env(**extra_env: str) -> dict[str, str]:
    """The chat's environment: the test's settings, and any free port for its MCP endpoint (a chat already
    running on this machine keeps 8765, and its banner would say so)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(SETTINGS)}
    env["STEPWISE_MCP_PORT"] = "0"
    env.update(chat_launcher.shared().env)
    env.update(extra_env)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "layers" / "core"), str(ROOT)])
    return env


def chat_command(tmp_path: Path) -> list[str]:
    """A chat forked from this worker's launcher."""
    return [*chat_launcher.shared().command, "--log", str(tmp_path / "chat.log")]


def interpreter_chat_command(tmp_path: Path) -> list[str]:
    """A chat in an interpreter of its own, as `make chat` starts it."""
    return [sys.executable, "-m", "stepwise_local.chat", "--log", str(tmp_path / "chat.log")]


def chat(lines: list[str], tmp_path: Path, *, interpreter: bool = False, **extra_env: str) -> str:
    env = chat_env(**extra_env)
    result = subprocess.run(
        interpreter_chat_command(tmp_path) if interpreter else chat_command(tmp_path),
        input="\n".join(lines) + "\n",
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert ("offline rule-based model" in result.stderr) == ("ANTHROPIC_API_KEY" not in extra_env)
    return result.stdout


def test_with_an_api_key_the_chat_talks_to_the_messages_api(tmp_path: Path) -> None:
    with FakeAnthropic(api_key="sk-local-test") as api:
        api.script(text("Hello from the model."))
        out = chat(["hello"], tmp_path, ANTHROPIC_API_KEY="sk-local-test", ANTHROPIC_BASE_URL=api.base_url)
    assert out == "you> hello\nstepwise> Hello from the model.\n"
    (request,) = api.requests
    assert request["model"] == "claude-haiku-4-5" and last_user_text(request) == "hello"


def test_with_the_fake_key_the_chat_searches_the_fake_web_and_lists_its_sources(tmp_path: Path) -> None:
    out = chat(
        ["what is the weather in Lisbon?", "hello"], tmp_path, ANTHROPIC_API_KEY="fake", WEB_SEARCH="true"
    )
    assert out == (
        "you> what is the weather in Lisbon?\n"
        "stepwise> Here is what I found on the web about: what is the weather in Lisbon?\n\n"
        "Sources:\n1. Example result about what is the weather in Lisbon?\n"
        "you> hello\nstepwise> You said: hello\n"
    )


def test_offline_a_web_question_gets_told_that_the_chat_cannot_search(tmp_path: Path) -> None:
    out = chat(["search the web for flights to Lisbon"], tmp_path)
    assert "stepwise> I can't search the web or open web pages right now" in out


def test_hello_gets_an_answer(tmp_path: Path) -> None:
    out = chat(["hello"], tmp_path, interpreter=True)
    assert out.startswith("you> hello\nstepwise> Hello! I'm Stepwise")


def test_offline_chat_manages_a_task_list_with_an_approval(tmp_path: Path) -> None:
    out = chat(["add buy milk", "list", "done 1", "delete 1", "1", "list"], tmp_path)
    expected = [
        "you> add buy milk",
        "stepwise> Added task #1: buy milk",
        "you> list",
        "stepwise> 1 task:",
        "#1 [ ] buy milk",
        "you> done 1",
        "stepwise> Completed task #1: buy milk",
        "you> delete 1",
        "stepwise> 🔐 Approval needed",
        "The assistant in this chat asks to delete task #1 “buy milk”.",
        "          [1] Approve ✅  [2] Deny ❌",
        "you> 1",
        "✅ Approved",
        "stepwise> Deleted task #1: buy milk",
        "you> list",
        "stepwise> No tasks.",
    ]
    lines = out.splitlines()
    position = -1
    for line in expected:  # each expected line appears, in this order
        position = lines.index(line, position + 1)


def test_offline_tasks_named_by_their_words_near_misses_a_timeless_reminder_and_skills(
    tmp_path: Path,
) -> None:
    # Given two tasks about milk, in the chat's real path (the emulation, the offline model)
    out = chat(
        [
            "add buy milk",
            "add buy oat milk",
            "done buy oat milk",
            "delete the milk task",
            "delete buy milk",
            "1",
            "lst",
            "remind me to call mom",
            "/skills",
        ],
        tmp_path,
    )
    answers = {
        said.split("\n", 1)[0]: said.split("\n", 1)[1] if "\n" in said else ""
        for said in out.split("you> ")[1:]
    }
    # A task named by its words: one match is acted on; several are listed with the command that picks one
    assert answers["done buy oat milk"] == "stepwise> Completed task #2: buy oat milk\n"
    assert answers["delete the milk task"] == (
        "stepwise> Which one? 2 tasks match “milk”:\n#1 [ ] buy milk\n#2 [x] buy oat milk\n"
        "Send delete with its number, like delete 1.\n"
    )
    # and a deletion by words asks for the tap like any deletion
    assert "asks to delete task #1 “buy milk”." in answers["delete buy milk"]
    assert "✅ Approved\nstepwise> Deleted task #1: buy milk" in answers["1"]
    # A near miss: the command it would run
    assert answers["lst"] == "stepwise> Did you mean “list”? Send that and I'll list your tasks.\n"
    # A reminder without a time: the task is added and the answer says so, and how to give a time
    assert answers["remind me to call mom"] == (
        "stepwise> Added task #3: call mom\nA reminder needs a time, so I added it as a task. "
        "To be reminded, say when: “remind me at 5pm to call mom” or “remind me in 20 minutes to call mom”.\n"
    )
    # /skills says plainly that skills need Claude or a compatible endpoint
    assert answers["/skills"].startswith("stepwise> Skills need Claude or a compatible endpoint")


def test_offline_a_job_whose_task_the_rules_do_not_understand_says_so_in_one_line(tmp_path: Path) -> None:
    out = chat(["in the background: frobnicate the widgets", "/usage", "/jobs"], tmp_path)
    (report,) = [line for line in out.splitlines() if line.startswith("stepwise> ⚠️")]
    assert report == (
        "stepwise> ⚠️ Background job #1 “frobnicate the widgets” could not do its task (0 tool rounds, "
        "0 tokens, about $0.0000): I'm in offline mode (no model API is configured), so I didn't understand "
        "the task."
    )
    assert "✅" not in out


def test_deny_in_the_chat_keeps_the_task(tmp_path: Path) -> None:
    out = chat(["add water plants", "delete 1", "deny", "list"], tmp_path)
    denied = out.split("you> deny\n")[1].split("you> list\n")[0]
    # the request shows the decision, then one line says what was not done, without a warning sign
    assert denied.endswith(
        "No answer within 1 hour counts as Deny.\n\n❌ Denied\n"
        "stepwise> You said no, so I didn't delete task #1. Nothing was changed.\n"
    ), denied
    assert denied.lower().count("nothing was changed") == 1, "said once"
    assert "⚠️" not in denied
    assert out.rstrip().endswith("#1 [ ] water plants")


def test_memory_works_offline_in_the_chat(tmp_path: Path) -> None:
    out = chat(
        [
            "my sister Anna lives in Lisbon",
            "remember that I take my coffee black",
            "/summarize",
            "what do you remember about coffee",
            "tell me about Anna",
            "forget the coffee",
        ],
        tmp_path,
    )
    assert "stepwise> Remembered (fact-" in out
    assert "(memory: summarized 1 chat(s), 4 message(s))" in out
    recalled = out.split("you> what do you remember about coffee\n")[1].split("you>")[0]
    assert "I take my coffee black" in recalled
    # Text the rules do not understand gets the closest commands, not recalled memories given as its answer
    unknown = out.split("you> tell me about Anna\n")[1].split("you>")[0]
    assert unknown.startswith("stepwise> I'm in offline mode") and "Closest commands: " in unknown
    assert "Anna lives in Lisbon" not in unknown
    # "forget <words>" points to the memory and the command that forgets it; nothing is forgotten yet
    fact = re.search(r"Remembered \((fact-\S+)\): I take my coffee black", out)
    assert fact is not None, out
    pointer = out.split("you> forget the coffee\n")[1]
    assert pointer.startswith(
        f"stepwise> This is the memory I would forget: “I take my coffee black” ({fact.group(1)}). "
        f"To forget it, send forget {fact.group(1)}"
    ), pointer


def test_summarize_after_small_talk_only_says_it_kept_nothing_and_goes_on(tmp_path: Path) -> None:
    out = chat(["hello", "/summarize", "list"], tmp_path)
    assert (
        "you> /summarize\n(memory: read 2 message(s) in 1 chat(s), nothing worth keeping (small talk, "
        "questions and commands are left out): memory is as it was)\nyou> list\nstepwise> No tasks." in out
    )


def test_the_clock_command_shows_and_moves_the_emulated_time(tmp_path: Path) -> None:
    out = chat(["/clock", "/clock +1h30m", "/clock soon", "/clock +2d", "hello"], tmp_path)
    lines = out.splitlines()
    assert lines[0] == "you> /clock" and re.fullmatch(r"\(clock: .+, the real time\)", lines[1])
    assert lines[2] == "you> /clock +1h30m" and lines[3].endswith(", 1h30m ahead of the real time)")
    assert lines[4] == "you> /clock soon" and lines[5].startswith("(usage: /clock")
    assert lines[6] == "you> /clock +2d" and lines[7].endswith(", 2d1h30m ahead of the real time)")
    assert lines[8] == "you> hello" and lines[9].startswith("stepwise> Hello! I'm Stepwise")


def test_the_clock_shows_the_chats_zone_not_this_machines_with_utc_beside_it(tmp_path: Path) -> None:
    out = chat(
        ["/clock", "/timezone America/New_York", "/clock", "/timezone Europe/Lisbon", "/clock"],
        tmp_path,
        TZ="Asia/Tokyo",
    )
    clocks = [line for line in out.splitlines() if line.startswith("(clock: ")]
    date_time = r"\w{3} \d{2} \w{3} \d{4} \d{2}:\d{2}:\d{2}"
    assert re.fullmatch(rf"\(clock: {date_time} UTC, the real time\)", clocks[0]), "the default zone, UTC"
    assert re.fullmatch(
        rf"\(clock: {date_time} America/New_York, {date_time} UTC, the real time\)", clocks[1]
    ), clocks[1]
    assert re.fullmatch(
        rf"\(clock: {date_time} Europe/Lisbon(, {date_time} UTC)?, the real time\)", clocks[2]
    )
    assert "Asia/Tokyo" not in out and "JST" not in out


def test_after_a_press_the_next_line_waits_for_the_approved_turns_reply(tmp_path: Path) -> None:
    # "hello" is answered by a turn of its own while the approval waits: the press must still wait for the
    # approval's turn, so that "list" comes after the deletion.
    out = chat(["add buy milk", "delete 1", "hello", "1", "list"], tmp_path)
    after_press = out.split("you> 1\n", 1)[1].splitlines()
    assert after_press[-5:] == [
        "",
        "✅ Approved",
        "stepwise> Deleted task #1: buy milk",
        "you> list",
        "stepwise> No tasks.",
    ]


def test_piped_a_jobs_approval_is_on_screen_before_the_next_line_presses_it(tmp_path: Path) -> None:
    # No pause in the input: the job's buttons come from an execution of its own, after the turn answered.
    out = chat(["add old plan", "in the background: delete 1", "1", "list"], tmp_path)
    lines = out.splitlines()
    press = lines.index("you> 1")
    assert lines[press - 1] == "          [1] Approve ✅  [2] Deny ❌"
    assert lines[press - 3] == "Background job #1 “delete 1” asks to delete task #1 “old plan”."
    listing = lines.index("you> list")
    assert "✅ Approved" in lines[press:listing]
    assert any("Deleted task #1" in line for line in lines[press:listing]), "the job's report, before list"
    assert lines[listing:] == ["you> list", "stepwise> No tasks."]


def test_piped_a_line_whose_work_outlasts_the_wait_is_named_and_the_next_line_is_read(tmp_path: Path) -> None:
    with FakeAnthropic(api_key="sk-local-test") as api:
        parent = [tool_use(("spawn_job", {"task": "Think it over.", "title": "Slow"})), text("Started.")]

        job = [rate_limited("40"), text("Thought it over.")]

        def answer(request: dict[str, Any]) -> Scripted:
            if "## Background job" in json.dumps(request["messages"]):
                # A Wait state of 8s (the chat scales waits to 1/5) keeps the job running past the chat's wait
                # without holding up the other turns.
                return job.pop(0) if job else text("Done.")
            return parent.pop(0) if parent else text(f"You said: {last_user_text(request)}")

        api.default = answer
        out = chat(
            ["think it over in the background", "hello"],
            tmp_path,
            ANTHROPIC_API_KEY="sk-local-test",
            ANTHROPIC_BASE_URL=api.base_url,
            STEPWISE_CHAT_WAIT_SECONDS="4",
        )
    lines = out.splitlines()
    assert lines[:2] == ["you> think it over in the background", "stepwise> Started."]
    assert re.fullmatch(
        r"\(still running after 4s: job-\S+; reading the next line anyway; "
        r"STEPWISE_CHAT_WAIT_SECONDS sets how long to wait; see \S+\)",
        lines[2],
    ), out
    # The job given up is not waited for again: the next line is answered at once.
    assert lines[3:5] == ["you> hello", "stepwise> You said: hello"]
    assert out.count("still running after") == 1


def test_a_dead_model_endpoint_gets_the_friendly_answer_and_no_warning_on_the_terminal(
    tmp_path: Path,
) -> None:
    with refusing_base_url() as dead:
        result = subprocess.run(
            chat_command(tmp_path),
            input="hello\n",
            capture_output=True,
            text=True,
            cwd=ROOT,
            env=chat_env(ANTHROPIC_API_KEY="sk-local-test", ANTHROPIC_BASE_URL=dead),
            timeout=120,
            check=False,
        )
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout == f"you> hello\nstepwise> {FRIENDLY_ERROR}\n"
    banner = result.stderr.splitlines()
    assert banner[0] == "Stepwise, running locally with Claude via the Anthropic API.", banner
    assert banner[2].startswith("An example notes server with its own sign-in runs at http://127.0.0.1:"), (
        banner
    )
    assert len(banner) == 4 and banner[3].startswith("Logs go to "), "the banner only: no warning"
    assert "Warning" not in (tmp_path / "chat.log").read_text()


def test_a_bad_setting_stops_the_chat_before_it_starts_with_one_line(tmp_path: Path) -> None:
    result = subprocess.run(
        chat_command(tmp_path),
        input="hello\n",
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=chat_env(HISTORY_LIMIT="500"),
        timeout=60,
        check=False,
    )
    assert result.returncode == 2
    assert result.stderr == "make chat: HISTORY_LIMIT must be at most 200 (got 500)\n"
    assert result.stdout == ""


def test_ctrl_c_while_a_turn_runs_leaves_cleanly(tmp_path: Path) -> None:
    with FakeAnthropic(api_key="sk-local-test") as api:
        api.script(hang(2.0))
        env = chat_env(ANTHROPIC_API_KEY="sk-local-test", ANTHROPIC_BASE_URL=api.base_url)
        with subprocess.Popen(
            interpreter_chat_command(tmp_path),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=ROOT,
            env=env,
        ) as process:
            assert process.stdin is not None
            process.stdin.write("hello\n")
            process.stdin.flush()
            api.wait_for_requests(1)  # the turn is waiting for the model
            process.send_signal(signal.SIGINT)
            out, err = process.communicate(timeout=60)
    assert process.returncode == 0, err[-3000:]
    assert "Traceback" not in err and "(stopped waiting;" in err
    assert out.startswith("you> hello\n") and out.endswith("\n")


class Pty:
    """`make chat` in a pseudo-terminal, as a person runs it: readline, Ctrl-C and Ctrl-D included."""

    def __init__(self, tmp_path: Path) -> None:
        env = chat_env(TERM="xterm", INPUTRC=os.devnull)  # readline's default (emacs) key bindings
        command = [*interpreter_chat_command(tmp_path), "--history", str(tmp_path / ".chat_history")]
        self.pid, self.fd = pty.fork()
        if self.pid == 0:  # the child: the chat, with the terminal as its controlling tty
            os.chdir(ROOT)
            os.execve(sys.executable, command, env)
        self.output = ""

    def type(self, keys: str) -> None:
        os.write(self.fd, keys.encode())

    def _read(self, timeout: float) -> bool:
        """Add what the terminal shows within `timeout`; False once the chat has closed it."""
        if not select.select([self.fd], [], [], timeout)[0]:
            return True
        try:
            self.output += os.read(self.fd, 65536).decode(errors="replace")
        except OSError:  # the chat ended and closed the terminal
            return False
        return True

    def expect(self, wanted: str, timeout: float = 60.0) -> None:
        """Read until `wanted` has been shown; what follows it is kept for the next expectation."""
        deadline = time.monotonic() + timeout
        while wanted not in self.output and time.monotonic() < deadline:
            if not self._read(max(0.0, deadline - time.monotonic())):
                break
        assert wanted in self.output, f"{wanted!r} not shown; the terminal shows {self.output[-2000:]!r}"
        self.output = self.output.split(wanted, 1)[1]

    def exit_code(self, timeout: float = 60.0) -> int:
        """Wait for the chat to end, keeping what it shows meanwhile."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self._read(0.1)
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                os.close(self.fd)
                return os.waitstatus_to_exitcode(status)
        os.kill(self.pid, signal.SIGKILL)
        os.waitpid(self.pid, 0)
        raise AssertionError(f"the chat did not end; the terminal shows {self.output[-2000:]!r}")


def test_in_a_terminal_lines_can_be_edited_recalled_and_ctrl_d_or_ctrl_c_leaves(tmp_path: Path) -> None:
    first = Pty(tmp_path)
    first.expect("you> ")
    first.type("helo\x1b[Dl\r")  # "helo", left arrow, "l": hello
    first.expect("stepwise> Hello! I'm Stepwise")
    first.expect("you> ")
    first.type("\x04")  # Ctrl-D
    assert first.exit_code() == 0
    assert "\n" in first.output and "Traceback" not in first.output
    assert (tmp_path / ".chat_history").read_text().splitlines()[-1] == "hello"

    second = Pty(tmp_path)
    second.expect("you> ")
    second.type("\x1b[A\r")  # up arrow: the last line of the previous chat
    second.expect("stepwise> Hello! I'm Stepwise")
    second.expect("you> ")
    # Ctrl-C is a signal, not a key: one that lands after readline draws the prompt but before it waits for
    # input is only seen at the next key (CPython's readline checks signals when its select() is
    # interrupted), so the test presses it as a person would, a moment after the prompt shows.
    time.sleep(0.5)
    second.type("\x03")  # Ctrl-C at the prompt
    assert second.exit_code() == 0
    assert "\n" in second.output and "Traceback" not in second.output


def test_the_chat_uses_the_outside_mcp_servers_its_file_lists(tmp_path: Path) -> None:
    servers = tmp_path / "servers.json"
    with TimeServer(token="local-secret") as clock_server, FakeAnthropic(api_key="sk-local-test") as api:
        servers.write_text(
            json.dumps(
                {
                    "servers": [
                        {"name": "time", "url": clock_server.url, "token_parameter": "/stepwise/mcp/t"}
                    ],
                    "parameters": {"/stepwise/mcp/t": "Bearer local-secret"},
                }
            )
        )
        api.script(tool_use(("time__get_current_time", {"timezone": "Asia/Tokyo"})), text("It is late."))
        out = chat(
            ["what time is it in Tokyo?"],
            tmp_path,
            ANTHROPIC_API_KEY="sk-local-test",
            ANTHROPIC_BASE_URL=api.base_url,
            STEPWISE_MCP_SERVERS=str(servers),
            STEPWISE_MCP_PORT="0",
        )
        assert "time__get_current_time" in [tool["name"] for tool in api.requests[0]["tools"]]
        result = tool_results(api.requests[1])[0]
        assert clock_server.count("tools/call") == 1
    assert out.endswith("stepwise> It is late.\n")
    assert "Asia/Tokyo" in str(result["content"]) and not result.get("is_error")


def test_an_mcp_client_reaches_the_chats_own_endpoint_with_a_token_from_connect(tmp_path: Path) -> None:
    port = free_port()
    process = subprocess.Popen(
        chat_command(tmp_path),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        env=chat_env(STEPWISE_MCP_PORT=str(port)),
    )
    assert process.stdin is not None and process.stdout is not None
    try:
        process.stdin.write("/connect laptop\n")
        process.stdin.flush()
        shown = ""
        deadline = time.monotonic() + 60
        url = f"http://127.0.0.1:{port}/mcp"
        while "revoke laptop" not in shown and time.monotonic() < deadline:
            shown += process.stdout.readline()
        token = TOKEN.findall(shown)[0]
        assert url in shown
        assert not call(url, token, "add_task", {"title": "from my editor"}).is_error
        listed = call(url, token, "list_tasks", {"status": "all"})
        assert "from my editor" in text_of(listed)
    finally:
        process.stdin.close()
        process.wait(timeout=60)
    assert process.returncode == 0


def test_a_voice_note_is_heard_offline_and_answered_aloud_into_a_file(tmp_path: Path) -> None:
    # Given spoken answers on, and a note spoken by eSpeak NG
    note = ROOT / "tests" / "fixtures" / "voice" / "hello.ogg"
    out = chat(["/voice on", f"/voice-note {note}", "/voice-note no/such/file.ogg", "/voice-note"], tmp_path)
    # Then the transcript is shown before the answer, with the footnote about offline recognition
    heard = re.search(r"stepwise> 🎙 I heard: “([^”]*)”", out)
    assert heard is not None and {"hello", "today"} & set(heard.group(1).split()), out
    assert out.index("🎙 I heard") < out.index("VOICE_TRANSCRIBER=openai")
    # And the spoken answer is an Ogg Opus file whose path is shown
    spoken = re.search(r"🔊 spoken answer \([\d,]+ bytes, Ogg Opus\): (\S+)", out)
    assert spoken is not None, out
    audio = (ROOT / spoken.group(1)) if not Path(spoken.group(1)).is_absolute() else Path(spoken.group(1))
    assert audio.read_bytes().startswith(b"OggS") and audio.is_relative_to(tmp_path)
    # And bad input gets a clear line, not a crash
    assert "(can't read no/such/file.ogg" in out
    assert "(usage: /voice-note PATH" in out


def test_with_debug_logs_the_chat_shows_the_warm_ups_of_a_quiet_chats_first_turn(tmp_path: Path) -> None:
    out = chat(["hello"], tmp_path, LOG_LEVEL="DEBUG")
    assert "stepwise>" in out
    log = (tmp_path / "chat.log").read_text()
    line = next(line for line in log.splitlines() if "warm-ups started" in line)
    assert "CallModelFunction" in line and "FinishTurnFunction" in line


def test_topic_moves_the_chat_into_a_topic_and_back(tmp_path: Path) -> None:
    """The prompt shows the topic; the bot answers in it; what is the person's (the task list) is shared."""
    long_name = "x" * 129
    out = chat(
        [
            "add buy milk",
            "/topic Trip",
            "what's on my list?",
            "/topic",
            "hello",
            "/topic Trip",
            f"/topic {long_name}",
        ],
        tmp_path,
    )
    lines = out.splitlines()
    assert lines[2:8] == [
        "you> /topic Trip",
        "(opened the topic “Trip”; /topic goes back to the main chat)",
        "you [Trip]> what's on my list?",
        "stepwise [Trip]> 1 task:",
        "#1 [ ] buy milk",
        "you [Trip]> /topic",
    ]
    assert lines[8:10] == ["(back in the main chat)", "you> hello"]
    assert lines[10].startswith("stepwise> Hello!")
    assert lines[11:] == [
        "you> /topic Trip",
        "(in the topic “Trip”)",
        f"you [Trip]> /topic {long_name}",
        "(usage: /topic NAME moves into that topic, opened on first use; /topic goes back to the main chat)",
    ]


def test_group_and_as_speak_in_a_group_as_other_members(tmp_path: Path) -> None:
    """/group: only what addresses the bot starts a turn; /as NAME speaks as another member (on the allowlist
    or not); the group's list is its own; only the asker's tap answers an approval."""
    out = chat(
        [
            "/group",
            "add bread to our list",
            "@stepwise_bot add bread to our list",
            "@stepwise_bot delete 1",
            "/as Rui",
            "approve",
            "/as",
            "approve",
            "/as Eve unlisted",
            "@stepwise_bot list",
            "/as Eve sometimes",
            "/as",
            "/private",
            "list",
        ],
        tmp_path,
    )
    lines = out.splitlines()
    assert lines[:6] == [
        "you> /group",
        "(in the group “Local group”: the bot answers what addresses it, as @stepwise_bot …, a reply or a "
        "command; /private goes back)",
        "you [group]> add bread to our list",
        "(no turn: not addressed to the bot)",
        "you [group]> @stepwise_bot add bread to our list",
        "stepwise [group]> Added task #1: bread",
    ]
    rui = out.split("Rui [group]> approve\n")[1].split("Rui [group]> /as\n")[0]
    assert rui == "(Only the member who asked (Local) can answer this.)\n", "Rui's tap changes nothing"
    assert "Deleted task #1: bread" in out.split("you [group]> approve\n")[1]
    assert "(no turn: sender is not on the allowlist)" in lines
    assert AS_USAGE in lines
    assert lines[-2:] == ["you> list", "stepwise> No tasks."], "the group's list is not yours"


def test_a_voice_note_goes_where_the_chat_is_as_who_is_speaking(tmp_path: Path) -> None:
    """/voice-note in a topic is answered in that topic; in the group it is a group message (which, like any
    not addressed to the bot, starts no turn); as a member not on the allowlist it is theirs."""
    note = ROOT / "tests" / "fixtures" / "voice" / "hello.ogg"
    out = chat(
        [
            "/topic Trip",
            f"/voice-note {note}",
            "/topic",
            "/as Eve unlisted",
            f"/voice-note {note}",
            "/as",
            "/group",
            f"/voice-note {note}",
        ],
        tmp_path,
    )
    in_topic = out.split(f"you [Trip]> /voice-note {note}\n")[1].split("you [Trip]> /topic\n")[0]
    assert in_topic.startswith("(sending hello.ogg as a voice note, ")
    assert "\nstepwise [Trip]> 🎙 I heard: “" in in_topic, in_topic
    as_eve = out.split(f"Eve> /voice-note {note}\n")[1].split("Eve> /as\n")[0]
    assert as_eve.endswith("(no turn: sender is not on the allowlist)\n"), as_eve
    in_group = out.split(f"you [group]> /voice-note {note}\n")[1]
    assert in_group.endswith("(no turn: not addressed to the bot)\n"), in_group


def test_ctrl_c_however_often_pressed_leaves_with_status_0(tmp_path: Path) -> None:
    """docs/local-mode.md: Ctrl-C ends the chat with status 0. Pressed again and again, one lands while the
    interpreter cleans up after the chat (most of a second), which must not end it by the signal (130)."""
    with subprocess.Popen(
        interpreter_chat_command(tmp_path),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        env=chat_env(),
    ) as process:
        assert process.stderr is not None
        while "ends the chat." not in process.stderr.readline():  # the banner: the stack is up
            assert process.poll() is None
        deadline = time.monotonic() + 60  # a chat that never leaves fails the test (SIGINT ignored, say)
        while process.poll() is None and time.monotonic() < deadline:
            process.send_signal(signal.SIGINT)
            time.sleep(0.05)
        if process.poll() is None:
            process.kill()
        err = process.stderr.read()
    assert process.returncode == 0 and "Traceback" not in err, err[-3000:]


def test_the_chat_loads_the_stack_only_once_it_can_take_a_ctrl_c() -> None:
    """Importing the chat's module loads neither moto nor the emulation: they load inside main(), where a
    Ctrl-C pressed while they load leaves with status 0 rather than a traceback."""
    stack = ("moto", "stepwise_local.emulation")
    probe = f"import sys, stepwise_local.chat; print(sorted(m for m in {stack!r} if m in sys.modules))"
    loaded = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT, env=chat_env(), check=True
    )
    assert loaded.stdout.strip() == "[]"


def test_an_account_at_the_example_notes_server_is_connected_and_its_tools_called(tmp_path: Path) -> None:
    """docs/accounts.md's run: /accounts, Connect (the link signed in at the example server, its callback on
    the chat's own HTTP server), then the notes tools called offline by their names, with that account."""
    process = subprocess.Popen(
        chat_command(tmp_path),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        cwd=ROOT,
        env=chat_env(STEPWISE_NOTES_PORT="0"),
    )
    assert process.stdin is not None and process.stdout is not None
    shown: list[str] = []

    def say(line: str, until: str) -> str:
        assert process.stdin is not None and process.stdout is not None
        process.stdin.write(line + "\n")
        process.stdin.flush()
        start = len(shown)
        while until not in "".join(shown[start:]):
            read = process.stdout.readline()
            assert read, "".join(shown)
            shown.append(read)
        return "".join(shown[start:])

    try:
        say("/accounts", "[1] Connect notes")
        link = re.search(r"opens a link\) (\S+)", say("1", "opens a link"))
        assert link is not None
        page = requests.get(sign_in(link.group(1), "Ann"), timeout=30)
        assert page.status_code == 200 and "Connected notes." in page.text
        say("/accounts", "notes: connected (since ")
        say('use notes__add_note text="buy oat milk"', "[1] Approve")
        assert "Noted for Ann: buy oat milk" in say("1", "Noted for Ann")
        assert "Ann's notes:\n1. buy oat milk" in say("use notes__list_notes", "1. buy oat milk")
    finally:
        process.stdin.close()
        process.wait(timeout=60)
    assert process.returncode == 0
    assert "".join(shown).count("stepwise> Connected notes.") == 1


def test_contact_writes_to_your_account_and_its_commands_are_text(tmp_path: Path) -> None:
    """/contact NAME: NAME's lines reach the bot as a contact's, "/reset" included (a contact reaches no
    command); the suggestion comes to your chat; Skip sends nothing; /me as yourself says how to use it."""
    out = chat(["/me", "/contact Ann", "/reset", "/me", "3", "list"], tmp_path)
    lines = out.splitlines()
    assert lines[:2] == ["you> /me", CONTACT_USAGE]
    assert "Ann> /reset" in lines and "stepwise> ✉️ Ann wrote:" in lines
    assert lines[lines.index("stepwise> ✉️ Ann wrote:") + 1] == "/reset", "their words, never a command"
    assert "Skipped: nothing was sent." in lines and "stepwise → Ann>" not in out
    assert lines[-2:] == ["you> list", "stepwise> No tasks."], "your own chat is as it was"


def test_a_contacts_suggestion_sent_with_its_button_shows_as_sent_to_them(tmp_path: Path) -> None:
    """/contact Ann connects your account once; Ann's line brings the suggestion to your chat with Send, Edit
    and Skip; /me, then Send: the reply shows once as sent to Ann, in your name; a second contact, Bo,
    writes through the same connection (no second welcome)."""
    out = chat(["/contact Ann", "Lunch tomorrow?", "/me", "1", "/contact Bo", "hi", "/me"], tmp_path)
    lines = out.splitlines()
    assert lines[0] == "you> /contact Ann"
    assert out.count("Secretary mode is on for your Telegram account.") == 1
    assert "Ann> Lunch tomorrow?" in lines and "stepwise> ✉️ Ann wrote:" in lines
    suggestion = lines.index("stepwise> ✉️ Ann wrote:")
    assert lines[suggestion + 1] == "Lunch tomorrow?" and lines[suggestion + 2] == "Suggested reply:"
    drafted = lines[suggestion + 3]
    buttons = lines.index("          [1] Send ✅  [2] Edit ✏️  [3] Skip ❌")
    assert suggestion < buttons < lines.index("Ann> /me") < lines.index("you> 1")
    assert [line for line in lines if line.startswith("stepwise → ")] == [f"stepwise → Ann> {drafted}"]
    assert lines.index(f"stepwise → Ann> {drafted}") > lines.index("you> 1")
    assert "✅ Sent to Ann." in lines
    assert "Bo> hi" in lines and "stepwise> ✉️ Bo wrote:" in lines
    assert lines[-2:] == ["Bo> /me", "(writing as yourself again)"]
