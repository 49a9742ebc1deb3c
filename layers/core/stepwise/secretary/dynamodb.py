"""Business connections in DynamoDB (SecretaryTable: partition key `pk`, sort key `sk`, TTL `expires_at`).

A connection is the item `conn#<id>` / `conn`, holding `SecretaryConnection`'s fields. An owner's items share
the partition `owner#<user id>`: `settings` (`off`, and `muted`, a map of `muted_key` to the name as muted),
and one `conn#<id>` per connection of their account, written before the connection itself (`of_owner` reads
the ones whose connection exists); one `sugg#<contact's chat>` per chat with a suggestion (`Suggestion`'s
fields), and one `prompt#<message id>` per Edit prompt (expiring after two days).
"""

from __future__ import annotations

import time
from typing import Any

from botocore.exceptions import ClientError

from stepwise.secretary.connections import Flag, SecretaryConnection
from stepwise.secretary.owners import OwnerSettings, muted_key
from stepwise.secretary.suggestions import OPEN_STATUSES, Suggestion, SuggestionStatus

CONNECTION_SK = "conn"
SETTINGS_SK = "settings"


def connection_key(connection_id: str) -> dict[str, str]:
    return {"pk": f"conn#{connection_id}", "sk": CONNECTION_SK}


def owner_pk(owner_id: int) -> str:
    return f"owner#{owner_id}"


def settings_key(owner_id: int) -> dict[str, str]:
    return {"pk": owner_pk(owner_id), "sk": SETTINGS_SK}


def _condition_failed(error: ClientError) -> bool:
    return bool(error.response.get("Error", {}).get("Code") == "ConditionalCheckFailedException")


class DynamoBusinessConnectionStore:
    """The secretary's BusinessConnectionStore on its table."""

    def __init__(self, table: Any) -> None:
        self._table = table

    def get(self, connection_id: str) -> SecretaryConnection | None:
        item = self._table.get_item(Key=connection_key(connection_id), ConsistentRead=True).get("Item")
        if item is None:
            return None
        return SecretaryConnection(
            connection_id=connection_id,
            owner_id=int(item["owner_id"]),
            owner_chat_id=int(item["owner_chat_id"]),
            owner_name=str(item.get("owner_name", "")),
            may_reply=bool(item["may_reply"]),
            enabled=bool(item["enabled"]),
            date=int(item["date"]),
            welcomed=bool(item.get("welcomed", False)),
            stop_told=bool(item.get("stop_told", False)),
        )

    def save(self, connection: SecretaryConnection) -> None:
        self._table.put_item(  # the owner's index first: a crash before the connection leaves no dangling one
            Item={
                "pk": owner_pk(connection.owner_id),
                "sk": f"conn#{connection.connection_id}",
                "connection_id": connection.connection_id,
            }
        )
        try:
            self._table.update_item(
                Key=connection_key(connection.connection_id),
                UpdateExpression=(
                    "SET owner_id = :owner, owner_chat_id = :chat, owner_name = :name, may_reply = :reply, "
                    "enabled = :enabled, #date = :date, welcomed = if_not_exists(welcomed, :no), "
                    "stop_told = if_not_exists(stop_told, :no)"
                ),
                ConditionExpression="attribute_not_exists(#date) OR #date <= :date",
                ExpressionAttributeNames={"#date": "date"},
                ExpressionAttributeValues={
                    ":owner": connection.owner_id,
                    ":chat": connection.owner_chat_id,
                    ":name": connection.owner_name,
                    ":reply": connection.may_reply,
                    ":enabled": connection.enabled,
                    ":date": connection.date,
                    ":no": False,
                },
            )
        except ClientError as error:
            if error.response.get("Error", {}).get("Code") != "ConditionalCheckFailedException":
                raise  # a newer update is kept already: nothing to change otherwise

    def claim(self, connection_id: str, flag: Flag, value: bool) -> bool:
        try:
            self._table.update_item(
                Key=connection_key(connection_id),
                UpdateExpression="SET #flag = :value",
                ConditionExpression="attribute_exists(pk) AND #flag <> :value",
                ExpressionAttributeNames={"#flag": flag},
                ExpressionAttributeValues={":value": value},
            )
        except ClientError as error:
            if error.response.get("Error", {}).get("Code") == "ConditionalCheckFailedException":
                return False
            raise
        return True

    def of_owner(self, owner_id: int) -> list[SecretaryConnection]:
        ids: list[str] = []
        query: dict[str, Any] = {
            "KeyConditionExpression": "pk = :pk AND begins_with(sk, :conn)",
            "ExpressionAttributeValues": {":pk": owner_pk(owner_id), ":conn": "conn#"},
            "ConsistentRead": True,
        }
        while True:
            page = self._table.query(**query)
            ids += [str(item["connection_id"]) for item in page.get("Items", [])]
            if "LastEvaluatedKey" not in page:
                break
            query["ExclusiveStartKey"] = page["LastEvaluatedKey"]
        kept = [self.get(connection_id) for connection_id in ids]
        return [connection for connection in kept if connection is not None]

    def owner_settings(self, owner_id: int) -> OwnerSettings:
        item = self._table.get_item(Key=settings_key(owner_id), ConsistentRead=True).get("Item") or {}
        muted: dict[str, Any] = item.get("muted") or {}
        return OwnerSettings(bool(item.get("off", False)), tuple(str(muted[key]) for key in sorted(muted)))

    def set_off(self, owner_id: int, off: bool) -> bool:
        answer = self._table.update_item(
            Key=settings_key(owner_id),
            UpdateExpression="SET #off = :off",
            ExpressionAttributeNames={"#off": "off"},
            ExpressionAttributeValues={":off": off},
            ReturnValues="ALL_OLD",
        )
        return bool(answer.get("Attributes", {}).get("off", False)) != off

    def mute(self, owner_id: int, name: str) -> bool:
        self._table.update_item(  # the map first: a path into a map that is not there is refused
            Key=settings_key(owner_id),
            UpdateExpression="SET muted = if_not_exists(muted, :none)",
            ExpressionAttributeValues={":none": {}},
        )
        try:
            self._table.update_item(
                Key=settings_key(owner_id),
                UpdateExpression="SET muted.#key = :name",
                ConditionExpression="attribute_not_exists(muted.#key)",
                ExpressionAttributeNames={"#key": muted_key(name)},
                ExpressionAttributeValues={":name": name},
            )
        except ClientError as error:
            if _condition_failed(error):
                return False
            raise
        return True

    def unmute(self, owner_id: int, name: str) -> bool:
        try:
            self._table.update_item(
                Key=settings_key(owner_id),
                UpdateExpression="REMOVE muted.#key",
                ConditionExpression="attribute_exists(muted.#key)",
                ExpressionAttributeNames={"#key": muted_key(name)},
            )
        except ClientError as error:
            if _condition_failed(error):
                return False
            raise
        return True


