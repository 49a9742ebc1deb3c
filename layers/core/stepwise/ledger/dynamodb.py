"""The tool-call ledger in DynamoDB: partition key call_id, TTL expires_at.

Stores that can join a DynamoDB transaction put their `done` record with `put_action`, in the same
TransactWriteItems as the effect; the record's condition (`attribute_not_exists`) is what makes the effect
happen once.
"""

from __future__ import annotations

import time
from typing import Any

from botocore.exceptions import ClientError

from stepwise.ledger.models import ToolCallRecord


class DynamoToolCallLedger:
    """ToolCallLedger on a DynamoDB table resource; records expire after `ttl_days`."""

    def __init__(self, table: Any, ttl_days: int) -> None:
        self.table = table
        self._ttl_seconds = ttl_days * 86_400

    def _item(self, record: ToolCallRecord) -> dict[str, Any]:
        return {**record.model_dump(), "expires_at": int(time.time()) + self._ttl_seconds}

    def get(self, call_id: str) -> ToolCallRecord | None:
        item = self.table.get_item(Key={"call_id": call_id}, ConsistentRead=True).get("Item")
        if item is None:
            return None
        return ToolCallRecord.model_validate({k: v for k, v in item.items() if k != "expires_at"})

    def record_intent(self, call_id: str, result: str, ref: str = "") -> ToolCallRecord:
        record = ToolCallRecord(call_id=call_id, result=result, kind="intent", ref=ref)
        try:
            self.table.put_item(Item=self._item(record), ConditionExpression="attribute_not_exists(call_id)")
        except ClientError as error:
            if error.response["Error"]["Code"] != "ConditionalCheckFailedException":
                raise
            existing = self.get(call_id)
            if existing is None:  # expired between the two requests: a retry days late
                raise
            return existing
        return record

    def complete(self, call_id: str, result: str, is_error: bool = False) -> None:
        record = ToolCallRecord(call_id=call_id, result=result, kind="done", is_error=is_error)
        self.table.put_item(Item=self._item(record))

    def put_action(self, record: ToolCallRecord) -> dict[str, Any]:
        """The TransactWriteItems action that records the call unless it has a record already."""
        return {
            "Put": {
                "TableName": self.table.name,
                "Item": self._item(record),
                "ConditionExpression": "attribute_not_exists(call_id)",
            }
        }
