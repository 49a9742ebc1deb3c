"""Connections in DynamoDB (ConnectionsTable: partition key `pk`, sort key `sk`, TTL `expires_at`).

Each connection is two items written together: `user#<id>` / `name#<name>` (the user's list) and
`token#<hash>` / `connection` (what a request's token is looked up by). A pending connection (its token not
made yet) is the first item alone, without `token_hash`. A token's request counters are
`token#<hash>` / `rate#<window>` items that expire after a few minutes.
"""

from __future__ import annotations

import time
from typing import Any

from boto3.dynamodb.conditions import Key
from botocore.exceptions import ClientError

from stepwise.connections.models import Connection
from stepwise.connections.store import NameTaken

RATE_ITEM_TTL_SECONDS = 300


def _user_key(user_id: int, name: str) -> dict[str, str]:
    return {"pk": f"user#{user_id}", "sk": f"name#{name}"}


def _token_key(token_hash: str) -> dict[str, str]:
    return {"pk": f"token#{token_hash}", "sk": "connection"}


def _connection(item: dict[str, Any]) -> Connection:
    data = {k: v for k, v in item.items() if k not in ("pk", "sk")}
    data["user_id"], data["chat_id"] = int(data["user_id"]), int(data["chat_id"])
    return Connection.model_validate(data)


def _conditional_failure(error: ClientError) -> bool:
    code = error.response.get("Error", {}).get("Code")
    if code == "ConditionalCheckFailedException":
        return True
    reasons = error.response.get("CancellationReasons") or []
    return code == "TransactionCanceledException" and any(
        r.get("Code") == "ConditionalCheckFailed" for r in reasons
    )


class DynamoConnectionStore:
    """ConnectionStore on a DynamoDB table resource."""

    def __init__(self, table: Any) -> None:
        self._table = table
        self._client = table.meta.client  # the resource's client: plain Python values, not typed ones

    def create(self, connection: Connection) -> None:
        item = connection.model_dump(mode="json", exclude_none=True)
        user_key = _user_key(connection.user_id, connection.name)
        earlier = self._table.get_item(Key=user_key, ConsistentRead=True).get("Item")
        if (
            earlier is not None
            and earlier.get("created_by_turn") != connection.created_by_turn
            and earlier.get("token_hash") is not None
        ):
            raise NameTaken(connection.name)  # another turn's, active (a pending one is made again)
        writes: list[dict[str, Any]] = [
            {
                "Put": {
                    "TableName": self._table.name,
                    "Item": {**user_key, **item},
                    "ConditionExpression": "attribute_not_exists(pk) OR created_by_turn = :turn"
                    " OR attribute_not_exists(token_hash)",
                    "ExpressionAttributeValues": {":turn": connection.created_by_turn},
                }
            }
        ]
        if connection.token_hash is not None:
            by_token = {**_token_key(connection.token_hash), **item}
            writes.append({"Put": {"TableName": self._table.name, "Item": by_token}})
        if earlier is not None and earlier.get("token_hash") not in (None, connection.token_hash):
            writes.append(
                {"Delete": {"TableName": self._table.name, "Key": _token_key(earlier["token_hash"])}}
            )
        try:
            self._client.transact_write_items(TransactItems=writes)
        except ClientError as error:
            if _conditional_failure(error):
                raise NameTaken(connection.name) from error
            raise

    def activate(self, user_id: int, name: str, turn_id: str, token_hash: str) -> bool:
        user_key = _user_key(user_id, name)
        item = self._table.get_item(Key=user_key, ConsistentRead=True).get("Item")
        if item is None or item.get("created_by_turn") != turn_id:
            return False
        earlier = item.get("token_hash")
        if earlier == token_hash:
            return True  # a retried send: this token works already
        active = {k: v for k, v in item.items() if k not in ("pk", "sk")} | {"token_hash": token_hash}
        writes: list[dict[str, Any]] = [
            {
                "Update": {
                    "TableName": self._table.name,
                    "Key": user_key,
                    "UpdateExpression": "SET token_hash = :hash",
                    "ConditionExpression": "created_by_turn = :turn",
                    "ExpressionAttributeValues": {":hash": token_hash, ":turn": turn_id},
                }
            },
            {"Put": {"TableName": self._table.name, "Item": {**_token_key(token_hash), **active}}},
        ]
        if earlier is not None:
            writes.append({"Delete": {"TableName": self._table.name, "Key": _token_key(earlier)}})
        try:
            self._client.transact_write_items(TransactItems=writes)
        except ClientError as error:
            if _conditional_failure(error):
                return False
            raise
        return True

    def find(self, token_hash: str) -> Connection | None:
        item = self._table.get_item(Key=_token_key(token_hash)).get("Item")
        return _connection(item) if item is not None else None

    def list(self, user_id: int) -> list[Connection]:
        response = self._table.query(
            KeyConditionExpression=Key("pk").eq(f"user#{user_id}") & Key("sk").begins_with("name#"),
            ConsistentRead=True,
        )
        return [_connection(item) for item in response.get("Items", [])]

    def revoke(self, user_id: int, name: str, made_by: str | None = None) -> bool:
        user_key = _user_key(user_id, name)
        item = self._table.get_item(Key=user_key, ConsistentRead=True).get("Item")
        if item is None or made_by not in (None, item.get("created_by_turn")):
            return False
        writes = [{"Delete": {"TableName": self._table.name, "Key": user_key}}]
        if item.get("token_hash") is not None:
            writes.append({"Delete": {"TableName": self._table.name, "Key": _token_key(item["token_hash"])}})
        self._client.transact_write_items(TransactItems=writes)
        return True

    def count_request(self, token_hash: str, window: int, limit: int) -> bool:
        try:
            self._table.update_item(
                Key={"pk": f"token#{token_hash}", "sk": f"rate#{window}"},
                UpdateExpression="ADD #count :one SET expires_at = :expires",
                ConditionExpression="attribute_not_exists(#count) OR #count < :limit",
                ExpressionAttributeNames={"#count": "count"},
                ExpressionAttributeValues={
                    ":one": 1,
                    ":limit": limit,
                    ":expires": int(time.time()) + RATE_ITEM_TTL_SECONDS,
                },
            )
        except ClientError as error:
            if _conditional_failure(error):
                return False
            raise
        return True
