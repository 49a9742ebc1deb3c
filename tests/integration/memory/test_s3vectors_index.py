"""S3VectorsIndex against the s3vectors API's real shapes, with botocore's Stubber."""

from __future__ import annotations

from typing import Any

import boto3
import pytest
from botocore.config import Config
from botocore.exceptions import EndpointConnectionError
from botocore.stub import Stubber

from stepwise.memory.vector_index import (
    S3VectorsIndex,
    VectorIndex,
    VectorIndexError,
    VectorIndexTransientError,
    VectorMatch,
    VectorRecord,
)

BUCKET = "stepwise-memory"
INDEX = "memories"
TARGET = {"vectorBucketName": BUCKET, "indexName": INDEX}


@pytest.fixture
def client() -> Any:
    return boto3.client("s3vectors", region_name="us-east-1")


@pytest.fixture
def index(client: Any) -> S3VectorsIndex:
    return S3VectorsIndex(client, vector_bucket_name=BUCKET, index_name=INDEX)


def record(key: str, user_id: int = 42) -> VectorRecord:
    return VectorRecord(
        key=key, vector=[1.0, 0.5], metadata={"user_id": user_id, "kind": "fact"}, text=f"text {key}"
    )


def put_entry(key: str, user_id: int = 42) -> dict[str, Any]:
    return {
        "key": key,
        "data": {"float32": [1.0, 0.5]},
        "metadata": {"user_id": user_id, "kind": "fact", "text": f"text {key}"},
    }


def query_response(*vectors: dict[str, Any]) -> dict[str, Any]:
    return {"vectors": list(vectors), "distanceMetric": "cosine"}


def test_is_a_vector_index(index: S3VectorsIndex) -> None:
    assert isinstance(index, VectorIndex)


def test_put_sends_vectors_with_metadata_and_text(
    client: Any, index: S3VectorsIndex, stubber: Stubber
) -> None:
    sent: list[dict[str, Any]] = []
    client.meta.events.register(
        "before-parameter-build.s3vectors.PutVectors", lambda params, **_: sent.append(params)
    )
    stubber.add_response("put_vectors", {}, {**TARGET, "vectors": [put_entry("a"), put_entry("b", 7)]})
    index.put([record("a"), record("b", 7)])
    assert type(sent[0]["vectors"][0]["metadata"]["user_id"]) is int


def test_put_batches_at_500_vectors(index: S3VectorsIndex, stubber: Stubber) -> None:
    keys = [f"k{i}" for i in range(1201)]
    for start, end in [(0, 500), (500, 1000), (1000, 1201)]:
        stubber.add_response(
            "put_vectors", {}, {**TARGET, "vectors": [put_entry(k) for k in keys[start:end]]}
        )
    index.put([record(k) for k in keys])


def test_put_of_nothing_makes_no_call(index: S3VectorsIndex, stubber: Stubber) -> None:
    index.put([])


def test_query_without_filter_parses_matches(index: S3VectorsIndex, stubber: Stubber) -> None:
    stubber.add_response(
        "query_vectors",
        query_response(
            {"key": "near", "distance": 0.1, "metadata": {"user_id": 42, "kind": "fact", "text": "Anna"}},
            {"key": "far", "distance": 0.7, "metadata": {"user_id": 42, "text": "milk"}},
        ),
        {
            **TARGET,
            "topK": 5,
            "queryVector": {"float32": [0.25, 0.75]},
            "returnMetadata": True,
            "returnDistance": True,
        },
    )
    matches = index.query([0.25, 0.75], top_k=5, equals={})
    assert matches == [
        VectorMatch(key="near", text="Anna", metadata={"user_id": 42, "kind": "fact"}, distance=0.1),
        VectorMatch(key="far", text="milk", metadata={"user_id": 42}, distance=0.7),
    ]


def test_query_filter_for_one_key(index: S3VectorsIndex, stubber: Stubber) -> None:
    stubber.add_response(
        "query_vectors",
        query_response(),
        {
            **TARGET,
            "topK": 3,
            "queryVector": {"float32": [1.0, 0.0]},
            "filter": {"user_id": {"$eq": 42}},
            "returnMetadata": True,
            "returnDistance": True,
        },
    )
    assert index.query([1.0, 0.0], top_k=3, equals={"user_id": 42}) == []


