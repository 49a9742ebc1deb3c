"""The inline keyboard a message carries (the approval's buttons): apart from the incoming updates' models,
which only the webhook parses."""

from typing import Any

from stepwise.telegram.model_base import _TelegramModel


class InlineKeyboardButton(_TelegramModel):
    """One inline keyboard button that sends ``callback_data`` back to the bot, or (with ``web_app_url``)
    opens that Mini App with the user's signed initData, or (with ``url``) opens a web page in the browser."""

    text: str
    callback_data: str | None = None
    web_app_url: str | None = None
    url: str | None = None

    def to_api(self) -> dict[str, Any]:
        """Return the Bot API JSON form."""
        if self.web_app_url is not None:
            return {"text": self.text, "web_app": {"url": self.web_app_url}}
        if self.url is not None:
            return {"text": self.text, "url": self.url}
        return {"text": self.text, "callback_data": self.callback_data}


class InlineKeyboardMarkup(_TelegramModel):
    """Rows of inline keyboard buttons."""

    inline_keyboard: list[list[InlineKeyboardButton]]

    def to_api(self) -> dict[str, Any]:
        """Return the Bot API JSON form."""
        return {"inline_keyboard": [[button.to_api() for button in row] for row in self.inline_keyboard]}


class ForceReply(_TelegramModel):
    """Asks the person's Telegram app to open a reply to the message (secretary mode's Edit prompt)."""

    input_field_placeholder: str = ""

    def to_api(self) -> dict[str, Any]:
        """Return the Bot API JSON form."""
        api: dict[str, Any] = {"force_reply": True}
        if self.input_field_placeholder:
            api["input_field_placeholder"] = self.input_field_placeholder[:64]
        return api
