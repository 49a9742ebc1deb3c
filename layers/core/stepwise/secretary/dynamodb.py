"""Business connections in DynamoDB (SecretaryTable: partition key `pk`, sort key `sk`, TTL `expires_at`).

A connection is the item `conn#<id>` / `conn`, holding `SecretaryConnection`'s fields. (The table is the
secretary's: what else secretary mode keeps goes beside it, under other keys.)
"""

from __future__ import annotations

from typing import Any

from botocore.exceptions import ClientError

from stepwise.secretary.connections import Flag, SecretaryConnection

CONNECTION_SK = "conn"


def connection_key(connection_id: str) -> dict[str, str]:
    return {"pk": f"conn#{connection_id}", "sk": CONNECTION_SK}


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
