"""Reading every page of a DynamoDB Query or Scan (each answer holds at most 1 MB of items)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator


def all_items(operation: Callable[..., dict[str, Any]], **kwargs: Any) -> Iterator[dict[str, Any]]:
    """Every item of `table.query` or `table.scan` called with `kwargs`, following LastEvaluatedKey."""
    while True:
        response = operation(**kwargs)
        yield from response.get("Items", [])
        if "LastEvaluatedKey" not in response:
            return
        kwargs["ExclusiveStartKey"] = response["LastEvaluatedKey"]
