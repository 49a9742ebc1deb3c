"""What the webhook does with secretary mode's updates (issue 42, docs/secretary.md), once the connection they
name is known to be active:

- a contact's `business_message` is queued in that chat's own conversation (`Conversation.account`) as a
  `ContactWrote`, which starts (or joins) a secretary turn, unless the owner turned secretary mode off or
  muted that contact;
- the owner's own message in that chat is kept as the owner's side of the history, starts nothing, and
  withdraws the chat's pending suggestion ("You answered yourself");
- a message the bot itself sent through the connection (`sender_business_bot`) starts nothing;
- Edit on a suggestion asks the owner for their own text (a message they reply to); their reply replaces the
  suggestion, shown again with its buttons, and starts no turn.
"""

from __future__ import annotations

import logging
from datetime import datetime
from typing import TYPE_CHECKING, Literal, NamedTuple

from stepwise.approvals.lifecycle import NOT_YOURS, PressServices, withdraw
from stepwise.history.models import StoredMessage
from stepwise.inbox.models import QueuedMessage
from stepwise.secretary.kinds import MAX_CONTACT_NAME, ContactWrote
from stepwise.secretary.owners import should_draft
from stepwise.secretary.wording import (
    MAX_REPLY_CHARS,
    edit_prompt,
    settled_html,
    shortened,
    suggestion_html,
    suggestion_keyboard,
)
from stepwise.telegram.conversation import Conversation
from stepwise.telegram.errors import TelegramError
from stepwise.telegram.keyboard import ForceReply
from stepwise.turn.ids import iso_utc

if TYPE_CHECKING:
    from collections.abc import Callable

    from stepwise.history.repository import MessageRepository
    from stepwise.inbox.sequencer import Sequencer
    from stepwise.secretary.connections import BusinessConnectionStore, SecretaryConnection
    from stepwise.secretary.suggestions import SuggestionStore
    from stepwise.telegram.client import TelegramClient
    from stepwise.telegram.models import CallbackQuery, Message

logger = logging.getLogger(__name__)

ANSWERED_YOURSELF = "You answered yourself: nothing was sent."
NOT_TEXT = "(sent something that is not text)"
EDIT_GONE = "This suggestion is no longer waiting: nothing changed."
EDIT_ASKED = "Send me the reply as an answer to my message."
EDITED = "Edited: the new version is below."

# What a business message did: started or joined a turn, was kept as the owner's, or changed nothing.
Taken = Literal["started", "queued", "duplicate", "owner_answered", "edited", "ignored"]


class Intake(NamedTuple):
    """What secretary mode's part of the webhook needs."""

    connections: BusinessConnectionStore
    suggestions: SuggestionStore
    sequencer: Callable[[], Sequencer]
    history: Callable[[], MessageRepository]
    presses: Callable[[], PressServices]
    telegram: Callable[[], TelegramClient]
    new_id: Callable[[], str]
    clock: Callable[[], datetime]
    wait_seconds: int  # how long a suggestion waits (its message says so)


def take_business_message(
    update_id: int, message: Message, connection: SecretaryConnection, intake: Intake
) -> tuple[Taken, str]:
    """A new message in a chat of the connection's account (see the module docstring): what it did, and
    why when it changed nothing."""
    if message.sender_business_bot is not None:
        return "ignored", "sent by the bot itself"
    sender = message.from_user
    if sender is None or message.chat.id <= 0:
        return "ignored", "not a person's private chat"
    conversation = Conversation(message.chat.id, account=connection.owner_id)
    text = message.text if message.text is not None else message.caption
    if sender.id == connection.owner_id:
        _owner_answered(conversation, message, text or NOT_TEXT, intake)
        return "owner_answered", ""
    settings = intake.connections.owner_settings(connection.owner_id)
    if not should_draft(settings, sender.first_name, sender.username):
        return "ignored", "secretary mode is off" if settings.off else "contact muted"
    name = sender.first_name[:MAX_CONTACT_NAME] or "Someone"
    queued = QueuedMessage(
        chat_id=conversation.chat_id,
        account=conversation.account,
        update_id=update_id,
        user_id=sender.id,
        id=stored_id(message.message_id),  # an edit or a deletion finds it by Telegram's id
        text=text or NOT_TEXT,
        sender=name,
        received_at=iso_utc(intake.clock()),
        telegram_message_id=message.message_id,
        kind=ContactWrote(connection_id=connection.connection_id, contact=name, username=sender.username),
    )
    admission = intake.sequencer().admission(queued)
    return admission.action, ""


