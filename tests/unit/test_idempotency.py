"""Idempotency-Key: what a valid key is, and what counts as the same request."""

from __future__ import annotations

import pytest

from chalicelib.errors import ServiceError
from chalicelib.idempotency import IdempotentRequest, fingerprint, parse_key


@pytest.mark.parametrize(
    "value", ["a", "x" * 255, "8e0f2c1a-5b7d-4c1e-9d0b-3f6a2e7c9b10", "with space", "~!@#$%^&*()"]
)
def test_printable_ascii_keys_of_1_to_255_characters_are_accepted(value: str) -> None:
    assert parse_key(value) == value


@pytest.mark.parametrize(
    "value",
    ["", "x" * 256, "new\nline", "\x7f", "caf\u00e9", "\u200b"],
    ids=["empty", "256", "newline", "delete", "latin-1", "zero width"],
)
def test_other_keys_are_invalid_idempotency_key(value: str) -> None:
    with pytest.raises(ServiceError) as raised:
        parse_key(value)
    assert (raised.value.status, raised.value.code) == (400, "invalid_idempotency_key")


def test_no_header_is_no_idempotent_request() -> None:
    assert IdempotentRequest.of(None, "usr_a/user-token", "create", None, {}) is None


def test_the_fingerprint_is_of_the_parsed_body_in_any_order_or_spacing() -> None:
    assert fingerprint("create", None, {"a": 1, "b": [1, 2]}) == fingerprint(
        "create", None, {"b": [1, 2], "a": 1}
    )


@pytest.mark.parametrize(
    "other",
    [
        ("rotate", None, {"label": "x"}),
        ("create", "key_1", {"label": "x"}),
        ("create", None, {"label": "y"}),
        ("create", None, {"label": "x", "gracePeriodSeconds": 60}),
        ("create", None, {}),
    ],
    ids=["operation", "target", "value", "a field more", "empty"],
)
def test_any_other_operation_target_or_body_is_another_request(
    other: tuple[str, str | None, dict[str, object]],
) -> None:
    assert fingerprint(*other) != fingerprint("create", None, {"label": "x"})


def test_records_are_per_caller_and_do_not_show_the_key() -> None:
    mine = IdempotentRequest.of("order-7731", "usr_a/user-token", "create", None, {})
    theirs = IdempotentRequest.of("order-7731", "usr_b/user-token", "create", None, {})
    assert mine is not None and theirs is not None
    assert mine.record_key != theirs.record_key
    assert "order-7731" not in repr(mine) + str(mine.record_key)
