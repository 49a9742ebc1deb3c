"""Business connections in DynamoDB (SecretaryTable: partition key `pk`, sort key `sk`, TTL `expires_at`).

A connection is the item `conn#<id>` / `conn`, holding `SecretaryConnection`'s fields. An owner's items share
the partition `owner#<user id>`: `settings` (`off`, and `muted`, a map of `muted_key` to the name as muted),
and one `conn#<id>` per connection of their account, written before the connection itself (`of_owner` reads
the ones whose connection exists). (The table is the secretary's: what else secretary mode keeps goes beside
them, under other keys.)
"""

from __future__ import annotations

from typing import Any

from botocore.exceptions import ClientError

from stepwise.secretary.connections import Flag, SecretaryConnection
from stepwise.secretary.owners import OwnerSettings, muted_key

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
