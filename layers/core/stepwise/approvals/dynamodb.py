"""Approval requests in DynamoDB: partition key approval_id, TTL expires_at; the index ByUser (user_id,
created_at) finds a user's recent requests."""

from __future__ import annotations

import time
from typing import Any

from botocore.exceptions import ClientError

from stepwise.approvals.models import ApprovalRequest, ApprovalStatus
from stepwise.aws.dynamodb_pages import all_items

BY_USER_INDEX = "ByUser"


class DynamoApprovalStore:
    """ApprovalStore on a DynamoDB table resource; records expire `ttl_seconds` after creation."""

    def __init__(self, table: Any, ttl_seconds: int) -> None:
        self._table = table
        self._ttl_seconds = ttl_seconds

    def create(self, request: ApprovalRequest) -> None:
        item = request.model_dump(mode="json", exclude_none=True)
        item["expires_at"] = int(time.time()) + self._ttl_seconds
        self._table.put_item(Item=item, ConditionExpression="attribute_not_exists(approval_id)")

    def get(self, approval_id: str) -> ApprovalRequest | None:
        item = self._table.get_item(Key={"approval_id": approval_id}, ConsistentRead=True).get("Item")
        return None if item is None else _request(item)

    def pending(self, user_id: int, since: str) -> list[ApprovalRequest]:
        items = all_items(
            self._table.query,
            IndexName=BY_USER_INDEX,
            KeyConditionExpression="user_id = :u AND created_at >= :since",
            FilterExpression="#status = :pending",
            ExpressionAttributeNames={"#status": "status"},
            ExpressionAttributeValues={":u": user_id, ":since": since, ":pending": "pending"},
        )
        return [_request(item) for item in items]

    def _set(self, approval_id: str, values: dict[str, Any]) -> None:
        self._table.update_item(
            Key={"approval_id": approval_id},
            ConditionExpression="attribute_exists(approval_id)",
            UpdateExpression="SET " + ", ".join(f"#{k} = :{k}" for k in values),
            ExpressionAttributeNames={f"#{k}": k for k in values},
            ExpressionAttributeValues={f":{k}": v for k, v in values.items()},
        )

    def attach_token(self, approval_id: str, task_token: str) -> None:
        self._set(approval_id, {"task_token": task_token})

    def attach_message(self, approval_id: str, message_id: int, message_html: str) -> None:
        self._set(approval_id, {"message_id": message_id, "message_html": message_html})

    def decide(
        self,
        approval_id: str,
        status: ApprovalStatus,
        now: str,
        by: int | None,
        expected: ApprovalStatus = "pending",
    ) -> bool:
        values: dict[str, Any] = {"status": status, "decided_at": now}
        if by is not None:
            values["decided_by"] = by
        try:
            self._table.update_item(
                Key={"approval_id": approval_id},
                ConditionExpression="#status = :expected",
                UpdateExpression="SET " + ", ".join(f"#{k} = :{k}" for k in values),
                ExpressionAttributeNames={f"#{k}": k for k in values},
                ExpressionAttributeValues={":expected": expected, **{f":{k}": v for k, v in values.items()}},
            )
        except ClientError as error:
            if error.response["Error"]["Code"] == "ConditionalCheckFailedException":
                return False
            raise
        return True


def _request(item: dict[str, Any]) -> ApprovalRequest:
    data = {k: v for k, v in item.items() if k != "expires_at"}
    for key in ("chat_id", "topic", "account", "user_id", "step", "message_id", "decided_by"):
        if key in data:
            data[key] = int(data[key])
    return ApprovalRequest.model_validate(data)
