"""`make chat`'s secretary mode (docs/secretary.md): `/contact NAME` writes as NAME, someone who writes to
your Telegram account, and `/me` goes back to you.

On first use the chat connects the bot to your account as Telegram would (a `business_connection` update
to the webhook, and the local Bot API told of the connection); each line typed as a contact is then a
`business_message` in that contact's chat (and opens Telegram's 24 hours in which the bot may reply there).
Its suggested reply shows in your chat with its buttons (Send, Edit, Skip): `/me`, then the button's number
or label, presses it. What the bot sends through the connection is printed as `stepwise → NAME> …`.
"""

from __future__ import annotations

import json
import zlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from stepwise_local import updates

if TYPE_CHECKING:
    from stepwise_local.emulation import Emulation
    from stepwise_local.telegram_server import FakeBotApi

LOCAL_CONNECTION = "bc-local"
CONTACT_BASE = 700_000_000  # contacts' ids: never on the allowlist, never a member of the local group
CONTACT_USAGE = (
    "(usage: /contact NAME writes as NAME, someone who writes to your Telegram account; /me is you)"
)


@dataclass(frozen=True)
class Contact:
    """Someone who writes to your account (/contact NAME): their id and first name."""

    user_id: int
    name: str


def contact_named(name: str) -> Contact:
    """The same id for the same name, run after run (the contact's chat keeps its history)."""
    return Contact(CONTACT_BASE + zlib.crc32(name.casefold().encode()) % 10_000_000, name)


def connect_account(emulation: Emulation, telegram: FakeBotApi, user_id: int) -> str:
    """Connect the bot to your account, as Telegram tells it; returns what the webhook did."""
    telegram.add_business_connection(LOCAL_CONNECTION, user_id)
    answer = emulation.post_update(updates.business_connection(user_id, connection_id=LOCAL_CONNECTION))
    return str(answer.get("headers", {}).get("x-stepwise-action", ""))


def contact_message(contact: Contact, text: str, telegram: FakeBotApi) -> dict[str, Any]:
    """The update of `contact` writing `text` to your account (the bot may reply for 24 hours after it)."""
    telegram.contact_wrote(LOCAL_CONNECTION, contact.user_id)
    return updates.business_message(
        contact.user_id, text, connection_id=LOCAL_CONNECTION, first_name=contact.name
    )


def webhook_detail(answer: dict[str, Any]) -> str:
    return str(json.loads(answer.get("body") or "{}").get("detail", ""))
