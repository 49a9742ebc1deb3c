"""Tests for the Telegram Update models."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from stepwise.telegram.keyboard import InlineKeyboardButton, InlineKeyboardMarkup
from stepwise.telegram.models import CallbackQuery, Update, User

REAL_MESSAGE_UPDATE: dict[str, Any] = {
    "update_id": 815923456,
    "message": {
        "message_id": 42,
        "from": {
            "id": 1111111,
            "is_bot": False,
            "first_name": "Ada",
            "last_name": "Lovelace",
            "username": "ada",
            "language_code": "en",
            "is_premium": True,
        },
        "chat": {"id": 1111111, "first_name": "Ada", "username": "ada", "type": "private"},
        "date": 1767225600,
        "text": "/start hello",
        "entities": [{"offset": 0, "length": 6, "type": "bot_command"}],
        "link_preview_options": {"is_disabled": True},
    },
}

REAL_CALLBACK_UPDATE: dict[str, Any] = {
    "update_id": 815923457,
    "callback_query": {
        "id": "4382bfdwdsb323b2d9",
        "from": {"id": 1111111, "is_bot": False, "first_name": "Ada"},
        "message": {
            "message_id": 43,
            "from": {"id": 999, "is_bot": True, "first_name": "Stepwise", "username": "stepwise_bot"},
            "chat": {"id": 1111111, "type": "private"},
            "date": 1767225601,
            "text": "Continue?",
            "reply_markup": {"inline_keyboard": [[{"text": "Yes", "callback_data": "yes"}]]},
        },
        "chat_instance": "-123456789",
        "data": "yes",
    },
}


def test_message_update_parses_real_telegram_json() -> None:
    # Given a real Telegram message update with fields we do not model
    # When it is validated
    update = Update.model_validate(REAL_MESSAGE_UPDATE)
    # Then the used fields are populated and "from" lands in from_user
    assert update.message is not None
    assert update.message.text == "/start hello"
    assert update.message.chat.id == 1111111
    assert update.message.chat.type == "private"
    assert update.message.from_user == User(
        id=1111111, first_name="Ada", last_name="Lovelace", username="ada", language_code="en"
    )
    assert update.callback_query is None


def test_callback_query_update_parses_real_telegram_json() -> None:
    # Given a real callback_query update
    # When it is validated from a JSON string
    import json

    update = Update.model_validate_json(json.dumps(REAL_CALLBACK_UPDATE))
    # Then the callback's sender, data and message are available
    query = update.callback_query
    assert isinstance(query, CallbackQuery)
    assert query.from_user.id == 1111111
    assert query.data == "yes"
    assert query.chat_instance == "-123456789"
    assert query.message is not None and query.message.message_id == 43
    assert query.message.from_user is not None and query.message.from_user.is_bot


def test_unknown_update_kinds_are_ignored() -> None:
    # Given an update of a kind we do not handle (e.g. a poll)
    raw = {"update_id": 7, "poll": {"id": "1", "question": "?", "options": []}}
    # When it is validated
    update = Update.model_validate(raw)
    # Then it parses with every modelled kind empty
    assert update.update_id == 7
    assert update.message is None and update.edited_message is None and update.channel_post is None


def test_models_accept_field_names_as_well_as_aliases() -> None:
    # Given a callback query built in Python with the field name
    query = CallbackQuery(id="q", from_user=User(id=1), data="d")
    # When it is dumped by alias
    dumped = query.model_dump(by_alias=True, exclude_none=True)
    # Then the Telegram spelling "from" is used
    assert dumped["from"]["id"] == 1


def test_missing_required_field_is_rejected() -> None:
    # Given a message update without a chat
    raw = {"update_id": 1, "message": {"message_id": 1, "date": 0}}
    # When / Then validation fails
    with pytest.raises(ValidationError):
        Update.model_validate(raw)


def test_inline_keyboard_to_api() -> None:
    # Given a keyboard with two rows
    markup = InlineKeyboardMarkup(
        inline_keyboard=[
            [
                InlineKeyboardButton(text="Yes", callback_data="y"),
                InlineKeyboardButton(text="No", callback_data="n"),
            ],
            [InlineKeyboardButton(text="Cancel", callback_data="c")],
        ]
    )
    # When it is converted for the Bot API
    api = markup.to_api()
    # Then it has Telegram's shape
    assert api == {
        "inline_keyboard": [
            [{"text": "Yes", "callback_data": "y"}, {"text": "No", "callback_data": "n"}],
            [{"text": "Cancel", "callback_data": "c"}],
        ]
    }
