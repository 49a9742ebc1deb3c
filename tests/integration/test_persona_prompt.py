"""The persona files reach the model through the real state machine: the shipped ones by default, another
folder with PERSONA_DIR."""

from __future__ import annotations

from pathlib import Path

from support.stack import Stack
from support.tools import ROOT


def system_text(stack: Stack) -> str:
    (system,) = stack.anthropic.requests[-1]["system"]
    assert system.get("cache_control") == {"type": "ephemeral"}, "the persona is in the cached block"
    return str(system["text"])


def test_the_model_gets_the_shipped_persona_in_its_system_prompt(stack: Stack) -> None:
    user = stack.new_user()
    stack.say(user, "hello")
    soul = (ROOT / "persona" / "SOUL.md").read_text(encoding="utf-8").strip()
    assert soul in system_text(stack)


def test_editing_the_persona_changes_what_the_model_is_told_without_code_changes(
    stack: Stack, tmp_path: Path
) -> None:
    (tmp_path / "SOUL.md").write_text("You are a patient Portuguese tutor.", encoding="utf-8")
    (tmp_path / "USER.md").write_text("- My name is Ada and I live in Porto.", encoding="utf-8")
    stack.emulation.config.env["PERSONA_DIR"] = str(tmp_path)
    user = stack.new_user()
    stack.say(user, "olá")
    text = system_text(stack)
    assert "You are a patient Portuguese tutor." in text and "My name is Ada" in text
    assert "You are warm, direct and practical" not in text
