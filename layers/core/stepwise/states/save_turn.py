"""Storing the assistant's message with the tool calls of its turn (FinishTurn's second step)."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from stepwise.history.models import StoredMessage
from stepwise.turn_records.models import NewToken

if TYPE_CHECKING:
    from stepwise.services import TurnServices
    from stepwise.turn.ref import TurnRef
    from stepwise.turn_records.models import Reply

logger = logging.getLogger(__name__)


def save_reply(turn: TurnRef, reply: Reply | None, user_id: int, services: TurnServices) -> bool:
    """Store the reply as the assistant's message (idempotent). Canned error replies are not history."""
    if reply is None or reply.source == "error":
        logger.info("nothing to save", extra={"reason": "no reply" if reply is None else "error reply"})
        return False
    tool_calls = []
    for step in services.stores.turns.steps(turn.turn_id):
        results = {r["tool_use_id"]: r for r in step.tool_results}
        for block in step.tool_uses:
            result = results.get(block["id"])
            tool_calls.append(
                {
                    "id": block["id"],
                    "name": block["name"],
                    "input": block["input"],
                    "is_error": result is not None and result["is_error"],
                    "result": result["content"][:500] if result is not None else "",
                }
            )
    message = StoredMessage(
        id=reply.message_id,
        chat_id=turn.chat_id,
        topic=turn.topic,
        account=turn.account,
        role="assistant",
        content=_kept(reply),
        created_at=reply.created_at,
        turn_id=turn.turn_id,
        tool_calls=tool_calls,
    )
    if services.stores.messages.add(message):
        services.stores.chats.record_message(
            turn.conversation, user_id, services.settings.history.summary_due_at
        )
    return True


def _kept(reply: Reply) -> str:
    """What the history keeps of the reply: its text, or what stands for a new token's (never the token)."""
    if isinstance(reply.extra, NewToken) and reply.extra.revoked:
        return _never_delivered(reply.extra.connection)
    return reply.kept_text


def _never_delivered(name: str) -> str:
    """What the history keeps of a token's answer that never reached the chat (its connection is revoked)."""
    return (
        f"(A token named “{name}” for the MCP endpoint was made, but the message showing it never reached "
        f"this chat, so it was revoked and works nowhere. /connect {name} makes a new one.)"
    )
