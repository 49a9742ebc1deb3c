"""The runtime's DynamoDB tables take and give plain Python values, as boto3's resource tables do (botocore's
Stubber answers, and each request's parameters are read after every handler that changes them; no network,
no moto).
tests/integration/test_store_adapters.py runs every store adapter over them against moto."""

from __future__ import annotations

import copy
from decimal import Decimal
from typing import Any

import boto3
import pytest
from boto3.dynamodb.conditions import Attr, Key
from botocore.exceptions import ClientError
from botocore.stub import Stubber

from stepwise.aws.dynamo_tables import PlainValuesTables


@pytest.fixture
def stubbed() -> Any:
    client = boto3.client(
        "dynamodb", region_name="us-east-1", aws_access_key_id="testing", aws_secret_access_key="testing"
    )
    tables = PlainValuesTables(client)
    with Stubber(client) as stubber:
        yield tables, stubber


@pytest.fixture
def sent(stubbed: Any) -> list[dict[str, Any]]:
    """The parameters of every request as they go to be serialized: after every handler that changes them."""
    bodies: list[dict[str, Any]] = []
    tables, _ = stubbed
    tables.client.meta.events.register_last(
        "before-parameter-build.dynamodb", lambda params, **_: bodies.append(copy.deepcopy(params))
    )
    return bodies


def test_an_item_goes_out_typed_and_comes_back_plain(stubbed: Any, sent: list[dict[str, Any]]) -> None:
    tables, stubber = stubbed
    item = {"pk": "chat#1", "n": 3, "price": Decimal("0.5"), "tags": {"a"}, "raw": b"\x00", "ok": True}
    stubber.add_response("put_item", {})
    stubber.add_response(
        "get_item",
        {"Item": {"pk": {"S": "chat#1"}, "n": {"N": "3"}, "list": {"L": [{"M": {"x": {"NULL": True}}}]}}},
    )
    table = tables.table("chats")
    table.put_item(Item=item)
    got = table.get_item(Key={"pk": "chat#1"}, ConsistentRead=True)["Item"]
    assert sent[0] == {
        "TableName": "chats",
        "Item": {
            "pk": {"S": "chat#1"},
            "n": {"N": "3"},
            "price": {"N": "0.5"},
            "tags": {"SS": ["a"]},
            "raw": {"B": b"\x00"},
            "ok": {"BOOL": True},
        },
    }
    assert sent[1] == {"TableName": "chats", "Key": {"pk": {"S": "chat#1"}}, "ConsistentRead": True}
    assert got == {"pk": "chat#1", "n": Decimal(3), "list": [{"x": None}]}
    assert item["raw"] == b"\x00" and item["tags"] == {"a"}, "the caller's item is not changed"


def test_conditions_become_expressions_with_placeholders(stubbed: Any, sent: list[dict[str, Any]]) -> None:
    tables, stubber = stubbed
    stubber.add_response("query", {"Items": [{"pk": {"S": "chat#1"}, "sk": {"S": "msg#2"}}], "Count": 1})
    items = tables.table("messages").query(
        KeyConditionExpression=Key("pk").eq("chat#1") & Key("sk").begins_with("msg#")
    )["Items"]
    assert sent == [
        {
            "TableName": "messages",
            "KeyConditionExpression": "(#n0 = :v0 AND begins_with(#n1, :v1))",
            "ExpressionAttributeNames": {"#n0": "pk", "#n1": "sk"},
            "ExpressionAttributeValues": {":v0": {"S": "chat#1"}, ":v1": {"S": "msg#"}},
        }
    ]
    assert items == [{"pk": "chat#1", "sk": "msg#2"}]


def test_a_failed_condition_is_the_same_client_error(stubbed: Any) -> None:
    tables, stubber = stubbed
    stubber.add_client_error("update_item", service_error_code="ConditionalCheckFailedException")
    with pytest.raises(ClientError) as raised:
        tables.table("usage").update_item(
            Key={"pk": "u#1"},
            UpdateExpression="ADD calls :one",
            ConditionExpression=Attr("calls").lt(5),
            ExpressionAttributeValues={":one": 1},
        )
    assert raised.value.response["Error"]["Code"] == "ConditionalCheckFailedException"


def test_every_table_shares_the_one_client_and_its_transactions_take_plain_values(
    stubbed: Any, sent: list[dict[str, Any]]
) -> None:
    tables, stubber = stubbed
    first, second = tables.table("a"), tables.table("b")
    assert first.meta.client is second.meta.client is tables.client
    assert (first.name, second.name) == ("a", "b")
    stubber.add_response("transact_write_items", {})
    put = {"Put": {"TableName": "a", "Item": {"pk": "x", "n": 1}}}
    first.meta.client.transact_write_items(TransactItems=[put])
    assert sent == [
        {"TransactItems": [{"Put": {"TableName": "a", "Item": {"pk": {"S": "x"}, "n": {"N": "1"}}}}]}
    ]
