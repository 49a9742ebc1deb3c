"""A fresh clone's first `make chat` / `make test` says what it is installing before the quiet minute."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from support.tools import ROOT, tool


def dry_run(target: str, tmp_path: Path) -> list[str]:
    """The commands `make <target>` would run on a fresh clone (no virtual environments yet)."""
    result = subprocess.run(
        [tool("make"), "--dry-run", target, f"VENV={tmp_path / 'venv'}", f"SAM_VENV={tmp_path / 'venv-sam'}"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    return result.stdout.splitlines()


def test_make_chat_on_a_fresh_clone_says_it_is_installing_before_it_starts(tmp_path: Path) -> None:
    commands = dry_run("chat", tmp_path)
    note = next(i for i, c in enumerate(commands) if "installing the development requirements" in c)
    creating = next(i for i, c in enumerate(commands) if " -m venv " in c)
    assert commands[note].startswith("echo ") and "first run only" in commands[note]
    installing = next(i for i, c in enumerate(commands) if "pip install --quiet --no-compile -r" in c)
    assert note < creating < installing


def test_make_test_on_a_fresh_clone_announces_both_environments(tmp_path: Path) -> None:
    commands = dry_run("test", tmp_path)
    # (a dry run shows them twice: `make test` makes both environments at once, then runs the checks)
    notes = list(dict.fromkeys(c for c in commands if c.startswith("echo ") and "first run only" in c))
    assert len(notes) == 2 and "the AWS SAM CLI" in notes[1]
    for venv in ("venv", "venv-sam"):
        note = next(i for i, c in enumerate(commands) if c.startswith(f'echo "Creating {tmp_path / venv} '))
        creating = next(i for i, c in enumerate(commands) if c.endswith(f"-m venv {tmp_path / venv}"))
        assert note < creating, "said before it is done"


@pytest.mark.parametrize("target", ["chat", "test"])
def test_without_python_3_13_make_says_in_one_line_what_to_install(tmp_path: Path, target: str) -> None:
    result = subprocess.run(
        [
            tool("make"),
            target,
            f"VENV={tmp_path / 'venv'}",
            f"SAM_VENV={tmp_path / 'venv-sam'}",
            f"PYTHON={tmp_path / 'no-such-python3.13'}",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert result.returncode != 0 and not (tmp_path / "venv").exists()
    (line,) = [line for line in result.stderr.splitlines() if "Python 3.13" in line]
    assert line.startswith("Python 3.13 is needed and was not found: install it")


def test_make_finds_a_python_3_13_by_itself() -> None:
    """`python3.13` on PATH when it runs, else pyenv's (on these machines pyenv selects another version, so
    the `python3.13` shim fails)."""
    result = subprocess.run(
        [tool("make"), "--no-print-directory", "-s", "-f", "Makefile", "-f", "-", "show-python"],
        input="show-python:\n\t@echo $(PYTHON)\n",
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
        env={k: v for k, v in os.environ.items() if k not in ("PYTHON", "PYENV_VERSION")},
    )
    found = result.stdout.strip()
    version = subprocess.run([found, "--version"], capture_output=True, text=True, check=True).stdout
    assert version.startswith("Python 3.13")
