"""/secretary: secretary mode's state and the owner's settings (issue 42, item 8; docs/secretary.md).

`/secretary` shows whether the person's Telegram account is connected (and whether the bot may reply in its
chats), whether secretary mode is on or off, the contacts they muted, and the chats whose suggested reply
waits for their tap;
`/secretary off` and `/secretary on` turn it off and back on; `/secretary mute <name>` and
`/secretary unmute <name>` mute a contact by first name or @username, in any case. In a group it points to the
private chat (the command is `personal`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from stepwise.secretary.owners import MAX_MUTED, contact_name, muted_key

if TYPE_CHECKING:
    from stepwise.commands.handlers import CommandRequest
    from stepwise.secretary.connections import BusinessConnectionStore, SecretaryConnection
    from stepwise.secretary.suggestions import Suggestion

NOT_DEPLOYED = "Secretary mode is not set up in this deployment."
USAGE = (
    "/secretary shows secretary mode; /secretary off or on turns it off or on; /secretary mute <name> or "
    "unmute <name> (a first name or @username) mutes or unmutes a contact."
)
NOT_CONNECTED = (
    "not connected (to connect it: Telegram's Settings → Telegram Business → Chatbots, and add me there)"
)
CONNECTED = "connected, and I may reply in its chats"
DISABLED = "connected but switched off in Telegram's Business settings"
CANNOT_REPLY = "connected, but I may not reply in its chats (Telegram's Business settings)"
NO_SUGGESTIONS = "No pending suggestions."
TURNED_OFF = (
    "Secretary mode is off: messages people send you are neither kept nor answered until /secretary on."
)
TURNED_ON = "Secretary mode is on: people who write to you get a suggested reply here."


def secretary(request: CommandRequest) -> str:
    """The state, or one of the settings changed (see the module docstring)."""
    store = request.services.stores.secretary
    if store is None:
        return NOT_DEPLOYED
    owner = request.meta.user_id
    words = request.args.split(maxsplit=1)
    if not words:
        suggestions = request.services.stores.suggestions
        waiting = [s for s in suggestions.of_owner(owner) if s.status == "pending"] if suggestions else []
        return _state(store, owner, waiting)
    action, rest = words[0].casefold(), words[1] if len(words) == 2 else ""
    if action in ("on", "off") and not rest:
        return _switch(store, owner, off=action == "off")
    name = contact_name(rest)
    if action == "mute" and name is not None:
        return _mute(store, owner, name)
    if action == "unmute" and name is not None:
        if store.unmute(owner, name):
            return f"Unmuted {name}: their messages get a suggested reply again."
        return f"{name} is not muted."
    return USAGE


def _state(store: BusinessConnectionStore, owner: int, waiting: list[Suggestion]) -> str:
    settings = store.owner_settings(owner)
    mode = "off (messages people send you are neither kept nor answered)" if settings.off else "on"
    muted = ", ".join(settings.muted) if settings.muted else "nobody"
    return "\n".join(
        (
            f"Secretary mode: {mode}.",
            f"Your Telegram account: {_connection_state(store.of_owner(owner))}.",
            f"Muted: {muted}.",
            _pending(waiting),
            "",
            USAGE,
        )
    )


def _pending(waiting: list[Suggestion]) -> str:
    """The chats whose suggested reply waits for the owner's tap, oldest first."""
    if not waiting:
        return NO_SUGGESTIONS
    names = [s.contact or "someone" for s in sorted(waiting, key=lambda s: s.created_at)]
    return (
        f"Suggested replies waiting for your tap: {', '.join(names)} (their messages above have the buttons)."
    )


def _connection_state(connections: list[SecretaryConnection]) -> str:
    """The state of the connection that counts: one that is active, else the newest."""
    if not connections:
        return NOT_CONNECTED
    newest = max(connections, key=lambda connection: (connection.active, connection.date))
    if newest.active:
        return CONNECTED
    return DISABLED if not newest.enabled else CANNOT_REPLY


def _switch(store: BusinessConnectionStore, owner: int, *, off: bool) -> str:
    if not store.set_off(owner, off):
        return f"Secretary mode is {'off' if off else 'on'} already."
    return TURNED_OFF if off else TURNED_ON


def _mute(store: BusinessConnectionStore, owner: int, name: str) -> str:
    muted = store.owner_settings(owner).muted
    if muted_key(name) in {muted_key(kept) for kept in muted}:
        return f"{name} is muted already."
    if len(muted) >= MAX_MUTED:
        return f"You have muted {MAX_MUTED} contacts, the most: unmute one first."
    if not store.mute(owner, name):
        return f"{name} is muted already."
    return f"Muted {name}: their messages get no suggested reply (/secretary unmute {name} undoes it)."
