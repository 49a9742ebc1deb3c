"""The README tells the truth about configuration and commands."""

from __future__ import annotations

import re

from support.tools import ROOT

from stepwise.config import Settings

README = (ROOT / "README.md").read_text()
MAKEFILE = (ROOT / "Makefile").read_text()


def test_every_setting_is_documented_in_the_configuration_table() -> None:
    table = README.split("## Configuration", 1)[1].split("\n## ", 1)[0]
    missing = [name.upper() for name in Settings.model_fields if f"`{name.upper()}" not in table]
    assert missing == []


def test_every_make_target_the_readme_mentions_exists() -> None:
    mentioned = set(re.findall(r"`make (\w+)", README)) | set(re.findall(r"^\s*make (\w+)", README, re.M))
    targets = set(re.findall(r"^(\w[\w-]*):", MAKEFILE, re.M))
    assert mentioned and mentioned <= targets, mentioned - targets


def test_the_readme_starts_with_the_two_commands() -> None:
    first_block = README.split("```", 2)[1]
    assert "make chat" in first_block and "make test" in first_block
