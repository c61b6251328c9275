"""Item marshalling (boto3's TypeSerializer and TypeDeserializer) as the stores use it."""

from __future__ import annotations

from typing import Any

import pytest

from chalicelib.table import from_item, to_attribute, to_item

VALUES: dict[str, Any] = {
    "label": "k",
    "ttl": 1_790_000_000,
    "revealable": False,
    "ciphertext": b"\x00\xff",
    "scopes": ["memory", "skills"],
    "empty": [],
}


def test_values_round_trip_as_the_code_uses_them() -> None:
    back = from_item(to_item(VALUES))
    assert back == VALUES
    assert type(back["ttl"]) is int
    assert type(back["ciphertext"]) is bytes


def test_none_leaves_the_attribute_out() -> None:
    assert to_item({"label": "k", "revokedAt": None}) == {"label": {"S": "k"}}


@pytest.mark.parametrize(
    ("value", "attribute"),
    [
        ("x", {"S": "x"}),
        (7, {"N": "7"}),
        (True, {"BOOL": True}),
        (b"ab", {"B": b"ab"}),
        (("a", 1), {"L": [{"S": "a"}, {"N": "1"}]}),
    ],
)
def test_the_wire_form_is_dynamodbs(value: Any, attribute: dict[str, Any]) -> None:
    assert to_attribute(value) == attribute


def test_items_written_elsewhere_read_as_plain_values() -> None:
    item = {"scopes": {"SS": ["skills", "memory"]}, "gone": {"NULL": True}, "n": {"N": "42"}}
    assert from_item(item) == {"scopes": ["memory", "skills"], "gone": None, "n": 42}


def test_a_fractional_number_is_refused_not_truncated() -> None:
    with pytest.raises(TypeError):
        from_item({"ttl": {"N": "1.5"}})


def test_a_float_is_refused() -> None:
    with pytest.raises(TypeError):
        to_attribute(1.5)
