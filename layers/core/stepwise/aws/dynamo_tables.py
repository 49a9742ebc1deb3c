"""DynamoDB tables as the store adapters use them, without boto3's resource layer.

The adapters call a table's `get_item`, `put_item`, `update_item`, `delete_item`, `query` and `scan` with
plain Python values and `boto3.dynamodb.conditions` expressions, and use its client (`table.meta.client`) for
transactions and batch reads with plain values too. boto3's `resource("dynamodb").Table(name)` gives exactly
that by registering boto3's own DynamoDB transformations (`boto3.dynamodb.transform`) on its client; the
resource model around it (read from its JSON definition, a class built for each table, and its first calls)
is not needed. `PlainValuesTables` registers the same transformations, in the same way, on one low-level
client and hands out thin tables over it.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from boto3.dynamodb.transform import TransformationInjector, copy_dynamodb_params


class Table:
    """One table: its name, and the item operations the adapters use, over the shared client."""

    def __init__(self, client: Any, name: str) -> None:
        self.name = name
        self.meta = SimpleNamespace(client=client)

    def get_item(self, **kwargs: Any) -> Any:
        return self.meta.client.get_item(TableName=self.name, **kwargs)

    def put_item(self, **kwargs: Any) -> Any:
        return self.meta.client.put_item(TableName=self.name, **kwargs)

    def update_item(self, **kwargs: Any) -> Any:
        return self.meta.client.update_item(TableName=self.name, **kwargs)

    def delete_item(self, **kwargs: Any) -> Any:
        return self.meta.client.delete_item(TableName=self.name, **kwargs)

    def query(self, **kwargs: Any) -> Any:
        return self.meta.client.query(TableName=self.name, **kwargs)

    def scan(self, **kwargs: Any) -> Any:
        return self.meta.client.scan(TableName=self.name, **kwargs)


class PlainValuesTables:
    """Tables over one DynamoDB client that takes and returns plain Python values (`Decimal` for numbers,
    `Binary` for bytes, sets for sets), as the resource's tables do."""

    def __init__(self, client: Any) -> None:
        events = client.meta.events
        # The handlers and ids boto3's DynamoDBHighLevelResource registers on its own client.
        events.register(
            "provide-client-params.dynamodb", copy_dynamodb_params, unique_id="dynamodb-create-params-copy"
        )
        injector = TransformationInjector()
        events.register(
            "before-parameter-build.dynamodb",
            injector.inject_condition_expressions,
            unique_id="dynamodb-condition-expression",
        )
        events.register(
            "before-parameter-build.dynamodb",
            injector.inject_attribute_value_input,
            unique_id="dynamodb-attr-value-input",
        )
        events.register(
            "after-call.dynamodb",
            injector.inject_attribute_value_output,
            unique_id="dynamodb-attr-value-output",
        )
        self.client = client

    def table(self, name: str) -> Table:
        """The table `name` (nothing is requested)."""
        return Table(self.client, name)
