"""Tasks in DynamoDB: partition key user_id, sort key task_id; item task_id 0 holds the user's last id.

Every change is one TransactWriteItems: the change, conditioned on the state it was computed from (the last
id for add, the task's updated_at otherwise), and for a tool call its ledger record, conditioned on not
existing. A lost race reads again and retries, so ids stay gapless; a call whose record exists changes
nothing and raises CallAlreadyRecorded with the result its first run returned.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from boto3.dynamodb.conditions import Key
from botocore.exceptions import ClientError

from stepwise.aws.dynamodb_pages import all_items
from stepwise.ledger.models import CallAlreadyRecorded, Once
from stepwise.tasks.models import Task, TaskStatusFilter, task_changes

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from stepwise.ledger.dynamodb import DynamoToolCallLedger

COUNTER_ID = 0
MAX_ATTEMPTS = 5
# Cancellation reasons after which reading again and retrying can succeed ("None": that action was fine).
RETRYABLE = frozenset({"None", "ConditionalCheckFailed", "TransactionConflict"})
SAME_VERSION = {
    "ConditionExpression": "#updated = :seen",
    "ExpressionAttributeNames": {"#updated": "updated_at"},
}


class TaskConflictError(RuntimeError):
    """The user's tasks kept changing between reading and writing."""


class DynamoTaskRepository:
    """TaskRepository on a DynamoDB table resource; `once` records go to `ledger`."""

    def __init__(self, table: Any, ledger: DynamoToolCallLedger | None = None) -> None:
        self._table = table
        self._client = table.meta.client
        self._ledger = ledger

    def _last_id(self, user_id: int) -> int:
        item = self._table.get_item(
            Key={"user_id": user_id, "task_id": COUNTER_ID},
            ConsistentRead=True,
            ProjectionExpression="next_id",
        ).get("Item")
        return int(item["next_id"]) if item and "next_id" in item else 0

    def add(
        self,
        user_id: int,
        title: str,
        description: str,
        now: str,
        once: Once[Task] | None = None,
        due: str | None = None,
    ) -> Task:
        for _ in range(MAX_ATTEMPTS):
            last = self._last_id(user_id)
            task = Task(
                user_id=user_id,
                task_id=last + 1,
                title=title,
                description=description,
                due=due or None,
                created_at=now,
                updated_at=now,
            )
            counter: dict[str, Any] = {
                "TableName": self._table.name,
                "Key": {"user_id": user_id, "task_id": COUNTER_ID},
                "UpdateExpression": "SET next_id = :id",
                "ConditionExpression": "next_id = :last" if last else "attribute_not_exists(next_id)",
                "ExpressionAttributeValues": {":id": task.task_id, **({":last": last} if last else {})},
            }
            put: dict[str, Any] = {
                "TableName": self._table.name,
                "Item": _to_item(task),
                "ConditionExpression": "attribute_not_exists(task_id)",
            }
            if self._commit([{"Update": counter}, {"Put": put}], task, once):
                return task
        raise TaskConflictError(f"could not add a task for user {user_id} after {MAX_ATTEMPTS} attempts")

    def list(self, user_id: int, status: TaskStatusFilter) -> list[Task]:
        condition = Key("user_id").eq(user_id) & Key("task_id").gt(0)
        tasks = [_from_item(item) for item in all_items(self._table.query, KeyConditionExpression=condition)]
        return [t for t in tasks if status == "all" or t.status == status]

    def get(self, user_id: int, task_id: int) -> Task | None:
        if task_id <= COUNTER_ID:
            return None
        item = self._table.get_item(Key={"user_id": user_id, "task_id": task_id}, ConsistentRead=True).get(
            "Item"
        )
        return _from_item(item) if item else None

    def update(
        self,
        user_id: int,
        task_id: int,
        *,
        title: str | None,
        description: str | None,
        now: str,
        once: Once[Task] | None = None,
        due: str | None = None,
    ) -> Task | None:
        changes = task_changes(now, title, description, due)
        return self._change(user_id, task_id, once, lambda task: task.model_copy(update=changes))

    def complete(self, user_id: int, task_id: int, now: str, once: Once[Task] | None = None) -> Task | None:
        changes = {"status": "completed", "completed_at": now, "updated_at": now}
        return self._change(user_id, task_id, once, lambda task: task.model_copy(update=changes))

    def delete(self, user_id: int, task_id: int, once: Once[Task] | None = None) -> Task | None:
        return self._change(user_id, task_id, once, None)

    def _change(
        self, user_id: int, task_id: int, once: Once[Task] | None, change: Callable[[Task], Task] | None
    ) -> Task | None:
        """Replace the task with `change(task)`, or delete it when `change` is None; returns the new task
        (the deleted one), or None when the user has no such task."""
        for _ in range(MAX_ATTEMPTS):
            current = self.get(user_id, task_id)
            if current is None:
                self._raise_if_recorded(once)
                return None
            guard = {**SAME_VERSION, "ExpressionAttributeValues": {":seen": current.updated_at}}
            if change is None:
                key = {"user_id": user_id, "task_id": task_id}
                action, result = {"Delete": {"TableName": self._table.name, "Key": key, **guard}}, current
            else:
                result = change(current)
                action = {"Put": {"TableName": self._table.name, "Item": _to_item(result), **guard}}
            if self._commit([action], result, once):
                return result
        raise TaskConflictError(f"task #{task_id} of user {user_id} kept changing")

    def _commit(self, actions: Sequence[dict[str, Any]], value: Task, once: Once[Task] | None) -> bool:
        """Run the actions (and the call's ledger record) as one transaction; False when a race was lost."""
        if once is not None:
            actions = [*actions, self._ledger_for(once).put_action(once.record(value))]
        try:
            self._client.transact_write_items(TransactItems=actions)
        except ClientError as error:
            if error.response["Error"]["Code"] != "TransactionCanceledException":
                raise
            reasons = [reason.get("Code", "None") for reason in error.response.get("CancellationReasons", [])]
            if once is not None and (not reasons or reasons[-1] == "ConditionalCheckFailed"):
                self._raise_if_recorded(once)
            if not reasons or not set(reasons) <= RETRYABLE:
                raise
            return False
        return True

    def _ledger_for(self, once: Once[Task]) -> DynamoToolCallLedger:
        if self._ledger is None:
            raise RuntimeError(f"tool call {once.call_id}: this task repository has no tool-call ledger")
        return self._ledger

    def _raise_if_recorded(self, once: Once[Task] | None) -> None:
        if once is not None:
            recorded = self._ledger_for(once).get(once.call_id)
            if recorded is not None:
                raise CallAlreadyRecorded(recorded)


def _to_item(task: Task) -> dict[str, Any]:
    return {k: v for k, v in task.model_dump().items() if v is not None}


def _from_item(item: dict[str, Any]) -> Task:
    data = dict(item)
    data["user_id"], data["task_id"] = int(data["user_id"]), int(data["task_id"])
    return Task.model_validate(data)
