"""`IdempotencyStore.run`: the one Idempotency-Key sequence of keys create and rotate and of
workspaces create (look up, replay or refuse, claim the key before the commit point, answer
a lost claim with the winner's result)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import pytest
from botocore.exceptions import ClientError

from chalicelib.clock import epoch, rfc3339
from chalicelib.errors import ServiceError
from chalicelib.idempotency import IdempotencyStore, IdempotentRequest, Recorder
from chalicelib.table import to_item

TABLE = "memory-auth-test"
NOW = datetime(2026, 11, 25, 12, 0, tzinfo=UTC)
BODY = {"label": "ci"}


class LostRace(Exception):
    pass


class Records:
    """The records' items: GetItem, and PutItem only if absent, DeleteItem (a release)."""

    def __init__(self) -> None:
        self.items: dict[str, dict[str, Any]] = {}
        self.puts: list[dict[str, Any]] = []

    def write(self, request: IdempotentRequest, result_id: str, fingerprint: str = "") -> None:
        values = {
            "fingerprint": fingerprint or request.fingerprint,
            "resultId": result_id,
            "createdAt": rfc3339(NOW),
            "ttl": epoch(NOW) + 60,
        }
        self.items[str(request.record_key)] = {**request.record_key, **to_item(values)}

    def get_item(self, **request: Any) -> dict[str, Any]:
        found = self.items.get(str(request["Key"]))
        return {"Item": found} if found else {}

    def put_item(self, **request: Any) -> dict[str, Any]:
        self.puts.append(request)
        item_key = {name: request["Item"][name] for name in ("pk", "sk")}
        if str(item_key) in self.items:
            error = {"Error": {"Code": "ConditionalCheckFailedException", "Message": "no"}}
            raise ClientError(error, "PutItem")  # type: ignore[arg-type]
        self.items[str(item_key)] = request["Item"]
        return {}

    def delete_item(self, **request: Any) -> dict[str, Any]:
        self.items.pop(str(request["Key"]), None)
        return {}


def request_for(body: dict[str, Any] = BODY) -> IdempotentRequest:
    made = IdempotentRequest.of("order-1", "usr_a/user-token", "create-api-key", None, body)
    assert made is not None
    return made


class Operation:
    """A business operation: what it committed, with which extra members."""

    def __init__(self, records: Records, lose_to: str | None = None) -> None:
        self.records = records
        self.lose_to = lose_to
        self.members: list[Sequence[dict[str, Any]]] = []

    def commit(self, record: Recorder) -> str:
        self.members.append(record("key_new"))
        if self.lose_to is not None:
            raise LostRace()
        return "key_new"


def run(
    store: IdempotencyStore, request: IdempotentRequest | None, operation: Operation
) -> tuple[str, bool]:
    return store.run(
        request, lambda: NOW, lambda result_id: f"replayed {result_id}", operation.commit, LostRace
    )


def test_a_first_request_claims_its_key_before_the_operations_commit_point() -> None:
    records = Records()
    operation = Operation(records)

    answer = run(IdempotencyStore(records, TABLE), request_for(), operation)

    assert answer == ("key_new", False)
    assert operation.members == [()]  # nothing to write with the operation itself
    (put,) = records.puts
    assert put["Item"]["resultId"] == {"S": "key_new"}
    assert put["ConditionExpression"] == "attribute_not_exists(#pk) OR #ttl <= :now"


def test_a_retry_replays_the_first_result_and_commits_nothing() -> None:
    records = Records()
    records.write(request_for(), "key_first")
    operation = Operation(records)

    answer = run(IdempotencyStore(records, TABLE), request_for(), operation)

    assert answer == ("replayed key_first", True)
    assert operation.members == []


def test_the_same_key_for_another_request_is_refused() -> None:
    records = Records()
    records.write(request_for(), "key_first")
    operation = Operation(records)

    with pytest.raises(ServiceError) as raised:
        run(IdempotencyStore(records, TABLE), request_for({"label": "other"}), operation)

    assert raised.value.code == "idempotency_key_reused"
    assert operation.members == []


def test_a_race_lost_to_the_same_key_answers_the_winners_result() -> None:
    records = Records()
    operation = Operation(records, lose_to="key_winner")
    store = IdempotencyStore(records, TABLE)
    original_commit = operation.commit

    def winner_commits_first(record: Recorder) -> str:
        records.write(request_for(), "key_winner")
        return original_commit(record)

    answer = store.run(
        request_for(), lambda: NOW, lambda r: f"replayed {r}", winner_commits_first, LostRace
    )

    assert answer == ("replayed key_winner", True)


def test_an_operation_that_loses_its_own_race_gives_its_key_back_and_propagates() -> None:
    records = Records()
    operation = Operation(records, lose_to="someone")

    with pytest.raises(LostRace):
        run(IdempotencyStore(records, TABLE), request_for(), operation)

    assert len(operation.members) == 1
    assert records.items == {}  # the claim was given back: a retry runs again


def test_without_a_key_nothing_is_recorded_and_a_lost_race_propagates() -> None:
    records = Records()
    won = Operation(records)
    lost = Operation(records, lose_to="someone")
    store = IdempotencyStore(records, TABLE)

    answer = run(store, None, won)
    with pytest.raises(LostRace):
        run(store, None, lost)

    assert answer == ("key_new", False)
    assert won.members == [()]
