"""The last-use recorder without I/O: which uses write, and that nothing it does can raise."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta
from typing import Any

from botocore.exceptions import ReadTimeoutError

from chalicelib.keys.last_use import LastUse
from chalicelib.keys.model import KEY_LIFETIME, ApiKey, last_used_window

NOW = datetime(2026, 11, 21, 12, 3, 30, tzinfo=UTC)


def make_key(key_id: str = "key_01", last_used_at: datetime | None = None) -> ApiKey:
    return ApiKey(
        id=key_id, owner_id="usr_a", label="k", category="admin", workspace_id=None,
        scopes=("memory",), key_hash="0" * 64, created_at=NOW, expires_at=NOW + KEY_LIFETIME,
        last_used_at=last_used_at,
    )


class Store:
    """DynamoDB as the recorder sees it: each flush is a series of single-item updates, the
    credential item's first (`requests` groups them, one entry a flush)."""

    def __init__(self, error: Exception | None = None):
        self.calls: list[dict[str, Any]] = []
        self.error = error

    def update_item(self, **request: Any) -> dict[str, Any]:
        self.calls.append(request)
        if self.error:
            raise self.error
        return {}

    @property
    def requests(self) -> list[dict[str, Any]]:
        flushes: list[dict[str, Any]] = []
        for call in self.calls:
            if call["Key"]["pk"]["S"].startswith("CRED#"):
                flushes.append({"TransactItems": []})
            flushes[-1]["TransactItems"].append({"Update": call})
        return flushes


def usage_members(request: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        m["Update"] for m in request["TransactItems"]
        if m["Update"]["Key"]["pk"]["S"].startswith("USAGE#")
    ]


def test_the_window_is_the_five_minute_boundary_below() -> None:
    assert last_used_window(NOW) == datetime(2026, 11, 21, 12, 0, tzinfo=UTC)
    assert last_used_window(datetime(2026, 11, 21, 12, 5, tzinfo=UTC)).minute == 5


def credential_member(request: dict[str, Any]) -> dict[str, Any]:
    (member,) = [
        m["Update"] for m in request["TransactItems"]
        if m["Update"]["Key"]["pk"]["S"].startswith("CRED#")
    ]
    return dict(member)


def test_a_container_writes_its_counts_even_when_last_used_at_is_this_window() -> None:
    store = Store()

    LastUse(lambda: store, "t").record(make_key(last_used_at=last_used_window(NOW)), NOW)

    assert len(store.requests) == 1


def test_one_write_per_key_and_window_in_a_container() -> None:
    store = Store()
    last_use = LastUse(lambda: store, "t")

    for second in range(0, 90, 10):
        last_use.record(make_key(), NOW + timedelta(seconds=second))
    last_use.record(make_key("key_02"), NOW)
    last_use.record(make_key(), NOW + timedelta(minutes=5))

    assert len(store.requests) == 3
    window = credential_member(store.requests[0])["ExpressionAttributeValues"][":window"]
    assert window == {"S": "2026-11-21T12:00:00Z"}
    (usage,) = usage_members(store.requests[0])
    assert usage["Key"] == {"pk": {"S": "USAGE#key_01"}, "sk": {"S": "HOUR#2026-11-21T12"}}
    assert usage["ExpressionAttributeValues"][":count"] == {"N": "1"}
    (second,) = usage_members(store.requests[2])
    assert second["ExpressionAttributeValues"][":count"] == {"N": "9"}  # 8 kept, 1 new


def test_a_burst_from_many_threads_makes_one_write() -> None:
    store = Store()
    last_use = LastUse(lambda: store, "t")
    barrier = threading.Barrier(16)

    def use() -> None:
        barrier.wait()
        last_use.record(make_key(), NOW)

    threads = [threading.Thread(target=use) for _ in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert len(store.requests) == 1


def test_a_timeout_is_swallowed_and_not_retried_in_the_window() -> None:
    store = Store(ReadTimeoutError(endpoint_url="http://dynamodb"))
    last_use = LastUse(lambda: store, "t")

    last_use.record(make_key(), NOW)
    last_use.record(make_key(), NOW + timedelta(seconds=30))

    assert len(store.requests) == 1


def test_a_flush_with_an_unknown_outcome_is_sent_again_as_it_was_never_dropped() -> None:
    """A failed flush is retried, never dropped: the day's count it carries is what the
    quota reads, so dropping it would let a daily quota fail open."""
    store = Store(ReadTimeoutError(endpoint_url="http://dynamodb"))
    last_use = LastUse(lambda: store, "t")

    for window in range(5):
        last_use.record(make_key(), NOW + timedelta(seconds=10 + 300 * window))

    sent = [r["TransactItems"][0]["Update"]["ExpressionAttributeValues"] for r in store.requests]
    assert [v[":token"] for v in sent] == [{"S": f"{last_use.container_id}:1"}] * 5
    assert [v[":today"] for v in sent] == [{"N": "1"}] * 5


def test_even_an_unexpected_error_is_swallowed() -> None:
    store = Store(RuntimeError("boom"))

    LastUse(lambda: store, "t").record(make_key(), NOW)

    assert len(store.requests) == 1


def test_the_memo_forgets_when_full_and_then_only_writes_again() -> None:
    store = Store()
    last_use = LastUse(lambda: store, "t", memo_size=2)

    for key_id in ("key_a", "key_b", "key_c", "key_a"):
        last_use.record(make_key(key_id), NOW)

    assert len(store.requests) == 4
