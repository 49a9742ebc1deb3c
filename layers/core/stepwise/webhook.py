"""The webhook's decisions: authenticate, parse, filter, keep the message in its chat's inbox, start turns."""

import hmac
import logging
from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, Literal, NamedTuple

from pydantic import BaseModel, ConfigDict, ValidationError

from stepwise.approvals.models import PressAction
from stepwise.history.forwarded import Forwarded, forwarded_from
from stepwise.inbox.arrival_typing import typing_on_arrival
from stepwise.inbox.models import QueuedMessage
from stepwise.media.intake import MediaLimits, attachment_of
from stepwise.telegram.addressing import (
    BotIdentity,
    addressed,
    in_group,
    might_be_addressed,
    without_leading_mention,
)
from stepwise.telegram.commands import is_command
from stepwise.telegram.conversation import Scope, conversation_of
from stepwise.telegram.errors import TelegramError
from stepwise.telegram.models import CallbackQuery, Message, Update
from stepwise.turn.ids import iso_utc, new_id, utc_now

if TYPE_CHECKING:
    from stepwise.approvals.lifecycle import PressServices
    from stepwise.chats.store import ChatStore
    from stepwise.inbox.sequencer import Sequencer
    from stepwise.secretary.connections import BusinessConnectionStore
    from stepwise.secretary.intake import Intake
    from stepwise.telegram.client import TelegramClient
    from stepwise.telegram.models import BusinessConnection
    from stepwise.warmups.warmer import Warmups

logger = logging.getLogger(__name__)
MAX_SENDER_NAME = 64  # a member's first name as the model sees it (Telegram's are at most 64 characters)
MAX_CHAT_TITLE = 128  # a group's title (Telegram's are at most 128 characters)

Action = (
    Literal[
        "started",
        "queued",
        "duplicate",
        "ignored",
        "not_allowed",
        "unauthorized",
        "forbidden",
        "invalid",
        "topic_noted",
        "unavailable",
        "connection_noted",
        "owner_answered",
        "edited",
    ]
    | PressAction
)
# The update types the webhook acts on; `make webhook` asks Telegram for exactly these.
HANDLED_UPDATES = (
    "message",
    "callback_query",
    # secretary mode (docs/secretary.md)
    "business_connection",
    "business_message",
    "edited_business_message",
    "deleted_business_messages",
)
SECRET_HEADER = "x-telegram-bot-api-secret-token"  # noqa: S105 (a header name)
ACTION_HEADER = "x-stepwise-action"  # what the webhook did, in every answer (its body may be a Bot API call)


class WebhookOutcome(BaseModel):
    """What the webhook did, and the HTTP status it answers with."""

    model_config = ConfigDict(defer_build=True)

    status: int
    action: Action
    detail: str = ""
    update_id: int | None = None
    chat_id: int | None = None
    topic: int | None = None  # the message's topic (its message_thread_id), None outside any
    typing: bool = False  # the answer asks Telegram for "typing…" (stepwise.inbox.arrival_typing)


class WebhookServices(NamedTuple):
    """What the webhook needs: the secret, the allowlist, the chats' inboxes and a way to settle approvals."""

    secret: str
    allowed_users: frozenset[int]
    sequencer: "Callable[[], Sequencer]"  # built after the warm-ups of a quiet stack have left
    presses: "Callable[[], PressServices]"  # built for a button press only
    clock: Callable[[], datetime] = utc_now
    new_id: Callable[[], str] = new_id
    media_limits: MediaLimits = MediaLimits()
    warmups: "Warmups | None" = None  # the containers a quiet chat's turn will need (stepwise.warmups.warmer)
    chats: "Callable[[], ChatStore] | None" = None  # for topics Telegram named (forum_topic_created)
    # Groups (docs/groups.md): the groups served (empty: any), "mentions" or "all", who the bot is (getMe)
    allowed_chats: frozenset[int] = frozenset()
    group_replies: Literal["mentions", "all"] = "mentions"
    bot: "Callable[[], BotIdentity] | None" = None
    # Secretary mode (docs/secretary.md): the business connections' store (None in it: not deployed)
    business: "Callable[[], BusinessConnectionStore | None] | None" = None
    telegram: "Callable[[], TelegramClient] | None" = None  # to tell an owner about their connection
    # ... and the rest of what a contact's message, the owner's answer in person and Edit need
    secretary: "Callable[[], Intake | None] | None" = None


