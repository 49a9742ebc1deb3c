"""A running local stack for integration tests: the emulation plus fake Telegram and Anthropic servers."""

from __future__ import annotations

from typing import Any

from boto3.dynamodb.conditions import Key

from stepwise_local import updates
from stepwise_local.anthropic_server import FakeAnthropic
from stepwise_local.emulation import Emulation
from stepwise_local.telegram_server import FakeBotApi

ALLOWED_USERS = list(range(101, 200))
NOT_ALLOWED_USER = 999


class Stack:
    """Helpers over one running stack; each test takes fresh user ids so chats never mix."""

    def __init__(self, emulation: Emulation, telegram: FakeBotApi, anthropic: FakeAnthropic) -> None:
        self.emulation = emulation
        self.telegram = telegram
        self.anthropic = anthropic
        self._users = iter(ALLOWED_USERS)

    def new_user(self) -> int:
        return next(self._users)

    def say(self, user_id: int, text: str, timeout: float = 60.0) -> dict[str, Any]:
        """Send a text message through the webhook and wait for its turn to end; returns the execution."""
        update = updates.text_message(user_id, text)
        response = self.emulation.post_update(update)
        assert response["statusCode"] == 200, response
        return self.emulation.wait(f"update-{update['update_id']}", timeout=timeout)

    def replies(self, chat_id: int) -> list[str]:
        """What the user saw, message by message."""
        return [self.telegram.text_of(m) for m in self.telegram.messages(chat_id)]

    def stored(self, chat_id: int) -> list[dict[str, Any]]:
        """The chat's items in the messages table, oldest first."""
        table = self.emulation.table("MessagesTable")
        items: list[dict[str, Any]] = table.query(KeyConditionExpression=Key("chat_id").eq(chat_id))["Items"]
        return items
