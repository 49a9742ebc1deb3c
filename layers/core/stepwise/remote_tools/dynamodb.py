"""The outside servers' records in DynamoDB (RemoteToolsTable): partition key `server`, TTL `expires_at`."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from stepwise.remote_tools.state import ServerRecord

if TYPE_CHECKING:
    from collections.abc import Sequence

RECORD_DAYS = 30  # a server taken off the list leaves its record behind this long


class DynamoRemoteToolCache:
    """RemoteToolCache on a DynamoDB table resource."""

    def __init__(self, table: Any) -> None:
        self.table = table

    def _expires(self) -> int:
        return int(time.time()) + RECORD_DAYS * 86_400

    def get_many(self, servers: Sequence[str], *, consistent: bool = False) -> dict[str, ServerRecord]:
        if not servers:
            return {}
        keys = [{"server": server} for server in dict.fromkeys(servers)]
        items: list[dict[str, Any]] = []
        request: dict[str, Any] = {self.table.name: {"Keys": keys, "ConsistentRead": consistent}}
        while request:  # at most 100 keys per request: more servers than that would be a strange list
            answer = self.table.meta.client.batch_get_item(RequestItems=request)
            items += answer["Responses"].get(self.table.name, [])
            request = answer.get("UnprocessedKeys") or {}
        return {str(item["server"]): _record(item) for item in items}

    def put_tools(
        self,
        server: str,
        config_hash: str,
        tools_json: str,
        fetched_at: int,
        labels_json: str = "",
        *,
        accepted: bool = False,
    ) -> ServerRecord:
        pinned = ":p" if accepted else "if_not_exists(pinned_json, :p)"  # first seen, unless accepted
        answer = self.table.update_item(
            Key={"server": server},
            UpdateExpression=(
                "SET config_hash = :h, tools_json = :t, fetched_at = :f, failures = :z, skipped_until = :z, "
                f"expires_at = :e, pinned_json = {pinned}"
            ),
            ExpressionAttributeValues={
                ":h": config_hash,
                ":t": tools_json,
                ":f": fetched_at,
                ":z": 0,
                ":e": self._expires(),
                ":p": labels_json,
            },
            ReturnValues="ALL_NEW",
        )
        return _record(answer["Attributes"])

    def note_changes(self, server: str, seen_json: str, noticed_json: str) -> bool:
        try:
            self.table.update_item(
                Key={"server": server},
                UpdateExpression="SET noticed_json = :n",
                ConditionExpression="attribute_not_exists(noticed_json) OR noticed_json = :s",
                ExpressionAttributeValues={":n": noticed_json, ":s": seen_json},
            )
        except self.table.meta.client.exceptions.ConditionalCheckFailedException:
            return False
        return True

    def record_failure(self, server: str, now: int, threshold: int, skip_seconds: int) -> ServerRecord:
        answer = self.table.update_item(
            Key={"server": server},
            UpdateExpression="ADD failures :one SET expires_at = :e",
            ExpressionAttributeValues={":one": 1, ":e": self._expires()},
            ReturnValues="ALL_NEW",
        )
        record = _record(answer["Attributes"])
        if record.failures < threshold:
            return record
        answer = self.table.update_item(
            Key={"server": server},
            UpdateExpression="SET skipped_until = :u",
            ExpressionAttributeValues={":u": now + skip_seconds},
            ReturnValues="ALL_NEW",
        )
        return _record(answer["Attributes"])

    def record_success(self, server: str) -> None:
        self.table.update_item(
            Key={"server": server},
            UpdateExpression="SET failures = :z, skipped_until = :z, expires_at = :e",
            ExpressionAttributeValues={":z": 0, ":e": self._expires()},
        )


def _record(item: dict[str, Any]) -> ServerRecord:
    return ServerRecord(
        server=str(item["server"]),
        config_hash=str(item.get("config_hash", "")),
        tools_json=str(item.get("tools_json", "[]")),
        fetched_at=int(item.get("fetched_at", 0)),
        failures=int(item.get("failures", 0)),
        skipped_until=int(item.get("skipped_until", 0)),
        pinned_json=str(item.get("pinned_json", "")),
        noticed_json=str(item.get("noticed_json", "[]")),
    )
