"""The owner's one line when their daily token budget is spent and contacts still write (issue 42, item 9):
"3 people wrote; no suggestions until tomorrow: daily budget." One message a day, edited as more write."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING
from zoneinfo import ZoneInfo

from stepwise.telegram.errors import TelegramError

if TYPE_CHECKING:
    from stepwise.secretary.kinds import ContactWrote
    from stepwise.services import TurnServices
    from stepwise.turn_records.models import TurnMeta

logger = logging.getLogger(__name__)


def over_budget_line(names: list[str]) -> str:
    """ "Ann wrote; …", "Ann and Bob wrote; …", "3 people wrote (Ann, Bob, Cy); …"."""
    if len(names) == 1:
        who = f"{names[0]} wrote"
    elif len(names) == 2:
        who = f"{names[0]} and {names[1]} wrote"
    else:
        who = f"{len(names)} people wrote ({', '.join(names)})"
    return f"{who}; no suggestions until tomorrow: daily budget."


def tell_owner_over_budget(meta: TurnMeta, kind: ContactWrote, services: TurnServices) -> None:
    """Note the contact and tell the owner (a new line the first time that day, else the same one edited)."""
    suggestions = services.stores.suggestions
    owner = meta.scope.owner
    if suggestions is None:
        return
    day = services.clock().astimezone(ZoneInfo(meta.timezone)).date().isoformat()
    names, message_id = suggestions.note_over_budget(owner, day, kind.contact)
    telegram = services.outbound.telegram()
    try:
        if message_id is None:
            suggestions.set_budget_message(owner, day, telegram.send_message(owner, over_budget_line(names)))
        else:
            telegram.edit_message_text(owner, message_id, over_budget_line(names))
    except TelegramError as error:
        logger.warning("could not tell the owner the budget is spent", extra={"error": str(error)})
    logger.info("daily token budget reached; no suggestion", extra={"people": len(names)})
