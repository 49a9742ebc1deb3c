"""SendReply / SendError: deliver the turn's reply to Telegram, resuming where a retried attempt stopped.

Each chunk is recorded as sent once Telegram confirms it. A chunk whose confirmation never came
(``TelegramDeliveryUncertainError``) is not recorded: a retried attempt sends it again, which shows it
twice if it had arrived after all. That is the chosen trade-off: a rare duplicate rather than a lost reply.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from aws_lambda_powertools import Logger

from stepwise.ids import iso_utc
from stepwise.states.contracts import DeliveryOutput, SendErrorInput, TurnInput, TurnRef
from stepwise.telegram.errors import TelegramBadRequest, TelegramDeliveryUncertainError
from stepwise.telegram.formatting import OutgoingChunk, render_reply
from stepwise.turn_records.models import Reply

if TYPE_CHECKING:
    from stepwise.states.services import TurnServices

logger = Logger(child=True)

FRIENDLY_ERROR = (
    "Sorry — I couldn't get an answer from my language model just now. "
    "Your message is saved; please try again in a minute."
)


class ReplyMissingError(RuntimeError):
    """SendReply ran for a turn that has no reply (a state machine wiring error)."""


def deliver_reply(turn: TurnRef, services: TurnServices) -> DeliveryOutput:
    """Send the reply's chunks not yet sent: HTML first, plain text when Telegram rejects the entities."""
    reply = services.turns.get_reply(turn.turn_id)
    if reply is None:
        raise ReplyMissingError(f"turn {turn.turn_id} has no reply to send")
    chunks = render_reply(reply.text)
    for index in range(reply.sent_chunks, len(chunks)):
        try:
            _send_chunk(turn.chat_id, chunks[index], index, services)
        except TelegramDeliveryUncertainError:
            logger.warning(
                "no confirmation from Telegram: a retry sends this chunk again, which may show it twice",
                extra={"chunk": index, "chunks": len(chunks)},
            )
            raise
        services.turns.mark_sent(turn.turn_id, index + 1)
    logger.info("reply delivered", extra={"source": reply.source, "chunks": len(chunks)})
    return DeliveryOutput(source=reply.source, chunks=len(chunks), sent_chunks=len(chunks))


def _send_chunk(chat_id: int, chunk: OutgoingChunk, index: int, services: TurnServices) -> None:
    try:
        services.telegram().send_message(chat_id, chunk.html, parse_mode="HTML")
    except TelegramBadRequest as error:
        logger.warning("HTML rejected, sending plain text", extra={"error": str(error), "chunk": index})
        services.telegram().send_message(chat_id, chunk.plain)


def deliver_reply_state(request: TurnInput, services: TurnServices) -> DeliveryOutput:
    """SendReply's entry point."""
    return deliver_reply(request.turn, services)


def deliver_error(request: SendErrorInput, services: TurnServices) -> DeliveryOutput:
    """The model failed after its retries: tell the user briefly; the turn still ends cleanly."""
    logger.warning("model failed, sending the error reply", extra={"error": request.error})
    now = iso_utc(services.clock())
    services.turns.put_reply(
        request.turn.turn_id,
        Reply(text=FRIENDLY_ERROR, source="error", message_id=services.new_id(), created_at=now),
    )
    return deliver_reply(request.turn, services)