def stored_id(telegram_message_id: int) -> str:
    """The id a message of a contact's chat is kept under: Telegram's own (unique in the owner's account),
    so an edit or a deletion finds it."""
    return f"tg{telegram_message_id}"


def _owner_answered(conversation: Conversation, message: Message, text: str, intake: Intake) -> None:
    """The owner wrote the contact in person: their side of the history, and no suggestion waits any more."""
    owner = conversation.account
    assert owner is not None  # a contact's chat in an account
    intake.history().add(
        StoredMessage(
            id=stored_id(message.message_id),  # a redelivered update is the same message
            chat_id=conversation.chat_id,
            account=owner,
            role="assistant",
            content=text,
            created_at=iso_utc(intake.clock()),  # on the clock the contact's messages are kept by
        )
    )
    pending = intake.suggestions.get(owner, conversation.chat_id)
    if pending is None or pending.status != "pending":
        return
    if withdraw(pending.approval_id, ANSWERED_YOURSELF, intake.presses()):
        intake.suggestions.settle(
            owner, conversation.chat_id, pending.approval_id, "withdrawn", frozenset({"pending"})
        )
        logger.info("suggestion withdrawn: the owner answered in person")


# ----------------------------------------------------------------------------- edits, deletions, stops
EDITED_NOTE = "{contact} edited a message since: this suggestion may be out of date."
DELETED_NOTE = "{contact} deleted a message since: this suggestion may be out of date."
STOPPED_NOTE = "Secretary mode stopped for your account: nothing was sent."
EDITS_LOOK_BACK = 200  # an edit or deletion finds its message among the chat's newest this many


def take_business_edit(message: Message, connection: SecretaryConnection, intake: Intake) -> Taken:
    """An edited message of the chat: the kept text is replaced, and a pending suggestion says it may be out
    of date. (A message still waiting for its turn is answered as it was first written.)"""
    if message.sender_business_bot is not None or message.chat.id <= 0:
        return "ignored"
    conversation = Conversation(message.chat.id, account=connection.owner_id)
    text = message.text if message.text is not None else message.caption
    history = intake.history()
    kept = _kept(history, conversation, {stored_id(message.message_id)})
    for old in kept:
        history.replace(old.model_copy(update={"content": text or NOT_TEXT}))
    if kept and kept[0].role == "user":
        _note_on_pending(connection.owner_id, conversation.chat_id, EDITED_NOTE, intake)
    return "edited" if kept else "ignored"


def take_business_deletion(
    chat_id: int, message_ids: list[int], connection: SecretaryConnection, intake: Intake
) -> int:
    """Messages deleted from the chat: they are removed from the kept conversation; a pending suggestion says
    it may be out of date. Returns how many were removed."""
    if chat_id <= 0:
        return 0
    conversation = Conversation(chat_id, account=connection.owner_id)
    history = intake.history()
    kept = _kept(history, conversation, {stored_id(message_id) for message_id in message_ids})
    for old in kept:
        history.remove(old)
    if any(old.role == "user" for old in kept):
        _note_on_pending(connection.owner_id, chat_id, DELETED_NOTE, intake)
    return len(kept)


def withdraw_all(owner_id: int, connection_id: str, why: str, intake: Intake) -> int:
    """Withdraw every pending suggestion of the connection (it stopped): their messages say `why` and their
    Send sends nothing. Returns how many."""
    withdrawn = 0
    for pending in intake.suggestions.of_owner(owner_id):
        if pending.status != "pending" or pending.connection_id != connection_id:
            continue
        if withdraw(pending.approval_id, why, intake.presses()):
            intake.suggestions.settle(
                owner_id, pending.chat_id, pending.approval_id, "withdrawn", frozenset({"pending"})
            )
            withdrawn += 1
    return withdrawn


