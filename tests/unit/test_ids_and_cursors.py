from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import pytest

from chalicelib import ids
from chalicelib.strict_parsing import decode_cursor as decode_any
from chalicelib.strict_parsing import encode_cursor

NOW = datetime(2026, 11, 21, 12, 0, tzinfo=UTC)


def test_ulids_sort_by_the_creation_time_they_are_given_not_by_when_they_are_made() -> None:
    later = ids.ulid(NOW)
    earlier = ids.ulid(NOW - timedelta(milliseconds=1))
    assert earlier < later
    assert len(later) == 26


def test_a_ulid_starts_with_its_milliseconds_in_crockford_base32() -> None:
    epoch_plus_one_ms = datetime(1970, 1, 1, 0, 0, 0, 1000, tzinfo=UTC)
    assert ids.ulid(epoch_plus_one_ms).startswith("0000000001")


def test_a_time_before_1970_makes_no_ulid() -> None:
    with pytest.raises(ValueError, match="1970"):
        ids.ulid(datetime(1969, 12, 31, tzinfo=UTC))


def test_new_ids_have_their_prefixes() -> None:
    assert ids.is_key_id(ids.new_key_id(NOW))
    assert ids.is_workspace_id(ids.new_workspace_id(NOW))
    assert ids.is_user_id(ids.new_user_id(NOW))


def decode_cursor(cursor: str) -> str | None:
    return decode_any(cursor, ids.is_key_id)


def test_cursor_round_trips_a_key_id() -> None:
    key_id = ids.new_key_id(NOW)
    assert decode_cursor(encode_cursor(key_id)) == key_id


@pytest.mark.parametrize("cursor", ["", "!!!", "eyJ9", "e30", encode_cursor("USER#x")])
def test_foreign_cursors_decode_to_none(cursor: str) -> None:
    assert decode_cursor(cursor) is None


@pytest.mark.parametrize(
    ("is_id", "value"),
    [
        (ids.is_key_id, "key_" + "0" * 26 + "\n"),
        (ids.is_workspace_id, "ws_" + "0" * 26 + "\n"),
        (ids.is_user_id, "usr_abc\n"),
        (ids.is_event_id, "evt_" + "0" * 26 + "\n"),
    ],
)
def test_an_id_followed_by_a_newline_is_not_an_id(is_id: Callable[[str], bool], value: str) -> None:
    assert not is_id(value)
