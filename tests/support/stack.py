"""A running local stack for integration tests: the emulation plus fake Telegram and Anthropic servers."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import boto3
import pytest
from boto3.dynamodb.conditions import Key

from stepwise.aws.conversation_key import conversation_key
from stepwise.telegram.conversation import Conversation
from stepwise_local import updates
from stepwise_local.anthropic_server import FakeAnthropic
from stepwise_local.emulation import Emulation
from stepwise_local.telegram_server import FakeBotApi

ALLOWED_USERS = list(range(101, 900))  # NOT_ALLOWED_USER stays outside
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

    def say(self, user_id: int, text: str, timeout: float = 60.0, topic: int | None = None) -> dict[str, Any]:
        """Send a text message (in `topic`, if given) through the webhook and wait for its turn to end;
        returns the execution."""
        update = updates.text_message(user_id, text, topic=topic)
        response = self.emulation.post_update(update)
        assert response["statusCode"] == 200, response
        where = Conversation(user_id, topic)
        return self.emulation.wait_for_update(where, update["update_id"], timeout=timeout)

    def replies(self, chat_id: int, topic: int | bool | None = False) -> list[str]:
        """What the user saw, message by message (with `topic`, only in that topic; None: outside any)."""
        return [
            self.telegram.text_of(m)
            for m in self.telegram.messages(chat_id)
            if topic is False or m.get("message_thread_id") == topic
        ]

    def stored(self, chat_id: int | Conversation, topic: int | None = None) -> list[dict[str, Any]]:
        """The conversation's items in the messages table, oldest first (a `Conversation` names it whole)."""
        table = self.emulation.table("MessagesTable")
        where = chat_id if isinstance(chat_id, Conversation) else Conversation(chat_id, topic)
        key = conversation_key(where)
        items: list[dict[str, Any]] = table.query(KeyConditionExpression=Key("chat_id").eq(key))["Items"]
        return items

    def send(self, user_id: int, text: str, timeout: float = 20.0, topic: int | None = None) -> str:
        """Send a text message without waiting for its turn to end; returns the name of the turn taking it."""
        update = updates.text_message(user_id, text, topic=topic)
        response = self.emulation.post_update(update)
        assert response["statusCode"] == 200, response
        return self.emulation.wait_until_taken(Conversation(user_id, topic), update["update_id"], timeout)

    def buttons(self, chat_id: int, timeout: float = 20.0) -> dict[str, Any]:
        """Wait for the newest message with an inline keyboard in the chat; returns it."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            messages = self.telegram.messages(chat_id)
            with_keyboard = [m for m in messages if (m.get("reply_markup") or {}).get("inline_keyboard")]
            if with_keyboard:
                return with_keyboard[-1]
            time.sleep(0.01)
        raise AssertionError(f"no buttons in chat {chat_id}: {self.replies(chat_id)}")

    def press(self, user_id: int, message: dict[str, Any], label: str) -> dict[str, Any]:
        """Press the button whose label starts with `label`; returns the webhook's answer."""
        rows = message["reply_markup"]["inline_keyboard"]
        (button,) = [b for row in rows for b in row if b["text"].startswith(label)]
        sent = {
            "message_id": message["message_id"],
            "date": 0,
            "text": message["text"],
            "chat": {"id": message["chat_id"], "type": "private"},
        }
        result: dict[str, Any] = self.emulation.post_update(
            updates.callback_query(user_id, button["callback_data"], sent)
        )
        return result

    def tasks(self, user_id: int) -> list[dict[str, Any]]:
        """The user's task items (without the id counter)."""
        table = self.emulation.table("TasksTable")
        items = table.query(KeyConditionExpression=Key("user_id").eq(user_id) & Key("task_id").gt(0))["Items"]
        return list(items)


@contextmanager
def fresh(stack: Stack) -> Iterator[Stack]:
    """The shared stack with the model's script and requests, the environment overrides, the planned
    crashes and Telegram's faults fresh while the block runs, and cleared again after it."""
    stack.anthropic.reset()
    stack.emulation.config.env.clear()
    stack.emulation.clear_crashes()
    stack.telegram.clear_faults()
    try:
        yield stack
    finally:
        stack.emulation.config.env.clear()
        stack.emulation.clear_crashes()
        stack.telegram.clear_faults()


@contextmanager
def clock_kept(stack: Stack) -> Iterator[Stack]:
    """The stack, whose clock goes back and whose reminder schedules go away once the block has run."""
    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.setattr(stack.emulation, "_clock_offset", stack.emulation._clock_offset)
        try:
            yield stack
        finally:
            client = boto3.client("scheduler")
            group = stack.emulation.template.schedule_group_name("ReminderScheduleGroup")
            for schedule in client.list_schedules(GroupName=group)["Schedules"]:
                client.delete_schedule(Name=schedule["Name"], GroupName=group)
