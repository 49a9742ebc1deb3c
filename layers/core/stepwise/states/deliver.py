"""Delivering the turn's reply to Telegram, resuming where a retry stopped (FinishTurn's first step).

Each chunk is recorded as sent once Telegram confirms it. A chunk whose confirmation never came
(``TelegramDeliveryUncertainError``) is not recorded: a retried attempt sends it again, which shows it
twice if it had arrived after all. That is the chosen trade-off: a rare duplicate rather than a lost reply.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from stepwise.telegram.conversation import Conversation
from stepwise.telegram.errors import TelegramBadRequest, TelegramDeliveryUncertainError
from stepwise.telegram.formatting import OutgoingChunk, render_reply
from stepwise.telegram.keyboard import InlineKeyboardButton, InlineKeyboardMarkup
from stepwise.turn.ids import iso_utc
from stepwise.turn_records.models import AppButton, LinkButtons, NewTopic, Reply

if TYPE_CHECKING:
    from stepwise.services import TurnServices
    from stepwise.telegram.keyboard import InlineKeyboardMarkup
    from stepwise.turn.ref import TurnRef

logger = logging.getLogger(__name__)

FRIENDLY_ERROR = (
    "Sorry — I couldn't get an answer from my language model just now. "
    "Your message is saved; please try again in a minute."
)


def put_error_reply(turn: TurnRef, error: str | None, services: TurnServices) -> None:
    """The turn failed (the model after its retries, or a state for good): its reply is a short apology.
    A reply whose sending had begun is kept (`put_reply` does not replace it)."""
    logger.warning("the turn failed, sending the error reply", extra={"error": error})
    now = iso_utc(services.clock())
    services.stores.turns.put_reply(
        turn.turn_id, Reply(text=FRIENDLY_ERROR, source="error", message_id=services.new_id(), created_at=now)
    )


def deliver_reply(turn: TurnRef, reply: Reply, services: TurnServices) -> int:
    """Send the reply's chunks not yet sent: HTML first, plain text when Telegram rejects the entities.
    Returns how many chunks the reply has (all sent)."""
    chunks = render_reply(reply.text)
    where = turn.conversation  # or the topic /new opened (`states.topics.open_topic`)
    if isinstance(reply.extra, NewTopic) and reply.extra.thread is not None:
        where = Conversation(turn.chat_id, reply.extra.thread)
    for index in range(reply.sent_chunks, len(chunks)):
        last = index == len(chunks) - 1
        try:
            _send_chunk(where, chunks[index], index, services, _keyboard(reply) if last else None)
        except TelegramDeliveryUncertainError:
            logger.warning(
                "no confirmation from Telegram: a retry sends this chunk again, which may show it twice",
                extra={"chunk": index, "chunks": len(chunks)},
            )
            raise
        services.stores.turns.mark_sent(turn.turn_id, index + 1)
    logger.info("reply delivered", extra={"source": reply.source, "chunks": len(chunks)})
    return len(chunks)


def _keyboard(reply: Reply) -> InlineKeyboardMarkup | None:
    """The buttons under the reply's last chunk: /app's, which opens the Mini App, or links (/accounts')."""
    match reply.extra:
        case AppButton(text=text, url=url):
            return InlineKeyboardMarkup(inline_keyboard=[[InlineKeyboardButton(text=text, web_app_url=url)]])
        case LinkButtons(buttons=buttons) if buttons:
            rows = [[InlineKeyboardButton(text=button.text, url=button.url)] for button in buttons]
            return InlineKeyboardMarkup(inline_keyboard=rows)
        case _:
            return None


def _send_chunk(
    where: Conversation,
    chunk: OutgoingChunk,
    index: int,
    services: TurnServices,
    keyboard: InlineKeyboardMarkup | None = None,
) -> None:
    """One chunk (the last with its keyboard, if any), in the turn's topic (if any; a deleted topic's goes to
    the main chat, see `stepwise.telegram.client.gone_topic_note`), without a link preview unless
    LINK_PREVIEWS is on (docs/security.md)."""
    chat_id, thread = where.chat_id, where.topic
    previews = services.settings.delivery.link_previews
    telegram = services.outbound.telegram()
    try:
        telegram.send_message(
            chat_id,
            chunk.html,
            parse_mode="HTML",
            reply_markup=keyboard,
            message_thread_id=thread,
            link_previews=previews,
        )
    except TelegramBadRequest as error:
        logger.warning("HTML rejected, sending plain text", extra={"error": str(error), "chunk": index})
        telegram.send_message(
            chat_id, chunk.plain, reply_markup=keyboard, message_thread_id=thread, link_previews=previews
        )
