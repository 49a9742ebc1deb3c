"""`make chat` end to end: a subprocess fed through stdin, offline model, the real state machine."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from support.tools import ROOT

from stepwise_local.anthropic_server import FakeAnthropic, last_user_text, text


def chat(lines: list[str], tmp_path: Path, **extra_env: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "AWS_"))}
    env.update(extra_env)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "layers" / "core"), str(ROOT)])
    result = subprocess.run(
        [sys.executable, "-m", "stepwise_local.chat", "--log", str(tmp_path / "chat.log")],
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


def test_hello_gets_an_answer(tmp_path: Path) -> None:
    out = chat(["hello"], tmp_path)
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
        "Delete task #1 “buy milk”.",
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


def test_deny_in_the_chat_keeps_the_task(tmp_path: Path) -> None:
    out = chat(["add water plants", "delete 1", "deny", "list"], tmp_path)
    assert "❌ Denied — nothing was changed." in out
    assert out.rstrip().endswith("#1 [ ] water plants")


def test_memory_works_offline_in_the_chat(tmp_path: Path) -> None:
    out = chat(
        [
            "my sister Anna lives in Lisbon",
            "remember that I take my coffee black",
            "/summarize",
            "what do you remember about coffee",
            "tell me about Anna",
        ],
        tmp_path,
    )
    assert "stepwise> Remembered (fact-" in out
    assert "(memory: summarized 1 chat(s), 4 message(s))" in out
    recalled = out.split("you> what do you remember about coffee\n")[1].split("you>")[0]
    assert "I take my coffee black" in recalled
    fallback = out.split("you> tell me about Anna\n")[1]
    assert "here is what I remember" in fallback and "Anna lives in Lisbon" in fallback


def test_the_clock_command_shows_and_moves_the_emulated_time(tmp_path: Path) -> None:
    out = chat(["/clock", "/clock +1h30m", "/clock soon", "/clock +2d", "hello"], tmp_path)
    lines = out.splitlines()
    assert lines[0] == "you> /clock" and re.fullmatch(r"\(clock: .+, the real time\)", lines[1])
    assert lines[2] == "you> /clock +1h30m" and lines[3].endswith(", 1h30m ahead of the real time)")
    assert lines[4] == "you> /clock soon" and lines[5].startswith("(usage: /clock")
    assert lines[6] == "you> /clock +2d" and lines[7].endswith(", 2d1h30m ahead of the real time)")
    assert lines[8] == "you> hello" and lines[9].startswith("stepwise> Hello! I'm Stepwise")
