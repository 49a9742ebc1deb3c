"""Reading every page of a DynamoDB query."""

from __future__ import annotations

from typing import Any

from stepwise.aws.dynamodb_pages import all_items


def test_all_items_follows_last_evaluated_key_with_the_same_arguments() -> None:
    pages = [
        {"Items": [{"n": 1}, {"n": 2}], "LastEvaluatedKey": {"k": 2}},
        {"Items": [], "LastEvaluatedKey": {"k": 2}},  # DynamoDB may answer an empty page before the end
        {"Items": [{"n": 3}]},
    ]
    calls: list[dict[str, Any]] = []

    def query(**kwargs: Any) -> dict[str, Any]:
        calls.append(dict(kwargs))
        return pages[len(calls) - 1]

    assert [item["n"] for item in all_items(query, KeyConditionExpression="x")] == [1, 2, 3]
    assert calls == [
        {"KeyConditionExpression": "x"},
        {"KeyConditionExpression": "x", "ExclusiveStartKey": {"k": 2}},
        {"KeyConditionExpression": "x", "ExclusiveStartKey": {"k": 2}},
    ]
