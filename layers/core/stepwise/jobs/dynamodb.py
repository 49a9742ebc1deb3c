"""Jobs in DynamoDB (JobsTable: partition key `user_id`, sort key `sk`, TTL `expires_at`).

Per user: `counter` holds `next`, the user's last job number (ADD makes it atomic), and each job is one item
`job#<number, 10 digits>` holding the Job's fields (the padding makes the sort key order the numbers' order,
so a Query backwards reads the newest first). A job item expires `ttl_days` after the job was created; the
counter never expires, so numbers are never reused.
"""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal
from itertools import islice
from typing import TYPE_CHECKING, Any

from botocore.exceptions import ClientError

from stepwise.aws.dynamodb_pages import all_items
from stepwise.jobs.models import Job

if TYPE_CHECKING:
    from stepwise.jobs.models import JobStatus

COUNTER = "counter"
ITEM_PREFIX = "job#"  # a job item's sort key (not to be confused with an execution name's `job-`)


def job_key(number: int) -> str:
    return f"{ITEM_PREFIX}{number:010d}"


def _conditional_failure(error: ClientError) -> bool:
    code: str | None = error.response.get("Error", {}).get("Code")
    return code == "ConditionalCheckFailedException"


def _epoch(iso: str) -> int:
    """Epoch seconds of an ISO 8601 time (UTC when it names no zone)."""
    moment = datetime.fromisoformat(iso)
    return int((moment if moment.tzinfo else moment.replace(tzinfo=UTC)).timestamp())


def _job(item: dict[str, Any]) -> Job:
    """A Job from its item: the key and the expiry dropped, DynamoDB's Decimals made ints again."""
    return Job.model_validate(
        {k: int(v) if isinstance(v, Decimal) else v for k, v in item.items() if k not in ("sk", "expires_at")}
    )


class DynamoJobStore:
    """JobStore on a DynamoDB table resource; job items expire `ttl_days` after their creation."""

    def __init__(self, table: Any, ttl_days: int = 30) -> None:
        self._table = table
        self._ttl_seconds = ttl_days * 86_400

    def next_number(self, user_id: int) -> int:
        item = self._table.update_item(
            Key={"user_id": user_id, "sk": COUNTER},
            UpdateExpression="ADD #next :one",
            ExpressionAttributeNames={"#next": "next"},
            ExpressionAttributeValues={":one": 1},
            ReturnValues="UPDATED_NEW",
        )["Attributes"]
        return int(item["next"])

    def create(self, job: Job) -> Job:
        item = {
            **job.model_dump(exclude_none=True),
            "sk": job_key(job.number),
            "expires_at": _epoch(job.created_at) + self._ttl_seconds,
        }
        try:
            self._table.put_item(Item=item, ConditionExpression="attribute_not_exists(sk)")
        except ClientError as error:
            if not _conditional_failure(error):
                raise
            stored = self.get(job.user_id, job.number)
            if stored is None:  # gone (expired) between the write and the read
                raise
            return stored
        return job.model_copy()

    def get(self, user_id: int, number: int) -> Job | None:
        key = {"user_id": user_id, "sk": job_key(number)}
        item = self._table.get_item(Key=key, ConsistentRead=True).get("Item")
        return _job(item) if item is not None else None

    def recent(self, user_id: int, limit: int = 10) -> list[Job]:
        if limit < 1:
            return []
        items = all_items(
            self._table.query,
            KeyConditionExpression="user_id = :u AND begins_with(sk, :p)",
            ExpressionAttributeValues={":u": user_id, ":p": ITEM_PREFIX},
            ScanIndexForward=False,
            Limit=limit,
            ConsistentRead=True,
        )
        return [_job(item) for item in islice(items, limit)]

    def progress(self, user_id: int, number: int, tool_rounds: int, tokens: int, cost_nano_usd: int) -> None:
        try:
            self._table.update_item(
                Key={"user_id": user_id, "sk": job_key(number)},
                UpdateExpression="SET #rounds = :rounds, #tokens = :tokens, #cost = :cost",
                ConditionExpression="#s = :running",
                ExpressionAttributeNames={
                    "#rounds": "tool_rounds",
                    "#tokens": "tokens",
                    "#cost": "cost_nano_usd",
                    "#s": "status",
                },
                ExpressionAttributeValues={
                    ":rounds": tool_rounds,
                    ":tokens": tokens,
                    ":cost": cost_nano_usd,
                    ":running": "running",
                },
            )
        except ClientError as error:
            if not _conditional_failure(error):  # ended (or absent): left as it is
                raise

    def finish(self, user_id: int, number: int, status: JobStatus, report: str, finished_at: str) -> Job:
        try:
            item = self._table.update_item(
                Key={"user_id": user_id, "sk": job_key(number)},
                UpdateExpression="SET #s = :status, #report = :report, #finished = :finished",
                ConditionExpression="#s = :running",
                ExpressionAttributeNames={"#s": "status", "#report": "report", "#finished": "finished_at"},
                ExpressionAttributeValues={
                    ":status": status,
                    ":report": report,
                    ":finished": finished_at,
                    ":running": "running",
                },
                ReturnValues="ALL_NEW",
            )["Attributes"]
        except ClientError as error:
            if not _conditional_failure(error):
                raise
            stored = self.get(user_id, number)
            if stored is None:
                raise KeyError(f"user {user_id} has no job {number}") from error
            return stored
        return _job(item)
