"""InMemoryVectorIndex: cosine distance, equality filters, upserts, deletes and gets."""

from __future__ import annotations

import math
import threading

import pytest
from pydantic import ValidationError

from stepwise.memory.vector_index import VectorIndex, VectorIndexError, VectorMatch, VectorRecord
from stepwise_local.in_memory.vector_index import InMemoryVectorIndex


def record(
    key: str, vector: list[float], user_id: int = 1, **metadata: str | int | float | bool
) -> VectorRecord:
    return VectorRecord(
        key=key, vector=vector, metadata={"user_id": user_id, **metadata}, text=f"text of {key}"
    )


@pytest.fixture
def index() -> InMemoryVectorIndex:
    return InMemoryVectorIndex(dimensions=2)


def test_is_a_vector_index(index: InMemoryVectorIndex) -> None:
    assert isinstance(index, VectorIndex)


def test_query_returns_nearest_first_with_cosine_distances(index: InMemoryVectorIndex) -> None:
    index.put(
        [
            record("opposite", [-1.0, 0.0]),
            record("same", [2.0, 0.0]),
            record("orthogonal", [0.0, 1.0]),
            record("diagonal", [1.0, 1.0]),
        ]
    )
    matches = index.query([1.0, 0.0], top_k=10, equals={"user_id": 1})
    assert [m.key for m in matches] == ["same", "diagonal", "orthogonal", "opposite"]
    distances = [m.distance for m in matches]
    assert distances == pytest.approx([0.0, 1 - math.sqrt(0.5), 1.0, 2.0])
    assert matches[0] == VectorMatch(key="same", text="text of same", metadata={"user_id": 1}, distance=0.0)


def test_filter_never_returns_another_users_records(index: InMemoryVectorIndex) -> None:
    index.put(
        [
            record("theirs", [1.0, 0.0], user_id=2),
            record("mine", [1.0, 0.0], user_id=1),
            record("mine-far", [0.0, 1.0], user_id=1),
        ]
    )
    matches = index.query([1.0, 0.0], top_k=10, equals={"user_id": 1})
    assert [m.key for m in matches] == ["mine", "mine-far"]
    assert [m.key for m in index.query([1.0, 0.0], top_k=10, equals={"user_id": 2})] == ["theirs"]
    assert index.query([1.0, 0.0], top_k=10, equals={"user_id": 3}) == []


def test_filter_on_several_keys_requires_all_of_them(index: InMemoryVectorIndex) -> None:
    index.put(
        [
            record("fact", [1.0, 0.0], kind="fact"),
            record("summary", [1.0, 0.0], kind="summary"),
            record("other-user-summary", [1.0, 0.0], user_id=2, kind="summary"),
        ]
    )
    matches = index.query([1.0, 0.0], top_k=10, equals={"user_id": 1, "kind": "summary"})
    assert [m.key for m in matches] == ["summary"]


def test_empty_filter_matches_everything(index: InMemoryVectorIndex) -> None:
    index.put([record("a", [1.0, 0.0], user_id=1), record("b", [0.0, 1.0], user_id=2)])
    assert {m.key for m in index.query([1.0, 0.0], top_k=10, equals={})} == {"a", "b"}


def test_a_bool_never_equals_a_number_but_int_equals_float(index: InMemoryVectorIndex) -> None:
    index.put([record("flagged", [1.0, 0.0], user_id=7, active=True), record("one", [1.0, 0.0], active=1)])
    assert [m.key for m in index.query([1.0, 0.0], top_k=5, equals={"active": 1})] == ["one"]
    assert [m.key for m in index.query([1.0, 0.0], top_k=5, equals={"active": True})] == ["flagged"]
    assert [m.key for m in index.query([1.0, 0.0], top_k=5, equals={"user_id": 7.0})] == ["flagged"]


