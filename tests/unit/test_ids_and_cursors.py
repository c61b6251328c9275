import pytest

from chalicelib import ids
from chalicelib.keys.store import decode_cursor, encode_cursor


def test_ulids_sort_by_creation_time() -> None:
    first = ids.ulid(now_ms=1_000)
    second = ids.ulid(now_ms=2_000)
    assert first < second
    assert len(first) == 26


def test_new_ids_have_their_prefixes() -> None:
    assert ids.is_key_id(ids.new_key_id())
    assert ids.is_workspace_id(ids.new_workspace_id())
    assert ids.is_user_id(ids.new_user_id())


def test_cursor_round_trips_a_key_id() -> None:
    key_id = ids.new_key_id()
    assert decode_cursor(encode_cursor(key_id)) == key_id


@pytest.mark.parametrize("cursor", ["", "!!!", "eyJ9", "e30", encode_cursor("USER#x")])
def test_foreign_cursors_decode_to_none(cursor: str) -> None:
    assert decode_cursor(cursor) is None
