"""UseFallback: when the model API still fails after retries, the offline rules model may take over."""

from __future__ import annotations

from aws_lambda_powertools import Logger

from stepwise.model.rules import parse_intent
from stepwise.turn.contracts import FallbackOutput, SendErrorInput
from stepwise.turn.services import TurnServices

logger = Logger(child=True)


def use_fallback(request: SendErrorInput, services: TurnServices) -> FallbackOutput:
    """True (and the turn switches to the rules model) when FALLBACK_MODEL=rules and it understands the
    user's message; otherwise the friendly error stands."""
    if services.fallback_model != "rules":
        return FallbackOutput(use_fallback=False)
    meta = services.turns.get_meta(request.turn.turn_id)
    if meta.model_override == "rules":
        return FallbackOutput(use_fallback=False)
    history = services.messages.between(meta.chat_id, meta.last_key, meta.last_key)
    if not history or parse_intent(history[-1].content) is None:
        return FallbackOutput(use_fallback=False)
    services.turns.put_meta(meta.model_copy(update={"model_override": "rules"}))
    logger.warning("model failed; continuing the turn with the rules model", extra={"error": request.error})
    return FallbackOutput(use_fallback=True)
