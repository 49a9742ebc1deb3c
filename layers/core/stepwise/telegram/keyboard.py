"""The inline keyboard a message carries (the approval's buttons): apart from the incoming updates' models,
which only the webhook parses."""

from typing import Any

from stepwise.telegram.model_base import _TelegramModel


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
