"""Reminders in DynamoDB: partition key user_id; sort key `r#<number>` (a reminder), `counter` (the user's
last reminder number) or `profile` (the user's time zone, and `accounts`: a string set of the OAuth servers
their accounts are marked at)."""

from __future__ import annotations

from typing import Any

from stepwise.aws.dynamodb_pages import all_items
from stepwise.reminders.models import Reminder
from stepwise.reminders.store import Profile

COUNTER = "counter"
PROFILE = "profile"


def reminder_key(reminder_id: int) -> str:
    return f"r#{reminder_id:010d}"


class DynamoReminderStore:
    """The ReminderStore on the reminders table."""

    def __init__(self, table: Any) -> None:
        self._table = table

    def allocate_id(self, user_id: int) -> int:
        item = self._table.update_item(
            Key={"user_id": user_id, "sk": COUNTER},
            UpdateExpression="ADD last_id :one",
            ExpressionAttributeValues={":one": 1},
            ReturnValues="UPDATED_NEW",
        )["Attributes"]
        return int(item["last_id"])

    def put(self, reminder: Reminder) -> None:
        item = {**reminder.model_dump(exclude_none=True), "sk": reminder_key(reminder.reminder_id)}
        self._table.put_item(Item=item)

    def get(self, user_id: int, reminder_id: int) -> Reminder | None:
        item = self._table.get_item(
            Key={"user_id": user_id, "sk": reminder_key(reminder_id)}, ConsistentRead=True
        ).get("Item")
        return _reminder(item) if item else None

    def list(self, user_id: int) -> list[Reminder]:
        items = all_items(
            self._table.query,
            KeyConditionExpression="user_id = :u AND begins_with(sk, :r)",
            ExpressionAttributeValues={":u": user_id, ":r": "r#"},
            ConsistentRead=True,
        )
        return [_reminder(item) for item in items]

    def delete(self, user_id: int, reminder_id: int) -> None:
        self._table.delete_item(Key={"user_id": user_id, "sk": reminder_key(reminder_id)})

    def timezone(self, user_id: int) -> str | None:
        item = self._table.get_item(Key={"user_id": user_id, "sk": PROFILE}).get("Item")
        return str(item["timezone"]) if item and item.get("timezone") else None

    def set_timezone(self, user_id: int, name: str) -> None:
        self._table.update_item(
            Key={"user_id": user_id, "sk": PROFILE},
            UpdateExpression="SET #tz = :tz",
            ExpressionAttributeNames={"#tz": "timezone"},
            ExpressionAttributeValues={":tz": name},
        )

    def profile(self, user_id: int) -> Profile:
        item = self._table.get_item(Key={"user_id": user_id, "sk": PROFILE}).get("Item") or {}
        zone = item.get("timezone")
        return Profile(str(zone) if zone else None, frozenset(str(name) for name in item.get("accounts", ())))

    def mark_account(self, user_id: int, server: str) -> None:
        self._update_accounts(user_id, "ADD", server)

    def unmark_account(self, user_id: int, server: str) -> None:
        self._update_accounts(user_id, "DELETE", server)

    def _update_accounts(self, user_id: int, action: str, server: str) -> None:
        # A string set: ADD and DELETE of one member are idempotent, and DELETE removes an emptied set.
        self._table.update_item(
            Key={"user_id": user_id, "sk": PROFILE},
            UpdateExpression=f"{action} accounts :server",
            ExpressionAttributeValues={":server": {server}},
        )


def _reminder(item: dict[str, Any]) -> Reminder:
    return Reminder.model_validate({k: v for k, v in item.items() if k != "sk"})
