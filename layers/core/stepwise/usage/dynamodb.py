"""Usage counters in DynamoDB (UsageTable): partition key user_id, sort key `day#2026-11-23` | `call#<turn
id>#<step>` (the marker that a call was counted), TTL expires_at. (Items `month#2026-11` were kept before; a
month's totals are now the sum of its days, read with one Query.)

One call is counted with one TransactWriteItems: the call's marker, conditioned on not existing, and an ADD to
the day's counters. A retried CallModel finds its marker and adds nothing.
"""

from __future__ import annotations

import time
from typing import Any

from boto3.dynamodb.conditions import Key
from botocore.exceptions import ClientError

from stepwise.aws.dynamodb_pages import all_items
from stepwise.usage.models import UsageTotals, days_prefix

DAY_SECONDS = 86_400
DAY_COUNTERS_KEPT_DAYS = 92  # a day's counter expires three months after it was last written
COUNTERS = (
    "input_tokens",
    "output_tokens",
    "cache_read_tokens",
    "cache_write_tokens",
    "cost_nano_usd",
    "calls",
    "web_searches",
    "web_search_tokens",
    "voice_notes",
    "voice_seconds",
    "spoken_characters",
    "voice_tokens",
)


class DynamoUsageStore:
    """UsageStore on a DynamoDB table resource; call markers expire after `marker_ttl_days`."""

    def __init__(self, table: Any, marker_ttl_days: int) -> None:
        self._table = table
        self._client = table.meta.client
        self._marker_ttl_seconds = marker_ttl_days * DAY_SECONDS

    def add(self, user_id: int, call_key: str, periods: list[str], used: UsageTotals) -> bool:
        now = int(time.time())
        # The table resource's client takes plain values (it serializes them, as the resource does).
        actions: list[dict[str, Any]] = [
            {
                "Put": {
                    "TableName": self._table.name,
                    "Item": {
                        "user_id": user_id,
                        "sk": f"call#{call_key}",
                        "expires_at": now + self._marker_ttl_seconds,
                    },
                    "ConditionExpression": "attribute_not_exists(sk)",
                }
            }
        ]
        values: dict[str, Any] = {f":{name}": getattr(used, name) for name in COUNTERS}
        adds = [f"{name} :{name}" for name in COUNTERS]
        if used.unpriced_models:
            values[":unpriced"] = set(used.unpriced_models)
            adds.append("unpriced_models :unpriced")
        for period in periods:
            actions.append(
                {
                    "Update": {
                        "TableName": self._table.name,
                        "Key": {"user_id": user_id, "sk": period},
                        "UpdateExpression": f"SET expires_at = :expires ADD {', '.join(adds)}",
                        "ExpressionAttributeValues": {
                            **values,
                            ":expires": now + DAY_COUNTERS_KEPT_DAYS * DAY_SECONDS,
                        },
                    }
                }
            )
        try:
            self._client.transact_write_items(TransactItems=actions)
        except ClientError as error:
            if error.response["Error"]["Code"] != "TransactionCanceledException":
                raise
            reasons = [reason.get("Code", "None") for reason in error.response.get("CancellationReasons", [])]
            if reasons and reasons[0] == "ConditionalCheckFailed":
                return False  # this call was counted by an earlier attempt
            raise
        return True

    def totals(self, user_id: int, period: str, *, consistent: bool = True) -> UsageTotals:
        if period.startswith("month#"):
            return self._month(user_id, period)
        key = {"user_id": user_id, "sk": period}
        item = self._table.get_item(Key=key, ConsistentRead=consistent).get("Item")
        return UsageTotals() if item is None else _totals(item)

    def days(self, user_id: int, first: str, last: str) -> dict[str, UsageTotals]:
        items = all_items(
            self._table.query,
            KeyConditionExpression=Key("user_id").eq(user_id) & Key("sk").between(first, last),
            ConsistentRead=True,
        )
        return {str(item["sk"]): _totals(item) for item in items}

    def _month(self, user_id: int, month: str) -> UsageTotals:
        """The sum of the month's day counters."""
        total = UsageTotals()
        for item in all_items(
            self._table.query,
            KeyConditionExpression=Key("user_id").eq(user_id) & Key("sk").begins_with(days_prefix(month)),
            ConsistentRead=True,
        ):
            total = total.plus(_totals(item))
        return total


def _totals(item: dict[str, Any]) -> UsageTotals:
    return UsageTotals(
        **{name: int(item.get(name, 0)) for name in COUNTERS},
        unpriced_models=frozenset(item.get("unpriced_models", set())),
    )
