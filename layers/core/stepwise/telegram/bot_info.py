"""What the bot itself is, from getMe: asked once per container while the answer stays the same."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from stepwise.telegram.client import TelegramClient


class BotInfo:
    """getMe's `has_topics_enabled` (threaded mode in private chats), cached once it is on: the owner turns
    it on in @BotFather, and until then every /new asks again, so turning it on counts at once. (Turned off
    later, createForumTopic fails "the chat is not a forum", which /new answers the same way.)"""

    def __init__(self) -> None:
        self._topics_on = False

    def topics_enabled(self, telegram: TelegramClient) -> bool:
        if not self._topics_on:
            self._topics_on = telegram.get_me().get("has_topics_enabled") is True
        return self._topics_on
