"""The persona files: what they put into the system prompt, and what they refuse."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.tools import ROOT

from stepwise.config import Settings
from stepwise.prompt.persona import (
    MAX_PERSONA_FILE_CHARS,
    SHIPPED_PERSONA_DIR,
    PersonaError,
    load_persona,
)
from stepwise.prompt.system import build_system_prompt
from stepwise.runtime import Runtime


def persona_dir(tmp_path: Path, **files: str) -> Path:
    for name, text in files.items():
        (tmp_path / f"{name}.md").write_text(text, encoding="utf-8")
    return tmp_path


def test_the_shipped_persona_is_the_repository_folder_and_gives_the_assistant_its_character() -> None:
    assert SHIPPED_PERSONA_DIR.resolve() == (ROOT / "persona").resolve()
    persona = load_persona()
    soul = (ROOT / "persona" / "SOUL.md").read_text(encoding="utf-8").strip()
    assert persona.startswith(f"## Character\n{soul}")
    assert "## House rules" in persona
    assert "## About the user" not in persona, "the shipped USER.md is only a commented template"


def test_the_persona_sits_in_the_cached_system_block_before_the_context_note_and_tools() -> None:
    persona = load_persona()
    (system,) = build_system_prompt([], persona)
    text = system["text"]
    assert system["cache_control"] == {"type": "ephemeral"}
    assert text.index("You are Stepwise") < text.index(persona) < text.index("## Context")
    assert build_system_prompt([], load_persona()) == [system], "byte-stable"


def test_a_different_persona_folder_gives_a_different_system_prompt(tmp_path: Path) -> None:
    mine = persona_dir(tmp_path, SOUL="You are a pirate. Answer in pirate speak.", USER="- My name is Ada.")
    runtime = Runtime(Settings(persona_dir=str(mine)))
    (system,) = build_system_prompt([], runtime.persona)
    (shipped,) = build_system_prompt([], load_persona())
    assert "You are a pirate" in system["text"] and "My name is Ada" in system["text"]
    assert system["text"] != shipped["text"]


def test_the_persona_is_read_once_per_container(tmp_path: Path) -> None:
    folder = persona_dir(tmp_path, SOUL="Calm.")
    runtime = Runtime(Settings(persona_dir=str(folder)))
    first = runtime.persona
    (folder / "SOUL.md").write_text("Excited!", encoding="utf-8")
    assert runtime.persona == first == "## Character\nCalm."
    assert Runtime(Settings(persona_dir=str(folder))).persona == "## Character\nExcited!", "a new container"


def test_a_blank_persona_dir_setting_means_the_shipped_folder() -> None:
    assert Runtime(Settings(persona_dir=" ")).persona == load_persona()


def test_missing_empty_and_comment_only_files_are_skipped(tmp_path: Path) -> None:
    folder = persona_dir(tmp_path, SOUL="  \n", USER="<!-- - Name: Alex -->\n", AGENTS="Be brief.")
    assert load_persona(folder) == "## House rules\nBe brief."
    assert load_persona(tmp_path / "nowhere") == ""
    (system,) = build_system_prompt([], load_persona(tmp_path / "nowhere"))
    assert "\n\n\n" not in system["text"]


def test_comments_are_left_out_and_the_rest_kept(tmp_path: Path) -> None:
    folder = persona_dir(tmp_path, USER="<!-- how to fill this in -->\n- I live in Porto.\n<!-- more -->")
    assert load_persona(folder) == "## About the user (written by the user)\n- I live in Porto."


def test_a_file_over_the_limit_is_refused_with_an_error_naming_it(tmp_path: Path) -> None:
    folder = persona_dir(tmp_path, SOUL="ok", USER="x" * (MAX_PERSONA_FILE_CHARS + 1))
    with pytest.raises(PersonaError, match=r"USER\.md has 12,001 characters, more than the limit of 12,000"):
        Runtime(Settings(persona_dir=str(folder))).persona  # noqa: B018 (the property reads the files)


def test_a_file_that_is_not_text_is_refused(tmp_path: Path) -> None:
    (tmp_path / "AGENTS.md").write_bytes(b"\xff\xfe rules")
    with pytest.raises(PersonaError, match=r"AGENTS\.md is not UTF-8 text"):
        load_persona(tmp_path)


def test_the_shipped_files_are_within_the_limit() -> None:
    for name in ("SOUL.md", "USER.md", "AGENTS.md"):
        assert len((ROOT / "persona" / name).read_text(encoding="utf-8")) <= MAX_PERSONA_FILE_CHARS