def secret_matches(received: str | None, expected: str) -> bool:
    """Constant-time comparison of the secret header (any string, lone surrogates included, compares)."""
    if received is None:
        return False
    return hmac.compare_digest(_utf8(received), _utf8(expected))


def _utf8(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")


def handle_update(secret_header: str | None, body: str | None, services: WebhookServices) -> WebhookOutcome:
    """Decide what one webhook request does. Never raises for bad input."""
    if secret_header is None:
        return WebhookOutcome(status=401, action="unauthorized", detail="missing secret token")
    if not secret_matches(secret_header, services.secret):
        return WebhookOutcome(status=403, action="forbidden", detail="wrong secret token")
    try:
        update = Update.model_validate_json(body or "")
    except ValidationError as error:
        return _dropped("body is not a Telegram update", error)
    if update.callback_query is not None:
        return _handle_press(update.update_id, update.callback_query, services)
    if update.business_connection is not None:
        return _business_connection(update.update_id, update.business_connection, services)
    if update.business_message or update.edited_business_message or update.deleted_business_messages:
        return _business_update(update.update_id, update, services)
    message = update.message
    if message is not None and (
        message.forum_topic_created is not None or message.forum_topic_edited is not None
    ):
        return _topic_service_message(update.update_id, message, services)
    attachment = attachment_of(message, services.media_limits) if message is not None else None
    if message is None or (message.text is None and attachment is None) or message.from_user is None:
        return WebhookOutcome(
            status=200, action="ignored", detail="unsupported update type", update_id=update.update_id
        )
    conversation = conversation_of(message)
    sender, ids = message.from_user, {"update_id": update.update_id, "chat_id": message.chat.id}
    if conversation.topic is not None:
        ids["topic"] = conversation.topic
    group = in_group(message)
    if group and services.allowed_chats and message.chat.id not in services.allowed_chats:
        logger.info("group not served", extra=ids)
        return WebhookOutcome(status=200, action="ignored", detail="group not served", **ids)
    # sender_chat: a channel posting in the group, or an anonymous admin (`from` is then a placeholder)
    if sender.is_bot or sender.id not in services.allowed_users or message.sender_chat is not None:
        logger.info("sender not allowed", extra={"user_id": sender.id, **ids})
        return WebhookOutcome(
            status=200, action="not_allowed", detail="sender is not on the allowlist", **ids
        )
    text = message.text if message.text is not None else message.caption or ""
    if group:
        bot = _bot_if_addressed(message, services)
        if isinstance(bot, WebhookOutcome):
            return bot.model_copy(update=ids)
        if bot is not None:
            text = without_leading_mention(text, bot)
        elif services.group_replies == "mentions":
            return WebhookOutcome(status=200, action="ignored", detail="not addressed to the bot", **ids)
    # an owner's own text for a suggested reply answers the bot's Edit prompt (secretary mode)
    answers_prompt = not group and message.reply_to_message is not None and services.secretary is not None
    if answers_prompt and (reply_taken := _edit_reply(message, services)) is not None:
        return reply_taken.model_copy(update=ids)
    scope = Scope(
        conversation, sender.id, (sender.first_name[:MAX_SENDER_NAME] or "Member") if group else None
    )
    queued = QueuedMessage(
        chat_id=scope.conversation.chat_id,
        topic=scope.conversation.topic,
        update_id=update.update_id,
        user_id=scope.user_id,
        id=services.new_id(),
        text=text,
        sender=scope.sender,
        chat_title=(message.chat.title or "")[:MAX_CHAT_TITLE] or None if group else None,
        attachment=attachment,
        forwarded=_forwarded(message),
        received_at=iso_utc(services.clock()),
        telegram_message_id=message.message_id,
    )
    warmups, command = services.warmups, is_command(queued.text) and queued.forwarded is None
    early = None  # after a quiet spell of the whole stack, the warm-ups leave before the admission's requests
    if warmups is not None and warmups.container_was_quiet(services.clock()):
        early = warmups.begin(warmups.wanted(None, queued.text, command))
    try:
        admission = services.sequencer().admission(queued)
        if admission.action == "duplicate":
            logger.info("duplicate update", extra=ids)
            return WebhookOutcome(status=200, action="duplicate", detail="update already handled", **ids)
        logger.info("message admitted", extra={"admitted": admission.action, **ids})
        if admission.action == "started" and warmups is not None and early is None:  # the turn runs already
            warmups.send(warmups.wanted(admission.idle_seconds, queued.text, command))
    finally:
        if early is not None:
            early.finish()
    return WebhookOutcome(status=200, action=admission.action, typing=typing_on_arrival(queued), **ids)


def _forwarded(message: Message) -> Forwarded | None:
    """A forwarded message's stored origin."""
    if message.forward_origin is None:
        return None
    return forwarded_from(message.forward_origin)


def _bot_if_addressed(message: Message, services: WebhookServices) -> "BotIdentity | WebhookOutcome | None":
    """The bot, when a group message addresses it (getMe is asked only when the message could); None when it
    does not; an `unavailable` outcome when getMe fails (answered 503: Telegram delivers the update again)."""
    if services.bot is None or not might_be_addressed(message):
        return None

    try:
        bot = services.bot()
    except TelegramError as error:
        logger.warning("getMe failed: the update is asked for again", extra={"error": str(error)})
        return WebhookOutcome(status=503, action="unavailable", detail="cannot tell who the bot is yet")
    return bot if addressed(message, bot) else None


def _dropped(what: str, error: ValidationError, update_id: int | None = None) -> WebhookOutcome:
    """A body that will never validate, logged and answered 200, not 400: Telegram redelivers every non-2xx
    answer for hours."""
    reason = invalid_reason(error)
    logger.warning("%s; dropped", what, extra={"reason": reason})
    return WebhookOutcome(status=200, action="invalid", detail=f"{what}: {reason}", update_id=update_id)


def invalid_reason(error: ValidationError, shown: int = 3) -> str:
    """Why a body failed validation, by field and error type only (never the values: they may be private)."""
    problems = [
        f"{'.'.join(str(part) for part in item['loc']) or 'body'}: {item['type']}"
        for item in error.errors(include_url=False, include_input=False)[:shown]
    ]
    more = error.error_count() - len(problems)
    return "; ".join(problems) + (f" (and {more} more)" if more > 0 else "")


def _topic_service_message(update_id: int, message: Message, services: WebhookServices) -> WebhookOutcome:
    """A topic was opened or renamed. A topic Telegram named itself (`is_name_implicit`) waits for a name,
    which its first answer gives it (`states.topic_name`); one its user named (or renamed) keeps its name.
    Nothing to answer: no turn."""
    created = message.forum_topic_created
    conversation = conversation_of(message)
    ids = {"update_id": update_id, "chat_id": message.chat.id, "topic": conversation.topic}
    sender = message.from_user
    if (
        services.chats is None
        or (in_group(message) and services.allowed_chats and message.chat.id not in services.allowed_chats)
        or conversation.topic is None
        or sender is None
        or sender.is_bot
        or sender.id not in services.allowed_users
    ):
        return WebhookOutcome(status=200, action="ignored", detail="topic service message", **ids)
    unnamed = created is not None and created.is_name_implicit
    if created is not None and not unnamed:
        return WebhookOutcome(status=200, action="ignored", detail="topic named by its user", **ids)
    services.chats().set_topic_unnamed(conversation, unnamed)
    logger.info("topic noted", extra={"unnamed": unnamed, **ids})
    return WebhookOutcome(
        status=200, action="topic_noted", detail="waits for a name" if unnamed else "named", **ids
    )


def _business_connection(
    update_id: int, connection: "BusinessConnection", services: WebhookServices
) -> WebhookOutcome:
    """The bot connected to (or disconnected from) a person's business account: kept and told for someone on
    the allowlist (`stepwise.secretary.connections`); ignored where secretary mode is not deployed."""
    ids = {"update_id": update_id, "chat_id": connection.user_chat_id}
    store = services.business() if services.business is not None else None
    if store is None or services.telegram is None:
        return WebhookOutcome(status=200, action="ignored", detail="secretary mode is not deployed", **ids)

    from stepwise.secretary.connections import on_business_connection  # secretary mode: only its updates

    outcome = on_business_connection(connection, services.allowed_users, store, services.telegram())
    intake = services.secretary() if services.secretary is not None else None
    stopped = not (connection.is_enabled and connection.may_reply)
    if stopped and outcome not in ("ignored", "unavailable") and intake is not None:
        from stepwise.secretary.intake import STOPPED_NOTE, withdraw_all

        withdraw_all(connection.user.id, connection.id, STOPPED_NOTE, intake)
    if outcome == "unavailable":  # the owner was not told: Telegram delivers the update again
        return WebhookOutcome(status=503, action="unavailable", detail="the owner could not be told", **ids)
    if outcome == "ignored":
        return WebhookOutcome(status=200, action="ignored", detail="business connection not kept", **ids)
    return WebhookOutcome(status=200, action="connection_noted", detail=outcome, **ids)


def _business_update(update_id: int, update: Update, services: WebhookServices) -> WebhookOutcome:
    """A message, an edit or a deletion in a chat of a connected business account
    (`stepwise.secretary.intake`): a contact's message starts a secretary turn, the owner's own withdraws the
    chat's suggestion. One naming an unknown or disabled connection, or one whose owner is no longer on the
    allowlist, starts nothing."""
    message = update.business_message or update.edited_business_message
    deleted = update.deleted_business_messages
    where = message or deleted
    assert where is not None  # the caller routes only these updates here
    ids = {"update_id": update_id, "chat_id": where.chat.id}
    intake = services.secretary() if services.secretary is not None else None
    if intake is None:
        return WebhookOutcome(status=200, action="ignored", detail="secretary mode is not deployed", **ids)

    from stepwise.secretary import intake as secretary  # secretary mode: only its updates
    from stepwise.secretary.connections import active_connection

    connection = active_connection(intake.connections, where.business_connection_id, services.allowed_users)
    if connection is None:
        return WebhookOutcome(
            status=200, action="ignored", detail="unknown or disabled business connection", **ids
        )
    why = ""
    if update.business_message is not None:
        taken, why = secretary.take_business_message(update_id, update.business_message, connection, intake)
    elif update.edited_business_message is not None:
        taken = secretary.take_business_edit(update.edited_business_message, connection, intake)
    else:
        assert deleted is not None
        removed = secretary.take_business_deletion(deleted.chat.id, deleted.message_ids, connection, intake)
        taken = "edited" if removed else "ignored"
    logger.info("business update", extra={"taken": taken, **ids})
    return WebhookOutcome(status=200, action=taken, detail=why, **ids)


def _edit_reply(message: Message, services: WebhookServices) -> WebhookOutcome | None:
    """The owner's reply to an Edit prompt, or None when the message answers none."""
    intake = services.secretary() if services.secretary is not None else None
    if intake is None:
        return None

    from stepwise.secretary.intake import take_edit_reply  # secretary mode: only a reply to the bot

    if not take_edit_reply(message, intake):
        return None
    return WebhookOutcome(status=200, action="edited", detail="the suggestion's text replaced")


def _handle_press(update_id: int, query: CallbackQuery, services: WebhookServices) -> WebhookOutcome:
    """A button press on an approval request (or on a suggested reply's Edit)."""
    chat_id = query.message.chat.id if query.message else None
    ids = {"update_id": update_id, "chat_id": chat_id}
    if (query.data or "").startswith("se:") and services.secretary is not None:
        return _press_edit(query, services).model_copy(update=ids)

    # the approvals' lifecycle: only a button press, never on a message's way to its first draft
    from stepwise.approvals.lifecycle import handle_press

    outcome = handle_press(query, services.presses(), services.allowed_users)
    logger.info("button pressed", extra={"action": outcome.action, "user_id": query.from_user.id, **ids})
    return WebhookOutcome(status=200, action=outcome.action, detail=outcome.answer, **ids)


def _press_edit(query: CallbackQuery, services: WebhookServices) -> WebhookOutcome:
    """Edit on a suggested reply: the owner is asked for their own text."""
    intake = services.secretary() if services.secretary is not None else None
    from stepwise.approvals.lifecycle import NOT_ACTIVE
    from stepwise.secretary.intake import press_edit

    answer = NOT_ACTIVE
    approval_id = (query.data or "")[3:]
    if intake is not None and 1 <= len(approval_id) <= 40:
        answer = press_edit(query, approval_id, intake)
    telegram = services.telegram() if services.telegram is not None else None
    if telegram is not None:
        try:
            telegram.answer_callback_query(query.id, answer)
        except TelegramError as error:
            logger.warning("answerCallbackQuery failed", extra={"error": str(error)})
    return WebhookOutcome(status=200, action="ignored" if answer == NOT_ACTIVE else "edited", detail=answer)