def suggestion_key(owner_id: int, chat_id: int) -> dict[str, str]:
    return {"pk": owner_pk(owner_id), "sk": f"sugg#{chat_id}"}


def prompt_key(owner_id: int, message_id: int) -> dict[str, str]:
    return {"pk": owner_pk(owner_id), "sk": f"prompt#{message_id}"}


PROMPT_DAYS = 2  # an Edit prompt outlives the longest wait of a suggestion


class DynamoSuggestionStore:
    """The secretary's SuggestionStore on its table: `owner#<id>` / `sugg#<chat>`, `prompt#<message id>` and
    `budget#<day>`."""

    def __init__(self, table: Any) -> None:
        self._table = table

    def get(self, owner_id: int, chat_id: int) -> Suggestion | None:
        item = self._table.get_item(Key=suggestion_key(owner_id, chat_id), ConsistentRead=True).get("Item")
        return None if item is None else _suggestion(item)

    def of_owner(self, owner_id: int) -> list[Suggestion]:
        found: list[Suggestion] = []
        query: dict[str, Any] = {
            "KeyConditionExpression": "pk = :pk AND begins_with(sk, :sugg)",
            "ExpressionAttributeValues": {":pk": owner_pk(owner_id), ":sugg": "sugg#"},
            "ConsistentRead": True,
        }
        while True:
            page = self._table.query(**query)
            found += [_suggestion(item) for item in page.get("Items", [])]
            if "LastEvaluatedKey" not in page:
                return found
            query["ExclusiveStartKey"] = page["LastEvaluatedKey"]

    def put(self, suggestion: Suggestion) -> None:
        item = {**suggestion._asdict(), **suggestion_key(suggestion.owner_id, suggestion.chat_id)}
        self._table.put_item(Item={key: value for key, value in item.items() if value is not None})

    def settle(
        self,
        owner_id: int,
        chat_id: int,
        approval_id: str,
        status: SuggestionStatus,
        expected: frozenset[SuggestionStatus] = OPEN_STATUSES,
    ) -> bool:
        names = sorted(expected)
        placeholders = ", ".join(f":s{i}" for i in range(len(names)))
        try:
            self._table.update_item(
                Key=suggestion_key(owner_id, chat_id),
                UpdateExpression="SET #status = :status",
                ConditionExpression=f"approval_id = :approval AND #status IN ({placeholders})",
                ExpressionAttributeNames={"#status": "status"},
                ExpressionAttributeValues={
                    ":status": status,
                    ":approval": approval_id,
                    **{f":s{i}": name for i, name in enumerate(names)},
                },
            )
        except ClientError as error:
            if _condition_failed(error):
                return False
            raise
        return True

    def revise(
        self, owner_id: int, chat_id: int, approval_id: str, text: str, message_id: int | None
    ) -> bool:
        update = "SET #text = :text"
        values: dict[str, Any] = {":text": text, ":approval": approval_id, ":pending": "pending"}
        if message_id is not None:
            update, values = f"{update}, message_id = :message", {**values, ":message": message_id}
        try:
            self._table.update_item(
                Key=suggestion_key(owner_id, chat_id),
                UpdateExpression=update,
                ConditionExpression="approval_id = :approval AND #status = :pending",
                ExpressionAttributeNames={"#text": "text", "#status": "status"},
                ExpressionAttributeValues=values,
            )
        except ClientError as error:
            if _condition_failed(error):
                return False
            raise
        return True

    def show_in(self, owner_id: int, chat_id: int, approval_id: str, message_id: int) -> None:
        try:
            self._table.update_item(
                Key=suggestion_key(owner_id, chat_id),
                UpdateExpression="SET message_id = :message",
                ConditionExpression="approval_id = :approval",
                ExpressionAttributeValues={":message": message_id, ":approval": approval_id},
            )
        except ClientError as error:
            if not _condition_failed(error):  # a newer draft took the chat's place: it shows itself
                raise

    def put_edit_prompt(self, owner_id: int, prompt_message_id: int, chat_id: int, approval_id: str) -> None:
        self._table.put_item(
            Item={
                **prompt_key(owner_id, prompt_message_id),
                "chat_id": chat_id,
                "approval_id": approval_id,
                "expires_at": int(time.time()) + PROMPT_DAYS * 86_400,
            }
        )

    def edit_prompt(self, owner_id: int, prompt_message_id: int) -> tuple[int, str] | None:
        item = self._table.get_item(Key=prompt_key(owner_id, prompt_message_id)).get("Item")
        return None if item is None else (int(item["chat_id"]), str(item["approval_id"]))

    def note_over_budget(self, owner_id: int, day: str, contact: str) -> tuple[list[str], int | None]:
        item = self._table.update_item(
            Key=_budget_key(owner_id, day),
            UpdateExpression="ADD #names :name SET expires_at = :expires",
            ExpressionAttributeNames={"#names": "names"},
            ExpressionAttributeValues={
                ":name": {contact or "Someone"},
                ":expires": int(time.time()) + 2 * 86_400,
            },
            ReturnValues="ALL_NEW",
        )["Attributes"]
        message = item.get("message_id")
        return sorted(str(name) for name in item.get("names", ())), int(
            message
        ) if message is not None else None

    def set_budget_message(self, owner_id: int, day: str, message_id: int) -> None:
        self._table.update_item(
            Key=_budget_key(owner_id, day),
            UpdateExpression="SET message_id = :message",
            ExpressionAttributeValues={":message": message_id},
        )


def _budget_key(owner_id: int, day: str) -> dict[str, str]:
    return {"pk": owner_pk(owner_id), "sk": f"budget#{day}"}


def _suggestion(item: dict[str, Any]) -> Suggestion:
    return Suggestion(
        owner_id=int(item["owner_id"]),
        chat_id=int(item["chat_id"]),
        connection_id=str(item["connection_id"]),
        contact=str(item.get("contact", "")),
        wrote=str(item.get("wrote", "")),
        text=str(item.get("text", "")),
        approval_id=str(item["approval_id"]),
        turn_id=str(item.get("turn_id", "")),
        message_id=int(item["message_id"]) if item.get("message_id") is not None else None,
        status=item.get("status", "pending"),
        created_at=str(item.get("created_at", "")),
    )
