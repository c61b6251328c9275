"""`get_many_consistent`: one BatchGetItem, its unprocessed keys asked again, then fail closed."""

from __future__ import annotations

from typing import Any

import pytest

from chalicelib import table
from chalicelib.errors import DependencyUnavailable
from chalicelib.table import get_many_consistent, key

TABLE = "memory-auth-test"
CREDENTIAL = key("CRED#abc", "CRED")
MEMBERSHIP = key("WS#ws_1", "MEMBER#usr_a")
MISSING = key("WS#ws_2", "MEMBER#usr_a")


def item(item_key: dict[str, Any], **values: str) -> dict[str, Any]:
    return {**item_key, **{name: {"S": value} for name, value in values.items()}}


class FakeDynamoDB:
    """Answers BatchGetItem from `items`; its n-th answer leaves the last `unread[n]` keys it
    was asked for unprocessed (DynamoDB may answer part of a batch)."""

    def __init__(self, items: list[dict[str, Any]], unread: list[int]) -> None:
        self.items = items
        self.unread = unread
        self.requests: list[dict[str, Any]] = []

    def batch_get_item(self, RequestItems: dict[str, Any]) -> dict[str, Any]:  # noqa: N803
        self.requests.append(RequestItems)
        asked = RequestItems[TABLE]["Keys"]
        left = self.unread.pop(0) if self.unread else 0
        answered, unprocessed = asked[: len(asked) - left], asked[len(asked) - left :]
        wanted = {table._key_of(k) for k in answered}
        found = [i for i in self.items if table._key_of(i) in wanted]
        rest = {TABLE: {"Keys": unprocessed, "ConsistentRead": True}} if unprocessed else {}
        return {"Responses": {TABLE: found}, "UnprocessedKeys": rest}


@pytest.fixture(autouse=True)
def no_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(table, "UNPROCESSED_BACKOFF_SECONDS", 0)


def test_items_come_back_in_the_order_asked_with_none_for_absent_ones() -> None:
    client = FakeDynamoDB([item(MEMBERSHIP, role="member"), item(CREDENTIAL, keyId="k")], [])

    found = get_many_consistent(client, TABLE, [CREDENTIAL, MISSING, MEMBERSHIP])

    assert [f and f.get("keyId", f.get("role")) for f in found] == ["k", None, "member"]
    (request,) = client.requests
    assert request[TABLE]["ConsistentRead"] is True


def test_unprocessed_keys_are_asked_again_and_only_they() -> None:
    client = FakeDynamoDB([item(CREDENTIAL, keyId="k"), item(MEMBERSHIP, role="member")], [1])

    found = get_many_consistent(client, TABLE, [CREDENTIAL, MEMBERSHIP])

    assert [f is not None for f in found] == [True, True]
    assert [r[TABLE]["Keys"] for r in client.requests] == [[CREDENTIAL, MEMBERSHIP], [MEMBERSHIP]]


def test_keys_still_unprocessed_after_the_last_attempt_fail_closed() -> None:
    client = FakeDynamoDB([item(CREDENTIAL, keyId="k")], [2] * table.UNPROCESSED_ATTEMPTS)

    with pytest.raises(DependencyUnavailable):
        get_many_consistent(client, TABLE, [CREDENTIAL, MEMBERSHIP])
    assert len(client.requests) == table.UNPROCESSED_ATTEMPTS
