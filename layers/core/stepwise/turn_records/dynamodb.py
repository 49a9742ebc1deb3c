"""Turn records in DynamoDB: partition key turn_id, sort key `meta` | `step#NNN` | `reply` |
`heard#<message id>` (a voice note's transcript), TTL expires_at.

The reply's delivery state is kept in attributes of its own beside `data`: `sent_chunks`, `voice_sent`, a
new token's `token_seed` (removed once settled) and `token_revoked`, and the thread of the topic /new opened
(`topic_thread`). A reply recorded before issue 40 keeps its extra in flat fields of `data` (`Reply` reads
both)."""

from __future__ import annotations

import json
import time
from typing import Any

from botocore.exceptions import ClientError

from stepwise.media.models import Heard
from stepwise.turn_records.models import ModelStep, NewToken, Reply, TurnMeta

# Kept beside `data`, changed while the reply is delivered.
_DELIVERY_STATE: dict[str, Any] = {
    "sent_chunks": True,
    "voice_sent": True,
    "extra": {"seed", "revoked", "thread"},
}


class DynamoTurnStore:
    """TurnStore on a DynamoDB table resource; records expire after `ttl_days`."""

    def __init__(self, table: Any, ttl_days: int) -> None:
        self._table = table
        self._ttl_seconds = ttl_days * 86_400

    def _expiry(self) -> int:
        return int(time.time()) + self._ttl_seconds

    def put_meta(self, meta: TurnMeta) -> None:
        self._table.put_item(
            Item={
                "turn_id": meta.turn_id,
                "sk": "meta",
                "data": meta.model_dump_json(),
                "expires_at": self._expiry(),
            }
        )

    def get_meta(self, turn_id: str) -> TurnMeta:
        item = self._table.get_item(Key={"turn_id": turn_id, "sk": "meta"}, ConsistentRead=True).get("Item")
        if item is None:
            raise KeyError(f"unknown turn {turn_id}")
        return TurnMeta.model_validate_json(item["data"])

    def put_step(self, turn_id: str, step: ModelStep) -> None:
        self._table.put_item(
            Item={
                "turn_id": turn_id,
                "sk": f"step#{step.step:03d}",
                "data": step.model_dump_json(),
                "expires_at": self._expiry(),
            }
        )

    def get_step(self, turn_id: str, step: int) -> ModelStep:
        key = {"turn_id": turn_id, "sk": f"step#{step:03d}"}
        item = self._table.get_item(Key=key, ConsistentRead=True).get("Item")
        if item is None:
            raise KeyError(f"turn {turn_id} has no step {step}")
        return ModelStep.model_validate_json(item["data"])

    def steps(self, turn_id: str) -> list[ModelStep]:
        response = self._table.query(
            KeyConditionExpression="turn_id = :t AND begins_with(sk, :p)",
            ExpressionAttributeValues={":t": turn_id, ":p": "step#"},
            ConsistentRead=True,
        )
        return [ModelStep.model_validate_json(item["data"]) for item in response.get("Items", [])]

    def put_reply(self, turn_id: str, reply: Reply) -> Reply:
        item: dict[str, Any] = {
            "turn_id": turn_id,
            "sk": "reply",
            "data": reply.model_dump_json(exclude=_DELIVERY_STATE),
            "sent_chunks": 0,
            "expires_at": self._expiry(),
        }
        if isinstance(reply.extra, NewToken) and reply.extra.seed is not None:
            item["token_seed"] = reply.extra.seed
        try:
            self._table.put_item(
                Item=item,
                ConditionExpression="attribute_not_exists(sk) OR sent_chunks = :zero",
                ExpressionAttributeValues={":zero": 0},
            )
        except ClientError as error:
            if error.response["Error"]["Code"] != "ConditionalCheckFailedException":
                raise
            existing = self.get_reply(turn_id)
            assert existing is not None
            return existing
        return reply

    def get_reply(self, turn_id: str) -> Reply | None:
        item = self._table.get_item(Key={"turn_id": turn_id, "sk": "reply"}, ConsistentRead=True).get("Item")
        if item is None:
            return None
        data = json.loads(item["data"])
        data["sent_chunks"] = int(item.get("sent_chunks", 0))
        data["voice_sent"] = bool(item.get("voice_sent", False))
        delivery = {
            "token_seed": item.get("token_seed"),
            "token_revoked": bool(item.get("token_revoked", False)),
            "topic_thread": int(item["topic_thread"]) if "topic_thread" in item else None,
        }
        extra = data.get("extra")
        if "extra" not in data:  # recorded before issue 40: `Reply` folds the flat fields
            data.update(delivery)
        elif extra is not None and extra["kind"] == "new_token":
            extra.update(seed=delivery["token_seed"], revoked=delivery["token_revoked"])
        elif extra is not None and extra["kind"] == "new_topic":
            extra["thread"] = delivery["topic_thread"]
        return Reply.model_validate(data)

    def mark_sent(self, turn_id: str, sent_chunks: int) -> None:
        self._table.update_item(
            Key={"turn_id": turn_id, "sk": "reply"},
            UpdateExpression="SET sent_chunks = :n",
            ExpressionAttributeValues={":n": sent_chunks},
        )

    def settle_token(self, turn_id: str, revoked: bool) -> None:
        self._table.update_item(
            Key={"turn_id": turn_id, "sk": "reply"},
            UpdateExpression="REMOVE token_seed SET token_revoked = :revoked",
            ExpressionAttributeValues={":revoked": revoked},
        )

    def set_topic_thread(self, turn_id: str, thread: int) -> None:
        self._table.update_item(
            Key={"turn_id": turn_id, "sk": "reply"},
            UpdateExpression="SET topic_thread = :t",
            ExpressionAttributeValues={":t": thread},
        )

    def mark_voice_sent(self, turn_id: str) -> None:
        self._table.update_item(
            Key={"turn_id": turn_id, "sk": "reply"},
            UpdateExpression="SET voice_sent = :on",
            ExpressionAttributeValues={":on": True},
        )

    def put_heard(self, turn_id: str, message_id: str, heard: Heard) -> None:
        self._table.put_item(
            Item={
                "turn_id": turn_id,
                "sk": f"heard#{message_id}",
                "data": heard.model_dump_json(exclude_none=True),
                "expires_at": self._expiry(),
            }
        )

    def heard(self, turn_id: str, message_id: str) -> Heard | None:
        key = {"turn_id": turn_id, "sk": f"heard#{message_id}"}
        item = self._table.get_item(Key=key, ConsistentRead=True).get("Item")
        return Heard.model_validate_json(item["data"]) if item else None
