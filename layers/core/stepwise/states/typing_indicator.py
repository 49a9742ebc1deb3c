"""The "typing…" indicator while a turn works on its answer (it lasts about five seconds in Telegram)."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from stepwise.telegram.errors import TelegramError

if TYPE_CHECKING:
    from stepwise.services import Outbound
    from stepwise.telegram.conversation import Conversation

logger = logging.getLogger(__name__)


def show_typing(outbound: Outbound, conversation: Conversation) -> None:
    """Best effort: a failed chat action never fails the turn. In a topic, it shows in the topic."""
    try:
        outbound.telegram().send_chat_action(
            conversation.chat_id, "typing", message_thread_id=conversation.topic
        )
    except TelegramError as error:
        logger.warning("typing indicator failed", extra={"error": str(error)})
