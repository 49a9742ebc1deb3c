"""A suggestion sent through a business connection, over real HTTP to the fake Bot API, with the tool-call
ledger in DynamoDB (moto, the template's table): Telegram's refusals come back as the owner's reasons, the
24 hours end on a moved clock, and however often Send is pressed, the contact's chat gets one message."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from moto import mock_aws

from stepwise.ledger.dynamodb import DynamoToolCallLedger
from stepwise.secretary.sending import (
    AlreadySent,
    BusinessReply,
    RefusalReason,
    Refused,
    Sent,
    send_suggestion_once,
)
from stepwise.telegram.client import BotApiClient
from stepwise_local.telegram_server import FakeBotApi
from stepwise_local.template import Template

TOKEN = "424242:fake-token_for-tests"
OWNER = 2002
CONTACT = 3003


@pytest.fixture
def ledger() -> Iterator[DynamoToolCallLedger]:
    with mock_aws():
        credentials = {"aws_access_key_id": "testing", "aws_secret_access_key": "testing"}
        dynamodb = boto3.resource("dynamodb", region_name="us-east-1", **credentials)
        (table,) = [t for t in Template().tables() if t.logical_id == "ToolCallsTable"]
        # A name of its own each time: a local stack running in this process shares moto's backend, and
        # keeps it (and this table) between the tests.
        name = f"SecretarySendToolCalls-{uuid.uuid4().hex[:12]}"
        dynamodb.meta.client.create_table(**{**table.create_args, "TableName": name})
        yield DynamoToolCallLedger(dynamodb.Table(name), ttl_days=1)
        dynamodb.meta.client.delete_table(TableName=name)


@pytest.fixture
def api() -> Iterator[FakeBotApi]:
    with FakeBotApi(TOKEN) as server:
        yield server


def test_refusals_the_24_hours_and_one_message_however_often_send_is_pressed(
    ledger: DynamoToolCallLedger, api: FakeBotApi
) -> None:
    telegram = BotApiClient(TOKEN, api.base_url, timeout_seconds=5)

    def press(key: str, text: str = "Yes, 6 pm works.") -> Any:
        return send_suggestion_once(ledger, telegram, BusinessReply(key, "bc-1", CONTACT, text))

    # Refused, as Telegram answers: no such connection, the connection turned off, no right to reply
    assert press("s1") == Refused(RefusalReason.CONNECTION_OFF, "Bad Request: business connection not found")
    api.add_business_connection("bc-1", OWNER, enabled=False)
    api.contact_wrote("bc-1", CONTACT)
    assert press("s2").reason is RefusalReason.CONNECTION_OFF
    api.add_business_connection("bc-1", OWNER, can_reply=False)
    assert press("s3") == Refused(RefusalReason.NO_RIGHT, "Forbidden: BOT_ACCESS_FORBIDDEN")
    # A connection that may reply: sent once, however often Send is pressed (or the press delivered again)
    api.add_business_connection("bc-1", OWNER)
    assert press("s4") == Sent(1)
    assert press("s4") == AlreadySent(1)
    assert press("s4") == AlreadySent(1)
    # A refused suggestion stays refused: nothing is sent for it now that Telegram would take it
    assert press("s3").reason is RefusalReason.NO_RIGHT
    # The contact's message is more than 24 hours old on Telegram's clock: refused, and said so
    api.advance_clock(24 * 3600 + 60)
    late = press("s5", "Sorry, only saw this now.")
    assert late == Refused(RefusalReason.PAST_WINDOW, "Bad Request: BUSINESS_PEER_USAGE_MISSING")
    assert "24 hours" in late.words
    # Exactly one message reached the contact's chat, through the connection; none went to the bot's chats
    (sent,) = api.business_messages(CONTACT)
    assert (sent["business_connection_id"], sent["chat_id"], sent["text"]) == (
        "bc-1",
        CONTACT,
        "Yes, 6 pm works.",
    )
    assert api.messages() == []
    assert [a["status"] for a in api.attempts("sendMessage")] == [400, 400, 403, 200, 400]
    assert api.calls("sendChatAction") == []


def test_a_press_that_arrives_while_the_first_is_sending_sends_nothing(
    ledger: DynamoToolCallLedger, api: FakeBotApi
) -> None:
    api.add_business_connection("bc-1", OWNER)
    api.contact_wrote("bc-1", CONTACT)
    reply = BusinessReply("s1", "bc-1", CONTACT, "On my way.")
    second: list[Any] = []

    class Waiting(BotApiClient):
        """The same press arrives again (a second Lambda) while the first waits for Telegram's answer."""

        def send_message(self, chat_id: int, text: str, **kwargs: Any) -> int:
            if not second:
                second.append(send_suggestion_once(ledger, self, reply))
            return super().send_message(chat_id, text, **kwargs)

    first = send_suggestion_once(ledger, Waiting(TOKEN, api.base_url, timeout_seconds=5), reply)
    # DynamoDB's conditional write let one call through: it sent; the other saw it in progress
    assert first == Sent(1)
    assert [outcome.kind for outcome in second] == ["in_progress"]
    assert [m["text"] for m in api.business_messages(CONTACT)] == ["On my way."]
