"""What the bot itself is, from getMe: asked once per container while the answer stays the same."""

from __future__ import annotations

from typing import TYPE_CHECKING

from stepwise.telegram.addressing import BotIdentity
from stepwise.telegram.errors import TelegramError

if TYPE_CHECKING:
    from stepwise.telegram.client import TelegramClient


class BotInfo:
    """getMe's `has_topics_enabled` (threaded mode in private chats), cached once it is on: the owner turns
    it on in @BotFather, and until then every /new asks again, so turning it on counts at once. (Turned off
    later, createForumTopic fails "the chat is not a forum", which /new answers the same way.)"""

    def __init__(self) -> None:
        self._topics_on = False
        self._identity: BotIdentity | None = None

    def identity(self, telegram: TelegramClient) -> BotIdentity:
        """The bot's id and username (which never change) and whether it reads every group message, asked
        once per container; a failed getMe raises (TelegramError) and is asked again next time."""
        if self._identity is None:
            me = telegram.get_me()
            bot_id, username = me.get("id"), me.get("username")
            if not isinstance(bot_id, int) or not isinstance(username, str):
                raise TelegramError("getMe", None, "answer has no id or username")
            self._identity = BotIdentity(bot_id, username, me.get("can_read_all_group_messages") is True)
        return self._identity

    def topics_enabled(self, telegram: TelegramClient) -> bool:
        if not self._topics_on:
            self._topics_on = telegram.get_me().get("has_topics_enabled") is True
        return self._topics_on