def test_query_filter_for_two_keys_uses_and(index: S3VectorsIndex, stubber: Stubber) -> None:
    stubber.add_response(
        "query_vectors",
        query_response(
            {"key": "s1", "distance": 0.2, "metadata": {"user_id": 42, "kind": "summary", "text": "t"}}
        ),
        {
            **TARGET,
            "topK": 3,
            "queryVector": {"float32": [1.0, 0.0]},
            "filter": {"$and": [{"user_id": {"$eq": 42}}, {"kind": {"$eq": "summary"}}]},
            "returnMetadata": True,
            "returnDistance": True,
        },
    )
    [match] = index.query([1.0, 0.0], top_k=3, equals={"user_id": 42, "kind": "summary"})
    assert match.key == "s1"
    assert match.metadata == {"user_id": 42, "kind": "summary"}


def test_query_top_k_is_capped_at_the_service_limit(index: S3VectorsIndex, stubber: Stubber) -> None:
    stubber.add_response(
        "query_vectors",
        query_response(),
        {
            **TARGET,
            "topK": 100,
            "queryVector": {"float32": [1.0, 0.0]},
            "returnMetadata": True,
            "returnDistance": True,
        },
    )
    index.query([1.0, 0.0], top_k=1000, equals={})


def test_query_rejects_bad_arguments_without_calling(index: S3VectorsIndex, stubber: Stubber) -> None:
    with pytest.raises(ValueError):
        index.query([1.0], top_k=0, equals={})
    with pytest.raises(ValueError):
        index.query([1.0], top_k=1, equals={"text": "Anna"})


def test_delete_batches_at_500_keys_and_drops_duplicates(index: S3VectorsIndex, stubber: Stubber) -> None:
    keys = [f"k{i}" for i in range(501)]
    stubber.add_response("delete_vectors", {}, {**TARGET, "keys": keys[:500]})
    stubber.add_response("delete_vectors", {}, {**TARGET, "keys": keys[500:]})
    index.delete([*keys, "k0"])


def test_get_batches_at_100_keys_and_skips_missing(index: S3VectorsIndex, stubber: Stubber) -> None:
    keys = [f"k{i}" for i in range(150)]
    stubber.add_response(
        "get_vectors",
        {"vectors": [{"key": "k1", "metadata": {"user_id": 42, "text": "one"}}]},
        {**TARGET, "keys": keys[:100], "returnMetadata": True},
    )
    stubber.add_response(
        "get_vectors",
        {"vectors": [{"key": "k120", "metadata": {"user_id": 42, "active": True, "text": "x"}}]},
        {**TARGET, "keys": keys[100:], "returnMetadata": True},
    )
    assert index.get(keys) == [
        VectorMatch(key="k1", text="one", metadata={"user_id": 42}, distance=0.0),
        VectorMatch(key="k120", text="x", metadata={"user_id": 42, "active": True}, distance=0.0),
    ]


@pytest.mark.parametrize(
    ("code", "status"),
    [
        ("TooManyRequestsException", 429),
        ("ServiceUnavailableException", 503),
        ("InternalServerException", 500),
        ("RequestTimeoutException", 408),
    ],
)
def test_transient_errors(index: S3VectorsIndex, stubber: Stubber, code: str, status: int) -> None:
    stubber.add_client_error(
        "query_vectors", service_error_code=code, service_message="later", http_status_code=status
    )
    with pytest.raises(VectorIndexTransientError, match=code) as caught:
        index.query([1.0, 0.0], top_k=1, equals={"user_id": 42})
    assert caught.value.code == code


@pytest.mark.parametrize(
    ("operation", "code", "status"),
    [
        ("put_vectors", "AccessDeniedException", 403),
        ("put_vectors", "ValidationException", 400),
        ("delete_vectors", "NotFoundException", 404),
        ("get_vectors", "AccessDeniedException", 403),
    ],
)
def test_permanent_errors(
    index: S3VectorsIndex, stubber: Stubber, operation: str, code: str, status: int
) -> None:
    stubber.add_client_error(
        operation, service_error_code=code, service_message="no", http_status_code=status
    )
    calls = {
        "put_vectors": lambda: index.put([record("a")]),
        "delete_vectors": lambda: index.delete(["a"]),
        "get_vectors": lambda: index.get(["a"]),
    }
    with pytest.raises(VectorIndexError, match=code) as caught:
        calls[operation]()
    assert not isinstance(caught.value, VectorIndexTransientError)
    assert caught.value.code == code


def test_a_connection_failure_is_transient() -> None:
    client = boto3.client(
        "s3vectors", region_name="us-east-1", config=Config(retries={"total_max_attempts": 1})
    )

    def fail(**_: Any) -> None:
        raise EndpointConnectionError(endpoint_url="https://s3vectors.us-east-1.api.aws")

    client.meta.events.register("before-send.s3vectors.QueryVectors", fail)
    with pytest.raises(VectorIndexTransientError):
        S3VectorsIndex(client, BUCKET, INDEX).query([1.0, 0.0], top_k=1, equals={})
