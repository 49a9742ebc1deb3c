"""Telegram Update payloads, shaped like the real ones, for the chat and the tests."""

from __future__ import annotations

import itertools
import re
import time
from typing import Any

_update_ids = itertools.count(100_000)
_message_ids = itertools.count(1)


def user(user_id: int, first_name: str = "Local", username: str | None = "local_user") -> dict[str, Any]:
    """A Telegram User object."""
    data: dict[str, Any] = {"id": user_id, "is_bot": False, "first_name": first_name, "language_code": "en"}
    if username:
        data["username"] = username
    return data


def text_message(
    user_id: int,
    text: str,
    *,
    chat_id: int | None = None,
    update_id: int | None = None,
    first_name: str = "Local",
    topic: int | None = None,
) -> dict[str, Any]:
    """An update carrying a private-chat text message (in the topic `topic`, if given)."""
    sender = user(user_id, first_name)
    chat = {"id": chat_id if chat_id is not None else user_id, "type": "private", "first_name": first_name}
    message: dict[str, Any] = {
        "message_id": next(_message_ids),
        "from": sender,
        "chat": chat,
        "date": int(time.time()),
        "text": text,
    }
    if topic is not None:
        message |= {"message_thread_id": topic, "is_topic_message": True}
    return {"update_id": update_id if update_id is not None else next(_update_ids), "message": message}


GROUP_CHAT_ID = -1001234567890  # a supergroup's id, as Telegram numbers them


BOT = {"id": 1, "is_bot": True, "first_name": "Stepwise"}  # the bot, as a message it sent names it


def reply_to_bot(user_id: int, text: str, sent: dict[str, Any]) -> dict[str, Any]:
    """A private-chat text message that replies to `sent`, a message the bot sent there (its `message_id` and
    `text`): what Telegram's app sends after a ForceReply prompt (secretary mode's Edit)."""
    update = text_message(user_id, text)
    update["message"]["reply_to_message"] = {
        "message_id": sent["message_id"],
        "date": int(time.time()),
        "chat": {"id": user_id, "type": "private"},
        "from": BOT,
        "text": sent["text"],
    }
    return update


def in_group(update: dict[str, Any], chat_id: int = GROUP_CHAT_ID) -> dict[str, Any]:
    """The update's message moved into the local group (a supergroup that is not a forum)."""
    update["message"]["chat"] = {"id": chat_id, "type": "supergroup", "title": "Local group"}
    return update


