"""Business connections: a person on the allowlist connects the bot to their Telegram Business account
(issue 42, docs/secretary.md). The webhook hands each `business_connection` update to
`on_business_connection`, which keeps the connection and tells its owner, once, what happens now: welcomed
when it first arrives enabled, told why when it stops (disabled, or the right to reply taken away), told when
it is back. Anyone else's connection, and a first one that arrives disabled, is ignored: nothing kept.

Each line is said at most once: a flag on the kept connection is claimed with a conditional write before the
line is sent, and given back when Telegram refuses it (the webhook then answers 503 and Telegram delivers the
update again). A crash between the claim and the send loses that one line rather than risk saying it twice.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Literal, NamedTuple, Protocol

from stepwise.telegram.errors import TelegramError

if TYPE_CHECKING:
    from stepwise.secretary.owners import OwnerSettings
    from stepwise.telegram.client import TelegramClient
    from stepwise.telegram.models import BusinessConnection

logger = logging.getLogger(__name__)

WELCOME = (
    "Secretary mode is on for your Telegram account. People who write to you will get a suggested reply "
    "here; nothing is sent without your tap."
)
STOPPED = "Secretary mode stopped: {why}. No suggestions until it is back on (Telegram's Business settings)."
DISCONNECTED = "the bot was disconnected from your account"
CANNOT_REPLY = "the bot may no longer reply in your chats"
BACK = "Secretary mode is back on: people who write to you will get a suggested reply here again."
NOT_YET = (
    "Stepwise is connected to your Telegram account but may not reply in your chats: allow it to reply "
    "(Telegram's Business settings, Chatbots) to get suggested replies here."
)

# What the webhook did with a `business_connection` update.
ConnectionOutcome = Literal["welcomed", "stopped", "resumed", "kept", "ignored", "unavailable"]
Flag = Literal["welcomed", "stop_told"]


class SecretaryConnection(NamedTuple):
    """A kept business connection: whose account, where its owner talks to the bot, and what was said."""

    connection_id: str
    owner_id: int
    owner_chat_id: int  # the owner's private chat with the bot (`user_chat_id`)
    owner_name: str
    may_reply: bool
    enabled: bool
    date: int  # the newest update's `date` applied (an older one delivered late changes nothing)
    welcomed: bool = False
    stop_told: bool = False  # the owner was told suggestions stopped (for the stop that lasts now)

    @property
    def active(self) -> bool:
        """Whether suggestions may be made for its chats: enabled, and the bot may reply."""
        return self.enabled and self.may_reply


class BusinessConnectionStore(Protocol):
    """Business connections by id, and their owners' settings (`stepwise.secretary.owners`).
    Implementations: DynamoDB (SecretaryTable) and in memory."""

    def get(self, connection_id: str) -> SecretaryConnection | None:
        """The kept connection, or None."""
        ...

    def save(self, connection: SecretaryConnection) -> None:
        """Keep the connection's state (owner, rights, enabled, date), its flags as they are kept (False for a
        new one); an update older than the kept one (`date`) changes nothing."""
        ...

    def claim(self, connection_id: str, flag: Flag, value: bool) -> bool:
        """Set the flag to `value` if it is not already: True for the one call that changed it."""
        ...

    def of_owner(self, owner_id: int) -> list[SecretaryConnection]:
        """The kept connections of the owner's account (every one `save` kept), in no particular order."""
        ...

    def owner_settings(self, owner_id: int) -> OwnerSettings:
        """What the owner chose (the defaults when they never chose anything)."""
        ...

    def set_off(self, owner_id: int, off: bool) -> bool:
        """Turn the owner's secretary mode off (or back on): True when that changed it."""
        ...

    def mute(self, owner_id: int, name: str) -> bool:
        """Mute a contact by that name (`owners.muted_key`): True when it was not muted already."""
        ...

    def unmute(self, owner_id: int, name: str) -> bool:
        """Unmute the contact muted by that name, in any case: True when it was muted."""
        ...


def on_business_connection(
    update: BusinessConnection,
    allowed_users: frozenset[int],
    store: BusinessConnectionStore,
    telegram: TelegramClient,
) -> ConnectionOutcome:
    """Keep a connection of someone on the allowlist and tell them, once, what it means (module docstring);
    `unavailable` when Telegram refused the line (the flag is given back: the update is asked for again)."""
    owner = update.user
    if owner.is_bot or owner.id not in allowed_users:
        logger.info("business connection of someone not allowed: ignored", extra={"user_id": owner.id})
        return "ignored"
    if not update.is_enabled and store.get(update.id) is None:  # read only when it could matter
        logger.info("business connection that arrives disabled: ignored", extra={"user_id": owner.id})
        return "ignored"
    store.save(
        SecretaryConnection(
            connection_id=update.id,
            owner_id=owner.id,
            owner_chat_id=update.user_chat_id,
            owner_name=owner.first_name,
            may_reply=update.may_reply,
            enabled=update.is_enabled,
            date=update.date,
        )
    )
    kept = store.get(update.id)
    if kept is None:  # gone between the write and the read: nothing to say
        return "kept"
    if kept.active and not kept.welcomed:
        said = _say(store, telegram, kept, "welcomed", True, WELCOME, "welcomed")
        if said == "welcomed":  # a stop told before the first welcome (NOT_YET) is over with it
            store.claim(kept.connection_id, "stop_told", False)
        return said
    if kept.active and kept.stop_told:
        return _say(store, telegram, kept, "stop_told", False, BACK, "resumed")
    if not kept.active and not kept.stop_told:
        if not kept.welcomed:  # connected, but without the right to reply from the start
            return _say(store, telegram, kept, "stop_told", True, NOT_YET, "stopped")
        why = DISCONNECTED if not kept.enabled else CANNOT_REPLY
        return _say(store, telegram, kept, "stop_told", True, STOPPED.format(why=why), "stopped")
    return "kept"


def active_connection(
    store: BusinessConnectionStore, connection_id: str | None, allowed_users: frozenset[int]
) -> SecretaryConnection | None:
    """The kept connection a business update names, when suggestions may be made for it; None when it is
    unknown (never kept), disabled, may not reply, or its owner is no longer on the allowlist: such an update
    starts nothing."""
    if not connection_id:
        return None
    kept = store.get(connection_id)
    return kept if kept is not None and kept.active and kept.owner_id in allowed_users else None


def _say(
    store: BusinessConnectionStore,
    telegram: TelegramClient,
    kept: SecretaryConnection,
    flag: Flag,
    value: bool,
    text: str,
    outcome: ConnectionOutcome,
) -> ConnectionOutcome:
    if not store.claim(kept.connection_id, flag, value):
        return "kept"  # another delivery of the update said it
    try:
        telegram.send_message(kept.owner_chat_id, text)
    except TelegramError as error:
        store.claim(kept.connection_id, flag, not value)
        logger.warning(
            "the owner could not be told: the update is asked for again", extra={"error": str(error)}
        )
        return "unavailable"
    logger.info("business connection noted", extra={"outcome": outcome, "user_id": kept.owner_id})
    return outcome
