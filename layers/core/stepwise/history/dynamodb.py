"""Messages in DynamoDB: partition key chat_id (number: the conversation's key, see
`stepwise.aws.conversation_key`), sort key `created_at#id`."""

from __future__ import annotations

import json
from typing import Any

from botocore.exceptions import ClientError

from stepwise.aws.conversation_key import conversation_at, conversation_key
from stepwise.aws.dynamodb_pages import all_items
from stepwise.history.models import StoredMessage
from stepwise.media.models import Attachment, Heard
from stepwise.telegram.conversation import Conversation


def message_item(message: StoredMessage) -> dict[str, Any]:
    """A stored message as the messages table's item."""
    item: dict[str, Any] = {
        "chat_id": conversation_key(message.conversation),
        "sk": message.sort_key,
        "id": message.id,
        "role": message.role,
        "content": message.content,
        "created_at": message.created_at,
    }
    if message.turn_id:
        item["turn_id"] = message.turn_id
    if message.update_id is not None:
        item["update_id"] = message.update_id
    if message.tool_calls:
        item["tool_calls"] = json.dumps(message.tool_calls)
    if message.attachment is not None:
        item["attachment"] = message.attachment.model_dump_json(exclude_none=True)
    if message.heard is not None:
        item["heard"] = message.heard.model_dump_json(exclude_none=True)
    if message.forwarded is not None:
        item["forwarded"] = json.dumps(message.forwarded)
    if message.sender is not None:
        item["sender"] = message.sender
    return item


class DynamoMessageRepository:
    """MessageRepository on a DynamoDB table resource."""

    def __init__(self, table: Any) -> None:
        self._table = table

    def add(self, message: StoredMessage) -> bool:
        item = message_item(message)
        try:
            self._table.put_item(Item=item, ConditionExpression="attribute_not_exists(sk)")
        except ClientError as error:
            if error.response["Error"]["Code"] == "ConditionalCheckFailedException":
                return False
            raise
        return True

    def replace(self, message: StoredMessage) -> bool:
        try:
            self._table.put_item(Item=message_item(message), ConditionExpression="attribute_exists(sk)")
        except ClientError as error:
            if error.response["Error"]["Code"] == "ConditionalCheckFailedException":
                return False
            raise
        return True

    def remove(self, message: StoredMessage) -> None:
        item = message_item(message)
        self._table.delete_item(Key={"chat_id": item["chat_id"], "sk": item["sk"]})

    def recent(self, conversation: Conversation, limit: int) -> list[StoredMessage]:
        response = self._table.query(
            KeyConditionExpression="chat_id = :c",
            ExpressionAttributeValues={":c": conversation_key(conversation)},
            ScanIndexForward=False,
            Limit=limit,
        )
        return [_from_item(item) for item in reversed(response.get("Items", []))]

    def after(self, conversation: Conversation, key: str) -> list[StoredMessage]:
        if not key:  # DynamoDB refuses an empty key value: "after nothing" is the whole chat
            return self._query(
                {
                    "KeyConditionExpression": "chat_id = :c",
                    "ExpressionAttributeValues": {":c": conversation_key(conversation)},
                }
            )
        return self._query(
            {
                "KeyConditionExpression": "chat_id = :c AND sk > :k",
                "ExpressionAttributeValues": {":c": conversation_key(conversation), ":k": key},
            }
        )

    def between(self, conversation: Conversation, first_key: str, last_key: str) -> list[StoredMessage]:
        return self._query(
            {
                "KeyConditionExpression": "chat_id = :c AND sk BETWEEN :a AND :b",
                "ExpressionAttributeValues": {
                    ":c": conversation_key(conversation),
                    ":a": first_key,
                    ":b": last_key,
                },
            }
        )

    def _query(self, kwargs: dict[str, Any]) -> list[StoredMessage]:
        return [_from_item(item) for item in all_items(self._table.query, **kwargs)]


def _from_item(item: dict[str, Any]) -> StoredMessage:
    conversation = conversation_at(int(item["chat_id"]))
    return StoredMessage(
        id=item["id"],
        chat_id=conversation.chat_id,
        topic=conversation.topic,
        account=conversation.account,
        role=item["role"],
        content=item["content"],
        created_at=item["created_at"],
        turn_id=item.get("turn_id"),
        update_id=int(item["update_id"]) if "update_id" in item else None,
        tool_calls=json.loads(item["tool_calls"]) if "tool_calls" in item else [],
        attachment=Attachment.model_validate_json(item["attachment"]) if "attachment" in item else None,
        heard=Heard.model_validate_json(item["heard"]) if "heard" in item else None,
        forwarded=json.loads(item["forwarded"]) if "forwarded" in item else None,  # the model validates it
        sender=item.get("sender"),
    )