def group_message(
    user_id: int,
    text: str,
    *,
    chat_id: int = GROUP_CHAT_ID,
    first_name: str = "Local",
    update_id: int | None = None,
    reply_to: dict[str, Any] | None = None,
    topic: int | None = None,
) -> dict[str, Any]:
    """An update carrying a group message, each `@username` and `/command` in its text marked with its entity
    as Telegram marks them (offsets in UTF-16 code units); `reply_to`: the message it replies to."""
    update = text_message(
        user_id, text, chat_id=chat_id, update_id=update_id, first_name=first_name, topic=topic
    )
    message = in_group(update, chat_id)["message"]
    entities = []
    for word in re.finditer(r"(?:^|(?<=\s))[@/][A-Za-z0-9_@]+", text):
        kind = "mention" if word.group().startswith("@") else "bot_command"
        offset = len(text[: word.start()].encode("utf-16-le")) // 2
        entities.append(
            {"type": kind, "offset": offset, "length": len(word.group().encode("utf-16-le")) // 2}
        )
    if entities:
        message["entities"] = entities
    if reply_to is not None:
        message["reply_to_message"] = reply_to
    return update


def topic_created(
    user_id: int, topic: int, name: str, *, implicit: bool = False, update_id: int | None = None
) -> dict[str, Any]:
    """The service message that opens topic `topic` (its own message id) in the private chat; `implicit`:
    Telegram made the name up."""
    update = text_message(user_id, "", update_id=update_id, topic=topic)
    message = update["message"]
    del message["text"]
    message["message_id"] = topic
    created: dict[str, Any] = {"name": name, "icon_color": 7322096}
    if implicit:
        created["is_name_implicit"] = True
    message["forum_topic_created"] = created
    return update


def _media_message(
    user_id: int,
    caption: str | None,
    update_id: int | None,
    *,
    first_name: str = "Local",
    topic: int | None = None,
) -> dict[str, Any]:
    update = text_message(user_id, "", update_id=update_id, first_name=first_name, topic=topic)
    del update["message"]["text"]
    if caption is not None:
        update["message"]["caption"] = caption
    return update


def photo_message(
    user_id: int,
    file_id: str,
    file_size: int,
    *,
    caption: str | None = None,
    update_id: int | None = None,
) -> dict[str, Any]:
    """An update with a photo, as Telegram sends it: several sizes, smallest first, the largest being
    `file_id` with `file_size` bytes."""
    update = _media_message(user_id, caption, update_id)
    update["message"]["photo"] = [
        {"file_id": f"{file_id}-s", "file_unique_id": "AQADs", "file_size": 1_200, "width": 90, "height": 68},
        {
            "file_id": f"{file_id}-m",
            "file_unique_id": "AQADm",
            "file_size": 14_800,
            "width": 320,
            "height": 240,
        },
        {"file_id": file_id, "file_unique_id": "AQADx", "file_size": file_size, "width": 1280, "height": 960},
    ]
    return update


def document_message(
    user_id: int,
    file_id: str,
    file_size: int,
    file_name: str,
    mime_type: str,
    *,
    caption: str | None = None,
    update_id: int | None = None,
) -> dict[str, Any]:
    """An update with a document (a file sent as a file)."""
    update = _media_message(user_id, caption, update_id)
    update["message"]["document"] = {
        "file_id": file_id,
        "file_unique_id": "AgADdoc",
        "file_name": file_name,
        "mime_type": mime_type,
        "file_size": file_size,
    }
    return update


def voice_message(
    user_id: int,
    *,
    update_id: int | None = None,
    file_id: str = "AwACAgIAAxkBAAIBvoice",
    duration: int = 3,
    file_size: int | None = 9_421,
    caption: str | None = None,
    kind: str = "voice",
    mime_type: str | None = "audio/ogg",
    first_name: str = "Local",
    topic: int | None = None,
) -> dict[str, Any]:
    """An update with a voice note (or, with `kind`, an `audio` file or a round `video_note`), from
    `first_name`, in the topic `topic` when given."""
    update = _media_message(user_id, caption, update_id, first_name=first_name, topic=topic)
    note: dict[str, Any] = {"file_id": file_id, "file_unique_id": f"u-{file_id}"[:64], "duration": duration}
    if mime_type is not None and kind != "video_note":
        note["mime_type"] = mime_type
    if file_size is not None:
        note["file_size"] = file_size
    if kind == "video_note":
        note["length"] = 240
    update["message"][kind] = note
    return update


def sticker_message(user_id: int, *, update_id: int | None = None) -> dict[str, Any]:
    """An update with a sticker (no text): answered with a notice, without a model call."""
    update = text_message(user_id, "", update_id=update_id)
    del update["message"]["text"]
    update["message"]["sticker"] = {
        "file_id": "CAACAgIAAxkBAAE",
        "file_unique_id": "AgADBQAD",
        "type": "regular",
        "width": 512,
        "height": 512,
        "is_animated": False,
        "is_video": False,
    }
    return update


def edited_message(user_id: int, text: str, *, update_id: int | None = None) -> dict[str, Any]:
    """An update with an edited message: the webhook ignores it."""
    update = text_message(user_id, text, update_id=update_id)
    update["edited_message"] = update.pop("message")
    update["edited_message"]["edit_date"] = int(time.time())
    return update


def callback_query(
    user_id: int, data: str, message: dict[str, Any], *, update_id: int | None = None
) -> dict[str, Any]:
    """An update with an inline-button press on `message` (a sent Message object)."""
    return {
        "update_id": update_id if update_id is not None else next(_update_ids),
        "callback_query": {
            "id": str(next(_update_ids)),
            "from": user(user_id),
            "message": message,
            "chat_instance": "-1234567890",
            "data": data,
        },
    }


def business_connection(
    owner_id: int,
    *,
    connection_id: str = "bc-local",
    enabled: bool = True,
    can_reply: bool = True,
    date: int | None = None,
    update_id: int | None = None,
    first_name: str = "Local",
) -> dict[str, Any]:
    """An update saying the bot was connected to (or disconnected from) the owner's Telegram Business account
    (docs/secretary.md); `user_chat_id` is the owner's private chat with the bot."""
    connection = {
        "id": connection_id,
        "user": user(owner_id, first_name),
        "user_chat_id": owner_id,
        "date": date if date is not None else int(time.time()),
        "rights": {"can_reply": can_reply, "can_read_messages": True},
        "is_enabled": enabled,
    }
    return {
        "update_id": update_id if update_id is not None else next(_update_ids),
        "business_connection": connection,
    }


def business_message(
    sender_id: int,
    text: str,
    *,
    connection_id: str = "bc-local",
    chat_id: int | None = None,
    first_name: str = "Contact",
    update_id: int | None = None,
) -> dict[str, Any]:
    """An update carrying a message in a chat of a connected business account: `sender_id` wrote it in the
    chat with the contact `chat_id` (the sender's own id by default: the contact writing)."""
    message = {
        "message_id": next(_message_ids),
        "from": user(sender_id, first_name),
        "chat": {
            "id": chat_id if chat_id is not None else sender_id,
            "type": "private",
            "first_name": first_name,
        },
        "date": int(time.time()),
        "text": text,
        "business_connection_id": connection_id,
    }
    return {
        "update_id": update_id if update_id is not None else next(_update_ids),
        "business_message": message,
    }
