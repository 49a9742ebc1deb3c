"""Audit entries in DynamoDB: partition key user_id, sort key `created_at#tool_use_id`."""

from __future__ import annotations

import json
from typing import Any

from boto3.dynamodb.conditions import Key

from stepwise.audit.log import AuditEntry

MAX_RESULT_CHARS = 2000


class DynamoAuditLog:
    """AuditLog on a DynamoDB table resource."""

    def __init__(self, table: Any) -> None:
        self._table = table

    def record(self, entry: AuditEntry) -> None:
        item = entry.model_dump()
        item["sk"] = f"{entry.created_at}#{entry.tool_use_id}"
        item["arguments"] = json.dumps(entry.arguments, ensure_ascii=False)
        item["result"] = entry.result[:MAX_RESULT_CHARS]
        self._table.put_item(Item=item)

    def entries(self, user_id: int) -> list[AuditEntry]:
        response = self._table.query(KeyConditionExpression=Key("user_id").eq(user_id))
        entries = []
        for item in response.get("Items", []):
            data = {k: v for k, v in item.items() if k != "sk"}
            data["user_id"], data["chat_id"] = int(data["user_id"]), int(data["chat_id"])
            data["arguments"] = json.loads(data["arguments"])
            entries.append(AuditEntry.model_validate(data))
        return entries
