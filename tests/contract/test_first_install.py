"""A fresh clone's first `make chat` / `make test` says what it is installing before the quiet minute."""

from __future__ import annotations

import subprocess
from pathlib import Path

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
    assert note < creating < next(i for i, c in enumerate(commands) if "pip install --quiet -r" in c)


def test_make_test_on_a_fresh_clone_announces_both_environments(tmp_path: Path) -> None:
    commands = dry_run("test", tmp_path)
    notes = [c for c in commands if c.startswith("echo ") and "first run only" in c]
    assert len(notes) == 2 and "the AWS SAM CLI" in notes[1]
    for venv in ("venv", "venv-sam"):
        note = next(i for i, c in enumerate(commands) if c.startswith(f'echo "Creating {tmp_path / venv} '))
        assert commands[note + 1].endswith(f"-m venv {tmp_path / venv}")
