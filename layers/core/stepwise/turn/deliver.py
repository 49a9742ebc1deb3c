"""SendReply / SendError: deliver the turn's reply to Telegram, resuming where a retried attempt stopped."""

from __future__ import annotations

from aws_lambda_powertools import Logger

from stepwise.ids import iso_utc
from stepwise.telegram.errors import TelegramBadRequest
from stepwise.telegram.formatting import render_reply
from stepwise.turn.contracts import DeliveryOutput, SendErrorInput, TurnInput, TurnRef
from stepwise.turn.services import TurnServices
from stepwise.turns.models import Reply

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
        chunk = chunks[index]
        try:
            services.telegram().send_message(turn.chat_id, chunk.html, parse_mode="HTML")
        except TelegramBadRequest as error:
            logger.warning("HTML rejected, sending plain text", extra={"error": str(error), "chunk": index})
            services.telegram().send_message(turn.chat_id, chunk.plain)
        services.turns.mark_sent(turn.turn_id, index + 1)
    logger.info("reply delivered", extra={"source": reply.source, "chunks": len(chunks)})
    return DeliveryOutput(source=reply.source, chunks=len(chunks), sent_chunks=len(chunks))


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
