"""A vector index behind one small port: Amazon S3 Vectors (the local emulation supplies an in-memory index,
`stepwise_local.in_memory.vector_index`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from botocore.exceptions import (
    BotoCoreError,
    ClientError,
    ConnectionClosedError,
    ReadTimeoutError,
)
from botocore.exceptions import ConnectionError as BotoConnectionError
from pydantic import BaseModel, ConfigDict, Field, field_validator

if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping, Sequence

MetadataValue = str | int | float | bool

TEXT_KEY = "text"  # the index declares it non-filterable: it can be returned but not used in a filter
PUT_BATCH_LIMIT = 500  # PutVectorsInputList max
DELETE_BATCH_LIMIT = 500  # DeleteVectorsInputList max
GET_BATCH_LIMIT = 100  # GetVectorsInputList max
MAX_TOP_K = 100  # "Top-K results per QueryVectors request: up to 100" (S3 Vectors limits)

TRANSIENT_CODES = frozenset(
    {
        "TooManyRequestsException",
        "ThrottlingException",
        "ServiceUnavailableException",
        "InternalServerException",
        "RequestTimeoutException",
    }
)
_TRANSIENT_BOTOCORE = (BotoConnectionError, ReadTimeoutError, ConnectionClosedError)


class VectorRecord(BaseModel):
    """A vector to store: filterable `metadata`, and `text` kept as non-filterable metadata."""

    model_config = ConfigDict(defer_build=True, frozen=True)

    key: str = Field(min_length=1, max_length=1024)
    vector: list[float] = Field(min_length=1)
    metadata: dict[str, MetadataValue] = {}
    text: str

    @field_validator("metadata")
    @classmethod
    def _text_key_reserved(cls, metadata: dict[str, MetadataValue]) -> dict[str, MetadataValue]:
        if TEXT_KEY in metadata:
            raise ValueError(f"metadata key {TEXT_KEY!r} is reserved for the record's text")
        return metadata


class VectorMatch(BaseModel):
    """A stored vector found by a query or a get; `distance` is the cosine distance (0 = identical)."""

    model_config = ConfigDict(defer_build=True, frozen=True)

    key: str
    text: str
    metadata: dict[str, MetadataValue] = {}
    distance: float = 0.0


@runtime_checkable
class VectorIndex(Protocol):
    """Stores vectors by key and finds the nearest ones among those whose metadata matches."""

    def put(self, records: Sequence[VectorRecord]) -> None:
        """Insert or replace the records (by key)."""
        ...

    def query(
        self, vector: Sequence[float], top_k: int, equals: Mapping[str, MetadataValue]
    ) -> list[VectorMatch]:
        """The `top_k` nearest records whose metadata equals every entry of `equals`, nearest first."""
        ...

    def delete(self, keys: Sequence[str]) -> None:
        """Remove the records with these keys; unknown keys are ignored."""
        ...

    def get(self, keys: Sequence[str]) -> list[VectorMatch]:
        """The records with these keys (distance 0.0); missing keys are simply absent."""
        ...


class VectorIndexError(RuntimeError):
    """The index refused or failed a request; the message keeps the AWS error code."""

    def __init__(self, message: str, code: str | None = None) -> None:
        super().__init__(message)
        self.code = code


class VectorIndexTransientError(VectorIndexError):
    """Worth retrying: throttling, server errors, timeouts, connection failures."""


def check_query(top_k: int, equals: Mapping[str, MetadataValue]) -> int:
    """The top_k S3 Vectors will use; ValueError for what it rejects (top_k < 1, a filter on the text)."""
    if top_k < 1:
        raise ValueError("top_k must be at least 1")
    if TEXT_KEY in equals:
        raise ValueError(f"metadata key {TEXT_KEY!r} is not filterable")
    return min(top_k, MAX_TOP_K)


def build_filter(equals: Mapping[str, MetadataValue]) -> dict[str, Any] | None:
    """The S3 Vectors metadata filter for "every key equals its value": `$eq`, joined by `$and` if several."""
    conditions = [{key: {"$eq": value}} for key, value in equals.items()]
    if not conditions:
        return None
    if len(conditions) == 1:
        return conditions[0]
    return {"$and": conditions}


def _batches[T](items: Sequence[T], size: int) -> Iterator[Sequence[T]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


class S3VectorsIndex:
    """VectorIndex on one Amazon S3 Vectors index, through a boto3 `s3vectors` client."""

    def __init__(self, client: Any, vector_bucket_name: str, index_name: str) -> None:
        self._client = client
        self._target = {"vectorBucketName": vector_bucket_name, "indexName": index_name}

    def put(self, records: Sequence[VectorRecord]) -> None:
        vectors = [
            {
                "key": record.key,
                "data": {"float32": [float(value) for value in record.vector]},
                "metadata": {**record.metadata, TEXT_KEY: record.text},
            }
            for record in records
        ]
        for batch in _batches(vectors, PUT_BATCH_LIMIT):
            self._call("put_vectors", vectors=list(batch))

    def query(
        self, vector: Sequence[float], top_k: int, equals: Mapping[str, MetadataValue]
    ) -> list[VectorMatch]:
        kwargs: dict[str, Any] = {
            "topK": check_query(top_k, equals),
            "queryVector": {"float32": [float(value) for value in vector]},
            "returnMetadata": True,
            "returnDistance": True,
        }
        query_filter = build_filter(equals)
        if query_filter is not None:
            kwargs["filter"] = query_filter
        response = self._call("query_vectors", **kwargs)
        matches = [_match(item, float(item.get("distance", 0.0))) for item in response.get("vectors", [])]
        return sorted(matches, key=lambda match: match.distance)

    def delete(self, keys: Sequence[str]) -> None:
        for batch in _batches(list(dict.fromkeys(keys)), DELETE_BATCH_LIMIT):
            self._call("delete_vectors", keys=list(batch))

    def get(self, keys: Sequence[str]) -> list[VectorMatch]:
        matches: list[VectorMatch] = []
        for batch in _batches(list(dict.fromkeys(keys)), GET_BATCH_LIMIT):
            response = self._call("get_vectors", keys=list(batch), returnMetadata=True)
            matches.extend(_match(item, 0.0) for item in response.get("vectors", []))
        return matches

    def _call(self, operation: str, **kwargs: Any) -> dict[str, Any]:
        try:
            response: dict[str, Any] = getattr(self._client, operation)(**self._target, **kwargs)
        except ClientError as error:
            code = str(error.response.get("Error", {}).get("Code", "Unknown"))
            message = str(error.response.get("Error", {}).get("Message", ""))
            status = int(error.response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0) or 0)
            text = f"S3 Vectors {operation} failed: {code}: {message}"
            if code in TRANSIENT_CODES or status == 429 or status >= 500:
                raise VectorIndexTransientError(text, code) from error
            raise VectorIndexError(text, code) from error
        except _TRANSIENT_BOTOCORE as error:
            raise VectorIndexTransientError(f"S3 Vectors {operation} failed: {error}") from error
        except BotoCoreError as error:
            raise VectorIndexError(f"S3 Vectors {operation} failed: {error}") from error
        return response


def _match(item: Mapping[str, Any], distance: float) -> VectorMatch:
    metadata = dict(item.get("metadata") or {})
    text = metadata.pop(TEXT_KEY, "")
    scalars = {key: value for key, value in metadata.items() if isinstance(value, str | int | float | bool)}
    return VectorMatch(key=item["key"], text=str(text), metadata=scalars, distance=distance)
