"""Chat records in DynamoDB: partition key chat_id (the conversation's key, see
`stepwise.aws.conversation_key`); the sparse GSI `SummaryDue` lists due chats."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from botocore.exceptions import ClientError

from stepwise.aws.conversation_key import conversation_at, conversation_key
from stepwise.aws.dynamodb_pages import all_items
from stepwise.chats.store import ChatRecord
from stepwise.telegram.conversation import Conversation

if TYPE_CHECKING:
    from collections.abc import Iterator

DUE_INDEX = "SummaryDue"
DUE = "due"


class DynamoChatStore:
    """ChatStore on a DynamoDB table resource."""

    def __init__(self, table: Any) -> None:
        self._table = table

    def record_message(
        self,
        conversation: Conversation,
        user_id: int,
        due_at: int,
        written_at: str | None = None,
        title: str | None = None,
    ) -> ChatRecord:
        values: dict[str, Any] = {":u": user_id, ":one": 1}
        written = ""
        if written_at is not None:
            written, values[":w"] = ", last_user_at = :w", written_at
        if title:
            written, values[":t"] = f"{written}, title = :t", title
        response = self._table.update_item(
            Key={"chat_id": conversation_key(conversation)},
            UpdateExpression=f"SET user_id = :u{written} ADD message_count :one",
            ExpressionAttributeValues=values,
            ReturnValues="ALL_NEW",
        )
        chat = _from_item(response["Attributes"])
        if chat.unsummarized >= due_at and not chat.due:
            self._table.update_item(
                Key={"chat_id": conversation_key(conversation)},
                UpdateExpression="SET summary_due = :due",
                ExpressionAttributeValues={":due": DUE},
            )
            chat.due = True
        return chat

    def get(self, conversation: Conversation) -> ChatRecord | None:
        item = self._table.get_item(Key={"chat_id": conversation_key(conversation)}, ConsistentRead=True).get(
            "Item"
        )
        return _from_item(item) if item else None

    def set_window(self, conversation: Conversation, window_key: str) -> None:
        self._table.update_item(
            Key={"chat_id": conversation_key(conversation)},
            UpdateExpression="SET window_key = :k",
            ExpressionAttributeValues={":k": window_key},
        )

    def set_stable_prefix_tokens(self, conversation: Conversation, tokens: int) -> None:
        self._table.update_item(
            Key={"chat_id": conversation_key(conversation)},
            UpdateExpression="SET stable_prefix_tokens = :t",
            ExpressionAttributeValues={":t": tokens},
        )

    def set_voice_replies(self, conversation: Conversation, on: bool) -> None:
        self._table.update_item(
            Key={"chat_id": conversation_key(conversation)},
            UpdateExpression="SET voice_replies = :on",
            ExpressionAttributeValues={":on": on},
        )

    def set_topic_unnamed(self, conversation: Conversation, unnamed: bool) -> None:
        self._table.update_item(
            Key={"chat_id": conversation_key(conversation)},
            UpdateExpression="SET topic_unnamed = :on",
            ExpressionAttributeValues={":on": unnamed},
        )

    def claim_topic_rename(self, conversation: Conversation) -> bool:
        try:
            self._table.update_item(
                Key={"chat_id": conversation_key(conversation)},
                UpdateExpression="SET topic_unnamed = :off",
                ConditionExpression="topic_unnamed = :on",
                ExpressionAttributeValues={":on": True, ":off": False},
            )
        except ClientError as error:
            if error.response["Error"]["Code"] == "ConditionalCheckFailedException":
                return False
            raise
        return True

    def due_chats(self) -> Iterator[Conversation]:
        kwargs: dict[str, Any] = {
            "IndexName": DUE_INDEX,
            "KeyConditionExpression": "summary_due = :due",
            "ExpressionAttributeValues": {":due": DUE},
        }
        yield from self._paginate("query", kwargs)

    def all_chats(self) -> Iterator[Conversation]:
        yield from self._paginate("scan", {"ProjectionExpression": "chat_id"})

    def _paginate(self, operation: str, kwargs: dict[str, Any]) -> Iterator[Conversation]:
        for item in all_items(getattr(self._table, operation), **kwargs):
            yield conversation_at(int(item["chat_id"]))

    def record_summary_failure(self, conversation: Conversation, give_up_after: int) -> int:
        try:
            response = self._table.update_item(
                Key={"chat_id": conversation_key(conversation)},
                UpdateExpression="ADD summary_failures :one",
                ConditionExpression="attribute_exists(chat_id)",
                ExpressionAttributeValues={":one": 1},
                ReturnValues="UPDATED_NEW",
            )
        except ClientError as error:
            if error.response["Error"]["Code"] == "ConditionalCheckFailedException":
                return 0  # no such chat: nothing to count
            raise
        failures = int(response["Attributes"]["summary_failures"])
        if failures >= give_up_after:
            self._table.update_item(
                Key={"chat_id": conversation_key(conversation)}, UpdateExpression="REMOVE summary_due"
            )
        return failures

    def advance(
        self,
        chat: ChatRecord,
        *,
        summarized_key: str,
        summarized: int,
        summary: str,
        now: str,
        still_due: bool,
    ) -> bool:
        values: dict[str, Any] = {":key": summarized_key, ":n": summarized, ":summary": summary, ":now": now}
        assignments = ["summarized_key = :key", "summary = :summary", "summary_updated_at = :now"]
        if still_due:
            assignments.append("summary_due = :due")
            values[":due"] = DUE
        expression = "SET " + ", ".join(assignments) + " ADD summarized_count :n"
        expression += " REMOVE summary_failures" if still_due else " REMOVE summary_failures, summary_due"
        if chat.summarized_key:
            condition = "summarized_key = :previous"
            values[":previous"] = chat.summarized_key
        else:
            condition = "attribute_not_exists(summarized_key)"
        try:
            self._table.update_item(
                Key={"chat_id": conversation_key(chat.conversation)},
                UpdateExpression=expression,
                ConditionExpression=condition,
                ExpressionAttributeValues=values,
            )
        except ClientError as error:
            if error.response["Error"]["Code"] == "ConditionalCheckFailedException":
                return False
            raise
        return True


def _from_item(item: dict[str, Any]) -> ChatRecord:
    return ChatRecord(
        conversation=conversation_at(int(item["chat_id"])),
        user_id=int(item.get("user_id", 0)),
        message_count=int(item.get("message_count", 0)),
        summarized_count=int(item.get("summarized_count", 0)),
        summarized_key=item.get("summarized_key", ""),
        summary=item.get("summary", ""),
        summary_updated_at=item.get("summary_updated_at"),
        due="summary_due" in item,
        summary_failures=int(item.get("summary_failures", 0)),
        window_key=item.get("window_key", ""),
        last_user_at=item.get("last_user_at", ""),
        stable_prefix_tokens=int(item.get("stable_prefix_tokens", 0)),
        voice_replies=bool(item.get("voice_replies", False)),
        topic_unnamed=bool(item.get("topic_unnamed", False)),
        title=item.get("title", ""),
    )
