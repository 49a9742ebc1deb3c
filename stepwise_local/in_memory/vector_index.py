"""An in-memory VectorIndex that behaves like an S3 Vectors cosine index (moto emulates no queries)."""

from __future__ import annotations

import math
import threading
from collections.abc import Mapping, Sequence

from stepwise.memory.vector_index import (
    MetadataValue,
    VectorIndexError,
    VectorMatch,
    VectorRecord,
    check_query,
)


def _same(stored: MetadataValue | None, wanted: MetadataValue) -> bool:
    """Equality as S3 Vectors filters it: numbers compare as numbers, but a bool is never a number."""
    if isinstance(stored, bool) or isinstance(wanted, bool):
        return type(stored) is type(wanted) and stored == wanted
    return stored == wanted


def _norm(vector: Sequence[float]) -> float:
    return math.sqrt(sum(value * value for value in vector))


def _cosine_distance(a: Sequence[float], b: Sequence[float]) -> float:
    if len(a) != len(b):
        raise VectorIndexError(
            f"ValidationException: query has {len(a)} dimensions, a stored vector {len(b)}",
            "ValidationException",
        )
    return 1.0 - sum(x * y for x, y in zip(a, b, strict=True)) / (_norm(a) * _norm(b))


class InMemoryVectorIndex:
    """VectorIndex in a dict, with cosine distance and an equality filter; thread-safe.

    It rejects what S3 Vectors would reject for a cosine index: zero vectors and, when `dimensions` is
    given, vectors of another length.
    """

    def __init__(self, dimensions: int | None = None) -> None:
        self._dimensions = dimensions
        self._records: dict[str, VectorRecord] = {}
        self._lock = threading.Lock()

    @property
    def records(self) -> dict[str, VectorRecord]:
        """A snapshot of the stored records by key."""
        with self._lock:
            return dict(self._records)

    def put(self, records: Sequence[VectorRecord]) -> None:
        for record in records:
            self._check_vector(record.vector)
        with self._lock:
            for record in records:
                self._records[record.key] = record

    def query(
        self, vector: Sequence[float], top_k: int, equals: Mapping[str, MetadataValue]
    ) -> list[VectorMatch]:
        limit = check_query(top_k, equals)
        self._check_vector(vector)
        with self._lock:
            candidates = [
                record
                for record in self._records.values()
                if all(_same(record.metadata.get(key), value) for key, value in equals.items())
            ]
        scored = sorted(
            ((_cosine_distance(vector, record.vector), record) for record in candidates),
            key=lambda pair: pair[0],
        )
        return [
            VectorMatch(key=record.key, text=record.text, metadata=dict(record.metadata), distance=distance)
            for distance, record in scored[:limit]
        ]

    def delete(self, keys: Sequence[str]) -> None:
        with self._lock:
            for key in keys:
                self._records.pop(key, None)

    def get(self, keys: Sequence[str]) -> list[VectorMatch]:
        with self._lock:
            found = [self._records[key] for key in dict.fromkeys(keys) if key in self._records]
        return [
            VectorMatch(key=record.key, text=record.text, metadata=dict(record.metadata), distance=0.0)
            for record in found
        ]

    def _check_vector(self, vector: Sequence[float]) -> None:
        if self._dimensions is not None and len(vector) != self._dimensions:
            raise VectorIndexError(
                f"ValidationException: vector has {len(vector)} dimensions, the index {self._dimensions}",
                "ValidationException",
            )
        if not all(math.isfinite(value) for value in vector) or _norm(vector) == 0.0:
            raise VectorIndexError(
                "ValidationException: cosine vectors must be finite and non-zero", "ValidationException"
            )
