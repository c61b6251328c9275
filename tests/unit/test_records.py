"""A `Record` behaves as the frozen dataclass it replaces: built by keyword or position,
defaults, equality and hashing over its compared fields, immutable, copied by `copy.replace`."""

from __future__ import annotations

import copy
from dataclasses import FrozenInstanceError, dataclass
from dataclasses import field as dataclass_field
from typing import Any

import pytest

from chalicelib.records import Record, field


class Point(Record):
    x: int
    y: int = 0
    label: str | None = None


class Tagged(Record):
    name: str
    tags: dict[str, Any] | None = field(default=None, compare=False, hash=False)
    seen: int | None = field(default=None, compare=False)


@dataclass(frozen=True)
class TaggedDataclass:
    name: str
    tags: dict[str, Any] | None = dataclass_field(default=None, compare=False, hash=False)
    seen: int | None = dataclass_field(default=None, compare=False)


def test_a_record_is_built_by_keyword_or_position_with_its_defaults() -> None:
    by_keyword = Point(x=1, label="a")
    by_position = Point(1, 0, "a")

    assert (by_keyword.x, by_keyword.y, by_keyword.label) == (1, 0, "a")
    assert by_keyword == by_position


@pytest.mark.parametrize(
    ("args", "kwargs", "message"),
    [
        ((), {}, "needs the field 'x'"),
        ((1,), {"x": 2}, "got two values for 'x'"),
        ((1,), {"z": 2}, "has no field 'z'"),
        ((1, 2, "a", 4), {}, "takes 3 fields, got 4"),
    ],
)
def test_a_record_refuses_what_its_fields_do_not_take(
    args: tuple[Any, ...], kwargs: dict[str, Any], message: str
) -> None:
    with pytest.raises(TypeError) as refused:
        Point(*args, **kwargs)

    assert message in str(refused.value)


def test_a_record_is_immutable() -> None:
    point = Point(1)

    with pytest.raises(FrozenInstanceError):
        point.x = 2  # type: ignore[misc]
    with pytest.raises(FrozenInstanceError):
        del point.x  # type: ignore[misc]
    assert point.x == 1


def test_equality_and_hash_leave_out_the_fields_a_dataclass_would() -> None:
    one = Tagged("a", tags={"k": 1}, seen=1)
    other = Tagged("a", tags={"k": 2}, seen=2)
    as_dataclasses = TaggedDataclass("a", {"k": 1}, 1), TaggedDataclass("a", {"k": 2}, 2)

    assert one == other
    assert hash(one) == hash(other)
    assert (one == other) == (as_dataclasses[0] == as_dataclasses[1])
    assert one != Tagged("b")
    assert Point(1) != (1, 0, None)


def test_copy_replace_changes_fields_and_keeps_the_rest() -> None:
    point = Point(1, 2, "a")

    moved = copy.replace(point, y=5)

    assert moved == Point(1, 5, "a")
    assert point == Point(1, 2, "a")
    with pytest.raises(TypeError):
        copy.replace(point, z=1)


def test_a_record_copies_and_shows_its_fields() -> None:
    point = Point(1, label="a")

    assert copy.copy(point) == point
    assert copy.deepcopy(point) == point
    assert repr(point) == "Point(x=1, y=0, label='a')"


def test_a_field_without_default_after_one_with_is_refused() -> None:
    with pytest.raises(TypeError) as refused:

        class Broken(Record):
            a: int = 0
            b: int

    assert "non-default field 'b'" in str(refused.value)
