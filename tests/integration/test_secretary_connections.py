"""Secretary mode's business connections through the deployed webhook (the emulated stack, the template's
SecretaryTable, the fake Bot API): an owner on the allowlist who connects the bot is welcomed once in their
private chat, however often Telegram delivers the update; a stranger's connection keeps nothing; a contact's
message through a connection never kept starts nothing. The rules themselves are tested on the in-memory
fakes (tests/unit/test_secretary_connections.py)."""

from __future__ import annotations

import pytest
from botocore.exceptions import ClientError
from support.stack import Stack

from stepwise.secretary.connections import WELCOME
from stepwise_local import updates

STRANGER = 987_654_321


def test_an_owners_connection_is_welcomed_once_and_a_strangers_keeps_nothing(stack: Stack) -> None:
    emulation = stack.emulation
    owner = stack.new_user()
    update = updates.business_connection(owner, connection_id=f"bc-{owner}")
    for _ in range(2):  # Telegram delivers it again
        answer = emulation.post_update(update)
        assert answer["statusCode"] == 200 and answer["headers"]["x-stepwise-action"] == "connection_noted"
    assert stack.replies(owner) == [WELCOME]
    kept = emulation.table("SecretaryTable").get_item(Key={"pk": f"conn#bc-{owner}", "sk": "conn"})["Item"]
    assert (kept["owner_id"], kept["welcomed"], kept["enabled"]) == (owner, True, True)

    stranger = emulation.post_update(updates.business_connection(STRANGER, connection_id="bc-stranger"))
    assert stranger["headers"]["x-stepwise-action"] == "ignored"
    assert "Item" not in emulation.table("SecretaryTable").get_item(
        Key={"pk": "conn#bc-stranger", "sk": "conn"}
    )
    assert stack.replies(STRANGER) == []

    started = len(emulation.executions())
    contact = emulation.post_update(updates.business_message(STRANGER, "hello?", connection_id="bc-stranger"))
    assert contact["statusCode"] == 200 and contact["headers"]["x-stepwise-action"] == "ignored"
    assert len(emulation.executions()) == started, "no turn"


def test_a_connection_update_dynamodb_refused_is_delivered_again_and_welcomed_once(stack: Stack) -> None:
    emulation = stack.emulation
    owner = stack.new_user()
    update = updates.business_connection(owner, connection_id=f"bc-{owner}")
    for operation in ("UpdateItem", "GetItem"):  # keeping it, then reading it back
        emulation.throttle("SecretaryTable", 1, function="WebhookFunction", operation=operation)
        with pytest.raises(ClientError):  # the webhook's Lambda fails: API Gateway answers 5xx
            emulation.post_update(update)
        assert stack.replies(owner) == []
    answer = emulation.post_update(update)  # Telegram delivers it again
    assert answer["statusCode"] == 200 and answer["headers"]["x-stepwise-action"] == "connection_noted"
    assert stack.replies(owner) == [WELCOME]
    assert len(emulation.throttled) >= 2
