"""Telegram adapter: Update models, the Bot API client port and adapters, reply formatting."""

from stepwise.telegram.client import BotApiClient, TelegramClient
from stepwise.telegram.errors import (
    TelegramBadRequest,
    TelegramError,
    TelegramForbidden,
    TelegramTransientError,
)
from stepwise.telegram.fake import InMemoryTelegram, SentMessage
from stepwise.telegram.formatting import MAX_MESSAGE_LENGTH, OutgoingChunk, escape_html, render_reply
from stepwise.telegram.models import (
    CallbackQuery,
    Chat,
    InlineKeyboardButton,
    InlineKeyboardMarkup,
    Message,
    Update,
    User,
)

__all__ = [
    "MAX_MESSAGE_LENGTH",
    "BotApiClient",
    "CallbackQuery",
    "Chat",
    "InMemoryTelegram",
    "InlineKeyboardButton",
    "InlineKeyboardMarkup",
    "Message",
    "OutgoingChunk",
    "SentMessage",
    "TelegramBadRequest",
    "TelegramClient",
    "TelegramError",
    "TelegramForbidden",
    "TelegramTransientError",
    "Update",
    "User",
    "escape_html",
    "render_reply",
]
