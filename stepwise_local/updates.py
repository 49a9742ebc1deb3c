"""Telegram Update payloads, shaped like the real ones, for the chat and the tests."""

from __future__ import annotations

import itertools
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
) -> dict[str, Any]:
    """An update carrying a private-chat text message."""
    sender = user(user_id, first_name)
    chat = {"id": chat_id if chat_id is not None else user_id, "type": "private", "first_name": first_name}
    return {
        "update_id": update_id if update_id is not None else next(_update_ids),
        "message": {
            "message_id": next(_message_ids),
            "from": sender,
            "chat": chat,
            "date": int(time.time()),
            "text": text,
        },
    }


def sticker_message(user_id: int, *, update_id: int | None = None) -> dict[str, Any]:
    """An update with a sticker (no text): the webhook ignores it."""
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
