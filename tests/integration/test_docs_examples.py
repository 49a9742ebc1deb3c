"""The piped `make chat` examples of the README and docs/*.md, each run exactly as printed (through a shell,
in the repository root, offline) and its output held against what the docs show (tests/support/
docs_examples.py says how). The docs are the source of truth: change an example there and this runs it.

`make chat` in an example runs the Makefile's recipe, `python -m stepwise_local.chat`, forked from this
worker's chat launcher (`support.chat_launcher`: the same module run as `__main__` on the shell's pipes,
without an interpreter's start each)."""

from __future__ import annotations

import difflib
import os
import re
import shlex
import subprocess
import sys

import pytest
from support import chat_launcher
from support.docs_examples import Example, examples, normalized
from support.docs_examples import matches as shows
from support.tools import ROOT

from stepwise_local.chat import PARAMETER_VARIABLES

PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
EXAMPLES = examples(PAGES, ROOT)
# The host's settings that would change what the chat does or shows (the offline model needs no key).
UNSET = ("ANTHROPIC_", "AWS_", "STEPWISE_", "VOICE_", *PARAMETER_VARIABLES)
MAKE_CHAT = re.compile(r"(?<![\w-])make chat(?=\s|$)")
CHAT_MODULE = " -m stepwise_local.chat"


def makefile_chat_recipe() -> str:
    """What `make chat` runs, from the Makefile (its one recipe line), with this interpreter as the venv's."""
    makefile = (ROOT / "Makefile").read_text()
    recipe = re.search(r"^chat:[^\n]*\n((?:\t[^\n]*\n)+)", makefile, re.M)
    assert recipe is not None, "the Makefile has no chat target"
    (line,) = recipe.group(1).strip().splitlines()
    command = line.strip().lstrip("@").replace("$(BIN)/python", shlex.quote(sys.executable))
    assert "$(" not in command, f"the chat recipe uses a make variable the test does not know: {line}"
    return command


def shell_command(example: Example) -> str:
    """The example's command line; `make chat` in it runs what the Makefile's target runs (never make
    itself, so a test never lets make reinstall the virtual environment it runs from), through the
    launcher."""
    recipe = makefile_chat_recipe()
    assert recipe == shlex.quote(sys.executable) + CHAT_MODULE, f"the chat recipe changed: {recipe}"
    launched = shlex.join(chat_launcher.shared().command)
    return MAKE_CHAT.sub(lambda _match: launched, example.command)


def environment() -> dict[str, str]:
    env = {name: value for name, value in os.environ.items() if not name.startswith(UNSET)}
    env["PYTHONPATH"] = os.pathsep.join(["layers/core", "."])  # as the Makefile exports it
    env["TZ"] = "UTC"  # this machine's zone (the chat's own zone is what /clock and reminders print)
    env["STEPWISE_MCP_PORT"] = "0"  # a chat already running on this machine keeps port 8765
    env.update(chat_launcher.shared().env)
    return env


def test_the_readme_and_local_mode_have_piped_examples() -> None:
    sources = {example.source.split(":")[0] for example in EXAMPLES}
    assert {"README.md", "docs/local-mode.md"} <= sources, EXAMPLES
    assert all(example.output for example in EXAMPLES), "an example shows no output"
    assert not any("sleep" in example.command for example in EXAMPLES), "piped input needs no pauses"


@pytest.mark.parametrize("example", EXAMPLES, ids=[example.source for example in EXAMPLES])
def test_a_piped_example_prints_what_the_docs_show(example: Example) -> None:
    result = subprocess.run(
        shell_command(example),
        shell=True,
        cwd=ROOT,
        env=environment(),
        capture_output=True,
        text=True,
        timeout=110,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert "Traceback" not in result.stderr, result.stderr[-3000:]
    assert result.stdout.startswith("you> "), "the chat's own output starts with the first line it read"
    diff = "\n".join(
        difflib.unified_diff(
            [normalized(line) for line in example.output],
            [normalized(line) for line in result.stdout.splitlines()],
            f"{example.source} (normalized)",
            "the chat's output (normalized)",
            lineterm="",
        )
    )
    if not shows(example.output, result.stdout):
        pytest.fail(f"$ {example.command}\n{diff}", pytrace=False)


BAD_SETTING = "HISTORY_LIMIT=500 make chat"


def shown_output(page: str, command: str) -> list[str]:
    """The lines a page's code block shows after `$ <command>`, up to the block's end."""
    lines = (ROOT / page).read_text().splitlines()
    start = lines.index(f"$ {command}") + 1
    end = next(n for n in range(start, len(lines)) if lines[n].startswith("```"))
    return lines[start:end]


def test_the_bad_setting_example_prints_what_local_mode_shows_make_line_included() -> None:
    # make itself runs (its own error line is part of the example), told not to remake the virtual
    # environment; not as a sub-make of `make test`, whose level would show as "make[1]"
    env = {k: v for k, v in environment().items() if k not in ("MAKELEVEL", "MAKEFLAGS", "MFLAGS")}
    command = BAD_SETTING.replace("make chat", "make -o .venv/.installed-py313 chat")
    result = subprocess.run(
        command, shell=True, cwd=ROOT, env=env, capture_output=True, text=True, timeout=110, check=False
    )
    assert result.returncode == 2 and result.stdout == ""
    shown = shown_output("docs/local-mode.md", BAD_SETTING)
    printed = result.stderr.splitlines()
    gnu_make_4 = subprocess.run(["make", "--version"], capture_output=True, text=True).stdout
    if not gnu_make_4.startswith("GNU Make 4"):  # another make words its line its own way
        shown, printed = shown[:-1], printed[:-1]
    assert printed == shown
