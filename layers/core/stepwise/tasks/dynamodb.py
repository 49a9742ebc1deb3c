"""Tasks in DynamoDB: partition key user_id, sort key task_id; item task_id 0 holds the user's id counter."""

from __future__ import annotations

from typing import Any

from boto3.dynamodb.conditions import Key
from botocore.exceptions import ClientError

from stepwise.tasks.models import Task, TaskStatusFilter

COUNTER_ID = 0


class DynamoTaskRepository:
    """TaskRepository on a DynamoDB table resource."""

    def __init__(self, table: Any) -> None:
        self._table = table

    def _next_id(self, user_id: int) -> int:
        response = self._table.update_item(
            Key={"user_id": user_id, "task_id": COUNTER_ID},
            UpdateExpression="ADD next_id :one",
            ExpressionAttributeValues={":one": 1},
            ReturnValues="UPDATED_NEW",
        )
        return int(response["Attributes"]["next_id"])

    def add(self, user_id: int, title: str, description: str, now: str) -> Task:
        task = Task(
            user_id=user_id,
            task_id=self._next_id(user_id),
            title=title,
            description=description,
            created_at=now,
            updated_at=now,
        )
        self._table.put_item(Item=_to_item(task), ConditionExpression="attribute_not_exists(task_id)")
        return task

    def list(self, user_id: int, status: TaskStatusFilter) -> list[Task]:
        kwargs: dict[str, Any] = {"KeyConditionExpression": Key("user_id").eq(user_id) & Key("task_id").gt(0)}
        tasks: list[Task] = []
        while True:
            response = self._table.query(**kwargs)
            tasks.extend(_from_item(item) for item in response.get("Items", []))
            if "LastEvaluatedKey" not in response:
                break
            kwargs["ExclusiveStartKey"] = response["LastEvaluatedKey"]
        return [t for t in tasks if status == "all" or t.status == status]

    def get(self, user_id: int, task_id: int) -> Task | None:
        if task_id <= COUNTER_ID:
            return None
        item = self._table.get_item(Key={"user_id": user_id, "task_id": task_id}, ConsistentRead=True).get(
            "Item"
        )
        return _from_item(item) if item else None

    def _update(self, user_id: int, task_id: int, values: dict[str, Any]) -> Task | None:
        if task_id <= COUNTER_ID:
            return None
        names = {f"#{k}": k for k in values}
        try:
            response = self._table.update_item(
                Key={"user_id": user_id, "task_id": task_id},
                UpdateExpression="SET " + ", ".join(f"#{k} = :{k}" for k in values),
                ConditionExpression="attribute_exists(task_id)",
                ExpressionAttributeNames=names,
                ExpressionAttributeValues={f":{k}": v for k, v in values.items()},
                ReturnValues="ALL_NEW",
            )
        except ClientError as error:
            if error.response["Error"]["Code"] == "ConditionalCheckFailedException":
                return None
            raise
        return _from_item(response["Attributes"])

    def update(
        self, user_id: int, task_id: int, *, title: str | None, description: str | None, now: str
    ) -> Task | None:
        values: dict[str, Any] = {"updated_at": now}
        if title is not None:
            values["title"] = title
        if description is not None:
            values["description"] = description
        return self._update(user_id, task_id, values)

    def complete(self, user_id: int, task_id: int, now: str) -> Task | None:
        return self._update(user_id, task_id, {"status": "completed", "completed_at": now, "updated_at": now})

    def delete(self, user_id: int, task_id: int) -> Task | None:
        if task_id <= COUNTER_ID:
            return None
        response = self._table.delete_item(
            Key={"user_id": user_id, "task_id": task_id}, ReturnValues="ALL_OLD"
        )
        item = response.get("Attributes")
        return _from_item(item) if item else None


def _to_item(task: Task) -> dict[str, Any]:
    return {k: v for k, v in task.model_dump().items() if v is not None}


def _from_item(item: dict[str, Any]) -> Task:
    data = dict(item)
    data["user_id"], data["task_id"] = int(data["user_id"]), int(data["task_id"])
    return Task.model_validate(data)
