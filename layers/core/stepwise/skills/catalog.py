"""The skills of a deployment: loaded once per container from `skills/` in the layer (or `SKILLS_DIR`).

Progressive disclosure: the cached system prompt lists each skill's name and description only
(`prompt_section`, sorted, the same bytes every turn); the `use_skill` tool returns a skill's instructions
and reads its resource files when the model decides it needs them. A folder that breaks a rule of the format
is skipped with one warning naming it and the problem, never an error.
"""

from __future__ import annotations

import logging
from functools import cached_property
from pathlib import Path

from stepwise.skills.loader import MAX_RESOURCE_CHARS, Skill, SkillInvalid, load_skill

logger = logging.getLogger(__name__)

# Where the skills ship: next to the `stepwise` package (the layer's python/skills; layers/core/skills here).
SHIPPED_SKILLS_DIR = Path(__file__).resolve().parent.parent.parent / "skills"
USE_SKILL = "use_skill"


class ResourceError(ValueError):
    """A resource that cannot be read (unknown, outside the skill's folder, too large, not text)."""


class SkillCatalog:
    """The valid skills of a folder, read on first use and kept."""

    def __init__(self, directory: Path | None = None) -> None:
        self.directory = directory if directory is not None else SHIPPED_SKILLS_DIR

    @cached_property
    def skills(self) -> dict[str, Skill]:
        """The valid skills by name, sorted; each invalid folder logged once and left out."""
        found: dict[str, Skill] = {}
        folders = sorted(self.directory.iterdir()) if self.directory.is_dir() else []
        for folder in folders:
            if not folder.is_dir() or folder.name.startswith("."):
                continue
            try:
                skill = load_skill(folder)
            except (SkillInvalid, OSError) as error:
                logger.warning(f"skill folder {folder.name!r} skipped: {error}")
                continue
            found[skill.name] = skill
        return found

    def names(self) -> list[str]:
        return list(self.skills)

    def get(self, name: str) -> Skill | None:
        return self.skills.get(name)

    @cached_property
    def prompt_section(self) -> str:
        """The system prompt's skills section: each skill's name and description, sorted; "" without
        skills."""
        if not self.skills:
            return ""
        lines = [
            "## Skills",
            f"Skills are instructions for particular jobs. When a request matches one, call {USE_SKILL} with "
            "its name before anything else, then follow what it returns (it may list resource files, read "
            f"with {USE_SKILL} too).",
        ]
        lines += [f"- {skill.name}: {' '.join(skill.description.split())}" for skill in self.skills.values()]
        return "\n".join(lines)


def read_resource(skill: Skill, resource: str) -> str:
    """The text of one of the skill's resource files; ResourceError when it is not one of them (an absolute
    path, `..`, a hidden file or a link out of the folder never is), too large or not UTF-8 text."""
    if resource not in skill.resources:
        listed = ", ".join(skill.resources) or "none"
        raise ResourceError(f"{skill.name} has no resource {resource!r} (its resources: {listed})")
    path = skill.folder / resource
    root = skill.folder.resolve()
    if not path.resolve().is_relative_to(root):  # the file was replaced by a link since loading
        raise ResourceError(f"{resource!r} is outside the skill's folder")
    try:
        if path.stat().st_size > MAX_RESOURCE_CHARS * 4:  # UTF-8: at most 4 bytes a character
            raise ResourceError(f"{resource!r} is longer than {MAX_RESOURCE_CHARS:,} characters")
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise ResourceError(f"{resource!r} is not UTF-8 text") from None
    except OSError as error:
        raise ResourceError(f"{resource!r} cannot be read: {error.strerror}") from None
    if len(text) > MAX_RESOURCE_CHARS:
        raise ResourceError(f"{resource!r} is longer than {MAX_RESOURCE_CHARS:,} characters")
    return text
