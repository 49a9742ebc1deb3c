"""The persona: the assistant's character, facts about its owner and house rules, from Markdown files.

`persona/SOUL.md`, `USER.md`, `GROUP.md` and `AGENTS.md` ship in the layer (see docs/persona.md). They are
read once per container and go into the byte-stable system prompt, before its cache breakpoint, so editing
them changes the assistant's behaviour without a code change. `USER.md`, the owner's notes, goes to private
chats only and `GROUP.md`, notes for groups, to groups only (docs/groups.md): a group's prompt holds nobody's
personal notes. HTML comments (`<!-- … -->`) are left out; a missing or empty file is skipped; a file over
`MAX_PERSONA_FILE_CHARS` is refused with an error naming it.
"""

from __future__ import annotations

import re
from pathlib import Path

# Where the files ship: next to the `stepwise` package (the layer's python/persona; layers/core/persona here).
SHIPPED_PERSONA_DIR = Path(__file__).resolve().parent.parent.parent / "persona"
PERSONA_FILES = (
    ("SOUL.md", "## Character"),
    ("USER.md", "## About the user (written by the user)"),
    ("GROUP.md", "## About this group (written by the owner)"),
    ("AGENTS.md", "## House rules"),
)
PRIVATE_ONLY = "USER.md"  # the owner's notes: never in a group's prompt
GROUP_ONLY = "GROUP.md"  # notes for groups: never in a private chat's prompt
MAX_PERSONA_FILE_CHARS = 12_000  # about 3,000 tokens: each file, after comments are removed
_COMMENT = re.compile(r"<!--.*?-->", re.S)


class PersonaError(ValueError):
    """A persona file cannot be used (too large, or not UTF-8 text)."""


def read_persona_file(path: Path) -> str:
    """The file's text without HTML comments and surrounding blank space; "" when it is missing."""
    try:
        raw = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return ""
    except UnicodeDecodeError as error:
        raise PersonaError(f"persona file {path} is not UTF-8 text: {error}") from None
    text = _COMMENT.sub("", raw).strip()
    if len(text) > MAX_PERSONA_FILE_CHARS:
        raise PersonaError(
            f"persona file {path} has {len(text):,} characters, more than the limit of "
            f"{MAX_PERSONA_FILE_CHARS:,}: shorten it (it is sent with every model call)"
        )
    return text


def load_persona(directory: Path | None = None, *, group: bool = False) -> str:
    """The persona section of the system prompt from `directory` (the shipped folder by default): each
    non-empty file under its heading, in a fixed order; "" when every file is missing or empty. A private
    chat's (`group` false) has `USER.md` and not `GROUP.md`; a group's has `GROUP.md` and not `USER.md`."""
    folder = directory if directory is not None else SHIPPED_PERSONA_DIR
    left_out = PRIVATE_ONLY if group else GROUP_ONLY
    sections = []
    for name, heading in PERSONA_FILES:
        if name == left_out:
            continue
        text = read_persona_file(folder / name)
        if text:
            sections.append(f"{heading}\n{text}")
    return "\n\n".join(sections)
