"""Pydantic models for the parts of Telegram Bot API objects that Stepwise uses."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class _TelegramModel(BaseModel):
    """Base: ignore unknown fields, accept both field names and Telegram's aliases."""

    model_config = ConfigDict(extra="ignore", populate_by_name=True, frozen=True)


class User(_TelegramModel):
    """A Telegram user or bot."""

    id: int
    is_bot: bool = False
    first_name: str = ""
    last_name: str | None = None
    username: str | None = None
    language_code: str | None = None


class Chat(_TelegramModel):
    """A chat (private, group, supergroup or channel)."""

    id: int
    type: str
    title: str | None = None
    username: str | None = None
    first_name: str | None = None


class Message(_TelegramModel):
    """A message; only the fields the assistant reads."""

    message_id: int
    date: int
    chat: Chat
    from_user: User | None = Field(default=None, alias="from")
    text: str | None = None
    caption: str | None = None


class CallbackQuery(_TelegramModel):
    """A press on an inline keyboard button."""

    id: str
    from_user: User = Field(alias="from")
    message: Message | None = None
    data: str | None = None
    chat_instance: str | None = None


class Update(_TelegramModel):
    """An incoming update as delivered to the webhook."""

    update_id: int
    message: Message | None = None
    edited_message: Message | None = None
    channel_post: Message | None = None
    edited_channel_post: Message | None = None
    callback_query: CallbackQuery | None = None


class InlineKeyboardButton(_TelegramModel):
    """One inline keyboard button that sends ``callback_data`` back to the bot."""

    text: str
    callback_data: str

    def to_api(self) -> dict[str, Any]:
        """Return the Bot API JSON form."""
        return {"text": self.text, "callback_data": self.callback_data}


class InlineKeyboardMarkup(_TelegramModel):
    """Rows of inline keyboard buttons."""

    inline_keyboard: list[list[InlineKeyboardButton]]

    def to_api(self) -> dict[str, Any]:
        """Return the Bot API JSON form."""
        return {"inline_keyboard": [[button.to_api() for button in row] for row in self.inline_keyboard]}