def test_top_k_limits_the_results(index: InMemoryVectorIndex) -> None:
    index.put([record(f"k{i}", [1.0, i / 10]) for i in range(10)])
    matches = index.query([1.0, 0.0], top_k=3, equals={"user_id": 1})
    assert [m.key for m in matches] == ["k0", "k1", "k2"]


def test_top_k_must_be_positive_and_text_is_not_filterable(index: InMemoryVectorIndex) -> None:
    with pytest.raises(ValueError):
        index.query([1.0, 0.0], top_k=0, equals={})
    with pytest.raises(ValueError):
        index.query([1.0, 0.0], top_k=1, equals={"text": "x"})


def test_put_replaces_a_record_with_the_same_key(index: InMemoryVectorIndex) -> None:
    index.put([record("k", [1.0, 0.0], kind="old")])
    index.put([record("k", [0.0, 1.0], kind="new")])
    assert list(index.records) == ["k"]
    [match] = index.query([0.0, 1.0], top_k=5, equals={})
    assert match.metadata == {"user_id": 1, "kind": "new"}
    assert match.distance == pytest.approx(0.0)


def test_delete_removes_records_and_ignores_unknown_keys(index: InMemoryVectorIndex) -> None:
    index.put([record("a", [1.0, 0.0]), record("b", [0.0, 1.0])])
    index.delete(["a", "missing"])
    assert set(index.records) == {"b"}
    assert [m.key for m in index.query([1.0, 0.0], top_k=5, equals={})] == ["b"]


def test_get_returns_found_records_in_order_with_zero_distance(index: InMemoryVectorIndex) -> None:
    index.put([record("a", [1.0, 0.0]), record("b", [0.0, 1.0], kind="fact")])
    matches = index.get(["b", "missing", "a", "b"])
    assert matches == [
        VectorMatch(key="b", text="text of b", metadata={"user_id": 1, "kind": "fact"}, distance=0.0),
        VectorMatch(key="a", text="text of a", metadata={"user_id": 1}, distance=0.0),
    ]
    assert index.get([]) == []


def test_records_is_a_snapshot(index: InMemoryVectorIndex) -> None:
    index.put([record("a", [1.0, 0.0])])
    snapshot = index.records
    snapshot.clear()
    assert set(index.records) == {"a"}


def test_rejects_what_s3_vectors_rejects(index: InMemoryVectorIndex) -> None:
    with pytest.raises(VectorIndexError, match="ValidationException"):
        index.put([record("three", [1.0, 0.0, 0.0])])
    with pytest.raises(VectorIndexError, match="ValidationException"):
        index.put([record("zero", [0.0, 0.0])])
    with pytest.raises(VectorIndexError, match="ValidationException"):
        index.query([0.0, 0.0], top_k=1, equals={})
    with pytest.raises(VectorIndexError, match="ValidationException"):
        InMemoryVectorIndex().put([record("nan", [math.nan, 1.0])])
    assert index.records == {}


def test_mismatched_lengths_without_declared_dimensions_fail_clearly() -> None:
    index = InMemoryVectorIndex()
    index.put([record("two", [1.0, 0.0])])
    with pytest.raises(VectorIndexError, match="dimensions"):
        index.query([1.0, 0.0, 0.0], top_k=1, equals={})


def test_text_is_a_reserved_metadata_key() -> None:
    with pytest.raises(ValidationError):
        VectorRecord(key="k", vector=[1.0], metadata={"text": "x"}, text="t")


def test_metadata_keeps_value_types() -> None:
    item = VectorRecord(key="k", vector=[1.0], metadata={"i": 42, "b": True, "f": 1.5, "s": "x"}, text="t")
    assert [type(v) for v in item.metadata.values()] == [int, bool, float, str]


def test_concurrent_puts_are_all_kept() -> None:
    index = InMemoryVectorIndex(dimensions=2)

    def writer(worker: int) -> None:
        for i in range(200):
            index.put([record(f"w{worker}-{i}", [1.0, float(i)])])

    threads = [threading.Thread(target=writer, args=(w,)) for w in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(index.records) == 1600
