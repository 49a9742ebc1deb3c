"""LoadContext: store the user's message first, then fix the history window the model will see."""

from __future__ import annotations

from aws_lambda_powertools import Logger

from stepwise.history.models import StoredMessage
from stepwise.ids import iso_utc
from stepwise.telegram.errors import TelegramError
from stepwise.turn.contracts import LoadContextOutput, TurnStart
from stepwise.turn.services import TurnServices
from stepwise.turns.models import TurnMeta

logger = Logger(child=True)


def load_context(start: TurnStart, services: TurnServices) -> LoadContextOutput:
    """Persist the message (idempotent per update); fix the newest `history_limit` messages as the window."""
    turn, incoming = start.turn, start.message
    message = StoredMessage(
        id=incoming.id,
        chat_id=turn.chat_id,
        role="user",
        content=incoming.text,
        created_at=incoming.created_at,
        turn_id=turn.turn_id,
        update_id=turn.update_id,
    )
    stored = services.messages.add(message)
    window = [
        m
        for m in services.messages.recent(turn.chat_id, services.history_limit)
        if m.sort_key <= message.sort_key
    ]
    services.turns.put_meta(
        TurnMeta(
            turn_id=turn.turn_id,
            chat_id=turn.chat_id,
            user_id=turn.user_id,
            update_id=turn.update_id,
            user_message_id=message.id,
            first_key=window[0].sort_key,
            last_key=message.sort_key,
            created_at=iso_utc(services.clock()),
        )
    )
    show_typing(services, turn.chat_id)
    logger.info("context loaded", extra={"stored": stored, "context_messages": len(window)})
    return LoadContextOutput(message_id=message.id, stored=stored, context_messages=len(window))


def show_typing(services: TurnServices, chat_id: int) -> None:
    """Best effort: a failed chat action never fails the turn."""
    try:
        services.telegram().send_chat_action(chat_id, "typing")
    except TelegramError as error:
        logger.warning("typing indicator failed", extra={"error": str(error)})
