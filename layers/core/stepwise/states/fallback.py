"""UseFallback: when the model API still fails after retries, the offline rules model may take over."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from stepwise.secretary.kinds import ContactWrote
from stepwise.states.contracts.base import Next
from stepwise.states.contracts.fallback import FallbackInput

if TYPE_CHECKING:
    from stepwise.services import TurnServices

logger = logging.getLogger(__name__)

MAX_FALLBACK_DECISIONS = 3


def use_fallback(request: FallbackInput, services: TurnServices) -> Next:
    """Route `model` (and the turn switches to the rules model) when FALLBACK_MODEL=rules and it understands
    the user's message, or drafts a reply to a contact; otherwise route `error`: the friendly error stands."""
    give_up = Next(route="error")
    if services.settings.model.fallback != "rules":
        return give_up
    meta = services.stores.turns.get_meta(request.turn.turn_id)
    if meta.fallback_decisions >= MAX_FALLBACK_DECISIONS:
        return give_up  # the rules model itself keeps failing: no loop
    history = services.stores.messages.between(meta.conversation, meta.last_key, meta.last_key)
    # the offline rules model: only a turn Claude cannot answer
    from stepwise.offline.api import parse_intent

    # a contact's message (secretary mode) gets the rules' neutral draft, which the owner may edit or skip
    drafts = isinstance(meta.kind, ContactWrote)
    if not drafts and (not history or parse_intent(history[-1].content) is None):
        return give_up
    # Counted rather than refused once set: a retried UseFallback (its Lambda died after this write) must
    # decide the same way.
    services.stores.turns.put_meta(
        meta.model_copy(update={"fallback": True, "fallback_decisions": meta.fallback_decisions + 1})
    )
    logger.warning("model failed; continuing the turn with the rules model", extra={"error": request.error})
    return request.next.model_copy(update={"route": "model", "wait_seconds": 0})
