"""The inbox in DynamoDB: partition key chat_id (the conversation's key, see
`stepwise.aws.conversation_key`); sort key `lease` (the conversation's lease), `q#<update_id>` (a message
waiting or being answered) or `d#<update_id>` (a delivered update, kept so that Telegram's retries
stay duplicates). Queue and done items expire by TTL (`expires_at`)."""

from __future__ import annotations

from typing import Any

from botocore.exceptions import ClientError

from stepwise.aws.conversation_key import conversation_at, conversation_key
from stepwise.aws.dynamodb_pages import all_items
from stepwise.inbox.models import Enqueued, NewLease, QueuedMessage, turn_name
from stepwise.telegram.conversation import Conversation

LEASE = "lease"


def queue_key(update_id: int) -> str:
    return f"q#{update_id:020d}"


def done_key(update_id: int) -> str:
    return f"d#{update_id:020d}"


def _failed_condition(error: ClientError) -> bool:
    return bool(error.response["Error"]["Code"] == "ConditionalCheckFailedException")


class DynamoChatInbox:
    """ChatInbox on a DynamoDB table resource."""

    def __init__(self, table: Any) -> None:
        self._table = table
        self._name = table.name

    def enqueue(self, message: QueuedMessage, expires_at: int) -> Enqueued:
        item = _to_item(message) | {"expires_at": expires_at}
        try:
            self._table.meta.client.transact_write_items(
                TransactItems=[
                    {
                        "ConditionCheck": {
                            "TableName": self._name,
                            "Key": {
                                "chat_id": conversation_key(message.conversation),
                                "sk": done_key(message.update_id),
                            },
                            "ConditionExpression": "attribute_not_exists(sk)",
                        }
                    },
                    {
                        "Put": {
                            "TableName": self._name,
                            "Item": item,
                            "ConditionExpression": "attribute_not_exists(sk)",
                        }
                    },
                ]
            )
        except ClientError as error:
            if error.response["Error"]["Code"] != "TransactionCanceledException":
                raise
            reasons = [r.get("Code") for r in error.response.get("CancellationReasons", [])]
            if reasons and reasons[0] == "ConditionalCheckFailed":
                return "done"
            stored = self._get(message.conversation, queue_key(message.update_id))
            if stored is not None:
                return _from_item(stored).status
            if self._get(message.conversation, done_key(message.update_id)) is not None:
                return "done"  # finished between the transaction and this read
            raise
        return "new"

    def pending(self, conversation: Conversation) -> list[QueuedMessage]:
        items = all_items(
            self._table.query,
            KeyConditionExpression="chat_id = :c AND begins_with(sk, :q)",
            ExpressionAttributeValues={":c": conversation_key(conversation), ":q": "q#"},
            ConsistentRead=True,
        )
        return [_from_item(item) for item in items]

    def take(self, message: QueuedMessage, turn_id: str, claimed_at: str) -> QueuedMessage | None:
        try:
            response = self._table.update_item(
                Key={"chat_id": conversation_key(message.conversation), "sk": queue_key(message.update_id)},
                UpdateExpression="SET #s = :taken, turn_id = :t, claimed_at = if_not_exists(claimed_at, :at)",
                ConditionExpression="#s = :queued OR turn_id = :t",
                ExpressionAttributeNames={"#s": "status"},
                ExpressionAttributeValues={
                    ":taken": "taken",
                    ":queued": "queued",
                    ":t": turn_id,
                    ":at": claimed_at,
                },
                ReturnValues="ALL_NEW",
            )
        except ClientError as error:
            if _failed_condition(error):
                return None
            raise
        return _from_item(response["Attributes"])

    def finish(self, message: QueuedMessage, done_expires_at: int) -> None:
        # The done marker first: a crash in between leaves both, which still reads as "done" to the webhook.
        self._table.put_item(
            Item={
                "chat_id": conversation_key(message.conversation),
                "sk": done_key(message.update_id),
                "turn_id": message.turn_id or "",
                "expires_at": done_expires_at,
            }
        )
        self._table.delete_item(
            Key={"chat_id": conversation_key(message.conversation), "sk": queue_key(message.update_id)}
        )

    def give_back(self, message: QueuedMessage) -> None:
        try:
            self._table.update_item(
                Key={"chat_id": conversation_key(message.conversation), "sk": queue_key(message.update_id)},
                UpdateExpression="SET #s = :queued, requeues = :n REMOVE turn_id",
                ConditionExpression="turn_id = :t",
                ExpressionAttributeNames={"#s": "status"},
                ExpressionAttributeValues={
                    ":queued": "queued",
                    ":n": message.requeues + 1,
                    ":t": message.turn_id,
                },
            )
        except ClientError as error:
            if not _failed_condition(error):
                raise

    def acquire_new(
        self, conversation: Conversation, update_id: int, now: int, lease_seconds: int
    ) -> NewLease | None:
        for _ in range(3):  # a lost race with another acquirer re-reads the generation
            item = self._get(conversation, LEASE) or {}
            if "holder" in item and int(item["lease_expires_at"]) >= now:
                return None
            generation = int(item.get("generation", 0))
            name = turn_name(conversation, generation + 1, update_id)
            try:
                self._table.update_item(
                    Key={"chat_id": conversation_key(conversation), "sk": LEASE},
                    UpdateExpression=(
                        "SET holder = :h, lease_expires_at = :until, generation = :next, started_at = :now"
                    ),
                    ConditionExpression=(
                        "(attribute_not_exists(generation) OR generation = :g) "
                        "AND (attribute_not_exists(holder) OR lease_expires_at < :now)"
                    ),
                    ExpressionAttributeValues={
                        ":h": name,
                        ":until": now + lease_seconds,
                        ":next": generation + 1,
                        ":g": generation,
                        ":now": now,
                    },
                )
            except ClientError as error:
                if _failed_condition(error):
                    continue
                raise
            previous = item.get("started_at")
            return NewLease(name, int(previous) if previous is not None else None)
        return None

    def reacquire(self, conversation: Conversation, holder: str, now: int, lease_seconds: int) -> bool:
        try:
            self._table.update_item(
                Key={"chat_id": conversation_key(conversation), "sk": LEASE},
                UpdateExpression="SET holder = :h, lease_expires_at = :until",
                ConditionExpression="attribute_not_exists(holder) OR holder = :h OR lease_expires_at < :now",
                ExpressionAttributeValues={":h": holder, ":until": now + lease_seconds, ":now": now},
            )
        except ClientError as error:
            if _failed_condition(error):
                return False
            raise
        return True

    def release(self, conversation: Conversation, holder: str) -> bool:
        try:
            self._table.update_item(
                Key={"chat_id": conversation_key(conversation), "sk": LEASE},
                UpdateExpression="REMOVE holder, lease_expires_at",
                ConditionExpression="holder = :h",
                ExpressionAttributeValues={":h": holder},
            )
        except ClientError as error:
            if _failed_condition(error):
                return False
            raise
        return True

    def holder(self, conversation: Conversation) -> tuple[str, int] | None:
        item = self._get(conversation, LEASE)
        if item is None or "holder" not in item:
            return None
        return str(item["holder"]), int(item["lease_expires_at"])

    def _get(self, conversation: Conversation, sort_key: str) -> dict[str, Any] | None:
        item: dict[str, Any] | None = self._table.get_item(
            Key={"chat_id": conversation_key(conversation), "sk": sort_key}, ConsistentRead=True
        ).get("Item")
        return item


def _to_item(message: QueuedMessage) -> dict[str, Any]:
    item: dict[str, Any] = {
        "chat_id": conversation_key(message.conversation),
        "sk": queue_key(message.update_id),
        "message": message.model_dump_json(
            include={
                "chat_id",
                "topic",
                "update_id",
                "user_id",
                "id",
                "text",
                "sender",
                "chat_title",
                "received_at",
                "telegram_message_id",
                "kind",
                "attachment",
                "forwarded",
            },
            exclude_none=True,
        ),
        "status": message.status,
        "requeues": message.requeues,
    }
    if message.turn_id is not None:
        item["turn_id"] = message.turn_id
    return item


def _from_item(item: dict[str, Any]) -> QueuedMessage:
    conversation = conversation_at(int(item["chat_id"]))
    return QueuedMessage.model_validate_json(item["message"]).model_copy(
        update={
            "chat_id": conversation.chat_id,
            "topic": conversation.topic,
            "account": conversation.account,
            "status": item.get("status", "queued"),
            "turn_id": item.get("turn_id"),
            "claimed_at": item.get("claimed_at"),
            "requeues": int(item.get("requeues", 0)),
        }
    )
