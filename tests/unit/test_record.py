"""`Record` behaves as the NamedTuples it replaced did where the core relies on them."""

from __future__ import annotations

import pytest

from stepwise.record import Record


class Point(Record):
    """A record with a default."""

    x: int
    y: int = 0
    label: str = "origin"


class Labelled(Point):
    """A subclass adds fields after its parent's."""

    colour: str = "red"


def test_fields_by_position_or_name_with_defaults() -> None:
    assert Point(1).x == 1 and Point(1).y == 0 and Point(1).label == "origin"
    assert Point(1, 2, "a") == Point(x=1, y=2, label="a") == Point(1, label="a", y=2)
    assert Point._fields == ("x", "y", "label")
    assert Labelled._fields == ("x", "y", "label", "colour") and Labelled(1).colour == "red"


def test_equality_hashing_repr_unpacking_replace_and_asdict() -> None:
    point = Point(1, 2)
    assert point != Point(1, 3) and point != Labelled(1, 2) and point != (1, 2, "origin")
    assert len({point, Point(1, 2), Point(2, 1)}) == 2
    assert repr(point) == "Point(x=1, y=2, label='origin')"
    x, y, label = point
    assert (x, y, label) == (1, 2, "origin")
    assert point._replace(y=5) == Point(1, 5) and point == Point(1, 2), "the original is unchanged"
    assert point._asdict() == {"x": 1, "y": 2, "label": "origin"}


@pytest.mark.parametrize(
    ("build", "says"),
    [
        (lambda: Point(), "needs 'x'"),
        (lambda: Point(1, 2, "a", "b"), "takes 3 fields, got 4"),
        (lambda: Point(1, z=3), "has no field 'z'"),
        (lambda: Point(1, x=2), "got 'x' twice"),
    ],
)
def test_a_wrong_construction_is_a_clear_type_error(build: object, says: str) -> None:
    with pytest.raises(TypeError, match=says):
        build()  # type: ignore[operator]


def test_a_record_cannot_be_changed() -> None:
    point = Point(1)
    with pytest.raises(AttributeError, match="immutable"):
        point.x = 2  # type: ignore[misc]
    with pytest.raises(AttributeError, match="immutable"):
        del point.x  # type: ignore[misc]
    assert point.x == 1
