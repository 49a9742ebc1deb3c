"""Reading and validating one skill folder: `SKILL.md` (YAML front matter, then the instructions) and its
resource files, as the Agent Skills format defines them (https://agentskills.io/specification).

A folder that breaks a rule raises `SkillInvalid` with the problem in words; the catalog logs it and skips
the folder. Stricter than the format in one point: a name is ASCII (a-z, 0-9 and hyphens).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

SKILL_FILE = "SKILL.md"
MAX_NAME_CHARS = 64
MAX_DESCRIPTION_CHARS = 1024
MAX_COMPATIBILITY_CHARS = 500
# The body and each resource must fit in one tool result (8,000 characters, see stepwise.tools.registry).
MAX_BODY_CHARS = 6000
MAX_RESOURCE_CHARS = 7000
MAX_RESOURCES = 50
FIELDS = frozenset({"name", "description", "license", "compatibility", "metadata", "allowed-tools"})
_NAME = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
_FRONT_MATTER = re.compile(r"\A---[ \t]*\r?\n(?P<yaml>.*?)^---[ \t]*$(?P<body>.*)\Z", re.S | re.M)


class SkillInvalid(ValueError):
    """A skill folder that breaks a rule of the format (the message says which)."""


@dataclass(frozen=True)
class Skill:
    """One valid skill: its name and description (what the prompt lists), its instructions, and the paths
    of its resource files relative to its folder (POSIX, sorted)."""

    name: str
    description: str
    body: str
    folder: Path
    resources: tuple[str, ...] = ()


def load_skill(folder: Path) -> Skill:
    """The skill in `folder`; SkillInvalid when it breaks a rule."""
    try:
        text = (folder / SKILL_FILE).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise SkillInvalid(f"no {SKILL_FILE}") from None
    except UnicodeDecodeError:
        raise SkillInvalid(f"{SKILL_FILE} is not UTF-8 text") from None
    fields, body = split_front_matter(text)
    name = _text_field(fields, "name")
    description = _text_field(fields, "description")
    check_fields(fields, name, description, folder.name)
    if len(body) > MAX_BODY_CHARS:
        raise SkillInvalid(
            f"the body has {len(body):,} characters, more than the limit of {MAX_BODY_CHARS:,}"
        )
    return Skill(name, description, body, folder, find_resources(folder))


def split_front_matter(text: str) -> tuple[dict[str, Any], str]:
    """The front matter's fields and the body (stripped); SkillInvalid without a YAML mapping between two
    `---` lines at the start."""
    match = _FRONT_MATTER.match(text.lstrip("\ufeff"))
    if match is None:
        raise SkillInvalid(f"{SKILL_FILE} does not start with YAML front matter between --- lines")
    try:
        fields = yaml.safe_load(match.group("yaml"))
    except yaml.YAMLError as error:
        problem = " ".join(str(error).split())
        raise SkillInvalid(f"the front matter is not valid YAML: {problem}") from None
    if not isinstance(fields, dict):
        raise SkillInvalid("the front matter is not a YAML mapping of fields")
    return fields, match.group("body").strip()


def check_fields(fields: dict[str, Any], name: str, description: str, folder_name: str) -> None:
    """The format's rules for the front matter's fields; SkillInvalid naming the first one broken."""
    unknown = sorted(str(key) for key in fields if key not in FIELDS)
    if unknown:
        raise SkillInvalid(
            f"unknown front matter fields {', '.join(unknown)} (allowed: {', '.join(sorted(FIELDS))})"
        )
    if len(name) > MAX_NAME_CHARS or not _NAME.match(name):
        raise SkillInvalid(
            f"the name {name!r} is not 1-{MAX_NAME_CHARS} lowercase letters, digits and single hyphens "
            "(not first or last)"
        )
    if name != folder_name:
        raise SkillInvalid(f"the name {name!r} is not the folder's name")
    if len(description) > MAX_DESCRIPTION_CHARS:
        raise SkillInvalid(
            f"the description has {len(description):,} characters, more than {MAX_DESCRIPTION_CHARS:,}"
        )
    compatibility = fields.get("compatibility")
    if compatibility is not None and (
        not isinstance(compatibility, str) or len(compatibility) > MAX_COMPATIBILITY_CHARS
    ):
        raise SkillInvalid(f"compatibility is not a text of at most {MAX_COMPATIBILITY_CHARS} characters")
    metadata = fields.get("metadata")
    if metadata is not None and not isinstance(metadata, dict):
        raise SkillInvalid("metadata is not a mapping")


def _text_field(fields: dict[str, Any], key: str) -> str:
    value = fields.get(key)
    if value is None:
        raise SkillInvalid(f"the front matter has no {key}")
    if not isinstance(value, str) or not value.strip():
        raise SkillInvalid(f"the {key} is not a non-empty text")
    return value.strip()


def find_resources(folder: Path) -> tuple[str, ...]:
    """The folder's files other than SKILL.md (hidden ones and links out of the folder left out), as
    relative POSIX paths, sorted; SkillInvalid when there are more than MAX_RESOURCES."""
    root = folder.resolve()
    found = []
    for path in sorted(folder.rglob("*")):
        relative = path.relative_to(folder)
        if relative.as_posix() == SKILL_FILE or any(part.startswith(".") for part in relative.parts):
            continue
        if path.is_file() and path.resolve().is_relative_to(root):
            found.append(relative.as_posix())
    if len(found) > MAX_RESOURCES:
        raise SkillInvalid(f"{len(found)} resource files, more than {MAX_RESOURCES}")
    return tuple(found)