def _kept(history: MessageRepository, conversation: Conversation, ids: set[str]) -> list[StoredMessage]:
    return [m for m in history.recent(conversation, EDITS_LOOK_BACK) if m.id in ids]


def _note_on_pending(owner_id: int, chat_id: int, note: str, intake: Intake) -> None:
    """Show the pending suggestion of the chat again, with `note` (its buttons stay)."""
    pending = intake.suggestions.get(owner_id, chat_id)
    if pending is None or pending.status != "pending" or pending.message_id is None:
        return
    html = suggestion_html(pending, intake.wait_seconds, note=note.format(contact=pending.contact or "They"))
    try:
        intake.telegram().edit_message_text(
            owner_id,
            pending.message_id,
            html,
            parse_mode="HTML",
            reply_markup=suggestion_keyboard(pending.approval_id),
        )
    except TelegramError as error:
        logger.warning("could not mark the suggestion out of date", extra={"error": str(error)})
        return
    intake.presses().approvals.attach_message(pending.approval_id, pending.message_id, html)


# ------------------------------------------------------------------------------------------------ Edit
def press_edit(query: CallbackQuery, approval_id: str, intake: Intake) -> str:
    """Edit on a suggestion: ask the owner for their own text (a message that opens a reply to it). Returns
    what the press is answered with."""
    presses = intake.presses()
    request = presses.approvals.get(approval_id)
    if request is None or request.status != "pending" or request.account is None:
        return EDIT_GONE
    if query.from_user.id != request.user_id:
        return NOT_YOURS
    kept = intake.suggestions.get(request.account, request.chat_id)
    if kept is None or kept.approval_id != approval_id or kept.status != "pending":
        return EDIT_GONE
    prompt = intake.telegram().send_message(
        request.account,
        edit_prompt(kept.contact),
        reply_markup=ForceReply(input_field_placeholder=f"Your reply to {kept.contact}"),
    )
    intake.suggestions.put_edit_prompt(request.account, prompt, request.chat_id, approval_id)
    return EDIT_ASKED


def take_edit_reply(message: Message, intake: Intake) -> bool:
    """The owner's reply to an Edit prompt: it becomes the suggestion's text, shown again with its buttons.
    False when the message answers no prompt (it goes to the assistant as usual)."""
    replied, owner = message.reply_to_message, message.chat.id
    if replied is None or message.from_user is None or message.from_user.id != owner:
        return False
    prompt = intake.suggestions.edit_prompt(owner, replied.message_id)
    if prompt is None:
        return False
    chat_id, approval_id = prompt
    text = shortened(message.text or message.caption or "", MAX_REPLY_CHARS)
    kept = intake.suggestions.get(owner, chat_id)
    request = intake.presses().approvals.get(approval_id)
    telegram = intake.telegram()
    waiting = request is not None and request.status == "pending"
    if not text or kept is None or kept.approval_id != approval_id or kept.status != "pending" or not waiting:
        telegram.send_message(owner, EDIT_GONE)
        return True
    revised = kept._replace(text=text)
    html = suggestion_html(revised, intake.wait_seconds, note="Your own text.")
    message_id = telegram.send_message(
        owner, html, parse_mode="HTML", reply_markup=suggestion_keyboard(approval_id)
    )
    if not intake.suggestions.revise(owner, chat_id, approval_id, text, message_id):
        telegram.edit_message_text(owner, message_id, EDIT_GONE)
        return True
    intake.presses().approvals.attach_message(approval_id, message_id, html)
    if kept.message_id is not None:
        try:
            telegram.edit_message_text(owner, kept.message_id, settled_html(kept, EDITED), parse_mode="HTML")
        except TelegramError as error:
            logger.warning("could not mark the older suggestion message", extra={"error": str(error)})
    logger.info("suggestion edited by its owner", extra={"approval_id": approval_id})
    return True
