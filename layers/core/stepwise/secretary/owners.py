"""An owner's secretary settings (issue 42, item 8; docs/secretary.md): whether secretary mode is off (it is
on until the owner turns it off with `/secretary off`), and the contacts they muted, each kept with the name
it was muted by: a first name (`Ada`, `Mary Ann`) or an @username (`@ada_l`), compared case-insensitively.
`should_draft` is what the webhook asks before it keeps or answers a contact's message.
"""

from __future__ import annotations

import re
from typing import NamedTuple

MAX_MUTED = 100  # an owner's muted contacts at most (the kept item stays small)
MAX_NAME_CHARS = 64  # Telegram's longest first name
_USERNAME = re.compile(r"@[A-Za-z0-9_]{1,32}")


class OwnerSettings(NamedTuple):
    """What an owner chose: secretary mode off (default on), and the names of the contacts they muted."""

    off: bool = False
    muted: tuple[str, ...] = ()  # as the owner spelled them, in the order of `muted_key`


def contact_name(text: str) -> str | None:
    """The name `/secretary mute <name>` names, spaces tidied: an @username (Telegram's characters, at most
    32) or a first name (at most 64 characters, not starting with @ or /); None when it is neither."""
    name = " ".join(text.split())
    if name.startswith("@"):
        return name if _USERNAME.fullmatch(name) else None
    if not name or name.startswith("/") or len(name) > MAX_NAME_CHARS:
        return None
    return name


def muted_key(name: str) -> str:
    """What a muted name is kept and compared under: case folded, spaces tidied (`@Ada_L`: `@ada_l`)."""
    return " ".join(name.split()).casefold()


def is_muted(settings: OwnerSettings, first_name: str, username: str | None) -> bool:
    """Whether a contact (their first name, their username) is among the owner's muted ones: an @username
    mutes that username, a name without @ that first name."""
    muted = {muted_key(name) for name in settings.muted}
    usernames = {name for name in muted if name.startswith("@")}
    if muted_key(first_name) in muted - usernames:
        return True
    return bool(username) and muted_key(f"@{username}") in usernames


def should_draft(settings: OwnerSettings, first_name: str, username: str | None) -> bool:
    """Whether a contact's message to the owner is kept and drafted a reply for: not while the owner turned
    secretary mode off, nor for a contact they muted."""
    return not settings.off and not is_muted(settings, first_name, username)
