"""LoadContext: store the user's message first, then fix the history window the model will see."""

from __future__ import annotations

from aws_lambda_powertools import Logger

from stepwise.history.models import StoredMessage
from stepwise.ids import iso_utc
from stepwise.memory.service import summary_key
from stepwise.telegram.errors import TelegramError
from stepwise.turn.contracts import LoadContextOutput, TurnStart
from stepwise.turn.services import TurnServices
from stepwise.turns.models import Memory, TurnMeta

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
    chat = (
        services.chats.record_message(turn.chat_id, turn.user_id, services.summary_due_at)
        if stored
        else services.chats.get(turn.chat_id)
    )  # a retried LoadContext: the message was counted already
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
            summary=chat.summary if chat else "",
            memories=recall_memories(services, turn.user_id, turn.chat_id, incoming.text),
        )
    )
    show_typing(services, turn.chat_id)
    logger.info("context loaded", extra={"stored": stored, "context_messages": len(window)})
    return LoadContextOutput(message_id=message.id, stored=stored, context_messages=len(window))


def recall_memories(services: TurnServices, user_id: int, chat_id: int, text: str) -> list[Memory]:
    """The user's memories nearest to the message. Best effort: without memory the turn still goes on.

    This chat's own summary is left out: the prompt shows the chat's rolling summary anyway.
    """
    if services.memory is None or services.memory_top_k <= 0:
        return []
    try:
        matches = services.memory.recall(user_id, text, services.memory_top_k + 1)
    except Exception as error:
        logger.warning("recall failed; continuing without memories", extra={"error": str(error)})
        return []
    own_summary = summary_key(chat_id)
    return [Memory(id=m.key, text=m.text) for m in matches if m.key != own_summary][: services.memory_top_k]


def show_typing(services: TurnServices, chat_id: int) -> None:
    """Best effort: a failed chat action never fails the turn."""
    try:
        services.telegram().send_chat_action(chat_id, "typing")
    except TelegramError as error:
        logger.warning("typing indicator failed", extra={"error": str(error)})
