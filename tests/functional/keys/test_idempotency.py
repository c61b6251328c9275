"""Idempotency-Key on POST /v1/auth/api-keys and POST …/rotate: a retry answers the first result."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from chalicelib.clock import FrozenClock
from tests.functional.conftest import Answer, Api

KEYS = "/v1/auth/api-keys"


def create(api: Api, credential: str, idempotency_key: str, **body: object) -> Answer:
    body.setdefault("label", "ci")
    return api.call(
        "POST", KEYS, credential, body=body, headers={"Idempotency-Key": idempotency_key}
    )


def rotate(api: Api, credential: str, key_id: str, idempotency_key: str) -> Answer:
    return api.call(
        "POST", f"{KEYS}/{key_id}/rotate", credential, headers={"Idempotency-Key": idempotency_key}
    )


def listed(api: Api, credential: str) -> list[dict[str, object]]:
    return list(api.call("GET", KEYS, credential).json["keys"])


def test_create_retried_with_the_same_key_answers_the_same_key_and_creates_one(
    api: Api, alice: str
) -> None:
    first = create(api, alice, "create-1")
    again = create(api, alice, "create-1")
    assert (first.status, again.status) == (201, 201)
    assert again.json == first.json  # the same id and the same plaintext
    assert again.headers["Location"] == first.headers["Location"]
    assert again.headers["Cache-Control"] == "no-store"
    assert again.headers["Idempotent-Replayed"] == "true"
    assert "Idempotent-Replayed" not in first.headers
    assert [k["id"] for k in listed(api, alice)] == [first.json["id"]]


def test_create_with_a_different_body_under_the_same_key_is_422(api: Api, alice: str) -> None:
    first = create(api, alice, "create-1", label="one")
    other = create(api, alice, "create-1", label="two")
    assert first.status == 201
    assert other.status == 422
    assert other.code == "idempotency_key_reused"
    assert first.json["key"].encode() not in other.body
    assert len(listed(api, alice)) == 1


def test_the_body_is_compared_as_json_not_as_bytes(api: Api, alice: str) -> None:
    headers = {"Idempotency-Key": "create-1", "Content-Type": "application/json"}
    first = api.call(
        "POST",
        KEYS,
        alice,
        raw=json.dumps({"label": "a", "category": "admin"}).encode(),
        headers=headers,
    )
    again = api.call(
        "POST", KEYS, alice, raw=b'{ "category" : "admin",\n "label": "a" }', headers=headers
    )
    assert (first.status, again.status) == (201, 201)
    assert again.json["id"] == first.json["id"]


def test_keys_are_per_caller_the_same_key_from_another_user_creates_another_key(
    api: Api, alice: str, bob: str
) -> None:
    mine = create(api, alice, "shared")
    theirs = create(api, bob, "shared")
    assert (mine.status, theirs.status) == (201, 201)
    assert mine.json["id"] != theirs.json["id"]


def test_keys_are_per_credential_an_admin_key_never_replays_what_a_token_created(
    api: Api, alice: str
) -> None:
    admin = api.create_key(alice, scopes=["memory", "workspace:admin"])["key"]
    by_token = create(api, alice, "shared")
    by_key = create(api, admin, "shared")
    assert (by_token.status, by_key.status) == (201, 201)
    assert by_key.json["id"] != by_token.json["id"]
    assert set(by_key.json["scopes"]) == {"memory", "workspace:admin"}


def test_a_key_is_remembered_for_24_hours_then_starts_afresh(
    api: Api, alice: str, clock: FrozenClock
) -> None:
    first = create(api, alice, "daily")
    clock.advance(hours=23, minutes=59)
    within = create(api, alice, "daily")
    clock.advance(minutes=1)
    after = create(api, alice, "daily", label="a new day")
    assert within.json["id"] == first.json["id"]
    assert after.status == 201
    assert after.json["id"] != first.json["id"]


def test_a_replay_shows_the_key_as_it_is_now(api: Api, alice: str) -> None:
    first = create(api, alice, "create-1")
    api.call("DELETE", f"{KEYS}/{first.json['id']}", alice)
    again = create(api, alice, "create-1")
    assert again.status == 201
    assert (again.json["id"], again.json["key"]) == (first.json["id"], first.json["key"])
    assert again.json["status"] == "revoked"


@pytest.mark.parametrize(
    "value",
    ["", "x" * 256, "line\nbreak", "tab\there", "caf\u00e9"],
    ids=["empty", "too long", "newline", "tab", "not ascii"],
)
def test_a_malformed_idempotency_key_is_400_and_creates_nothing(
    api: Api, alice: str, value: str
) -> None:
    answer = api.call("POST", KEYS, alice, body={"label": "ci"}, headers={"Idempotency-Key": value})
    assert answer.status == 400
    assert answer.code == "invalid_idempotency_key"
    assert listed(api, alice) == []


def test_a_key_of_255_printable_characters_is_accepted(api: Api, alice: str) -> None:
    value = "".join(chr(32 + i % 95) for i in range(255))
    assert create(api, alice, value).status == 201


def test_rotate_retried_with_the_same_key_answers_the_same_successor(api: Api, alice: str) -> None:
    old = api.create_key(alice)
    first = rotate(api, alice, old["id"], "rotate-1")
    again = rotate(api, alice, old["id"], "rotate-1")
    assert (first.status, again.status) == (201, 201)
    assert again.json == first.json
    assert again.headers["Idempotent-Replayed"] == "true"
    keys = {k["id"]: k for k in listed(api, alice)}
    assert set(keys) == {old["id"], first.json["id"]}
    assert keys[old["id"]]["replacedBy"] == first.json["id"]


def test_rotate_with_a_new_key_after_a_rotation_is_409(api: Api, alice: str) -> None:
    old = api.create_key(alice)
    rotate(api, alice, old["id"], "rotate-1")
    assert rotate(api, alice, old["id"], "rotate-2").status == 409


def test_a_create_key_reused_on_a_rotation_is_422(api: Api, alice: str) -> None:
    created = create(api, alice, "one-key")
    answer = rotate(api, alice, created.json["id"], "one-key")
    assert answer.status == 422
    assert answer.code == "idempotency_key_reused"


def test_the_same_key_rotating_another_key_is_422(api: Api, alice: str) -> None:
    first, second = api.create_key(alice), api.create_key(alice)
    rotate(api, alice, first["id"], "rotate-1")
    answer = rotate(api, alice, second["id"], "rotate-1")
    assert answer.status == 422
    keys = {k["id"]: k for k in listed(api, alice)}
    assert (keys[second["id"]]["status"], keys[second["id"]]["replacedBy"]) == ("active", None)


def test_a_rotation_replay_needs_the_callers_access_to_the_key(
    api: Api, alice: str, bob: str
) -> None:
    old = api.create_key(alice)
    rotate(api, alice, old["id"], "rotate-1")
    assert rotate(api, bob, old["id"], "rotate-1").status == 404


def once(value: object, then: Callable[..., object]) -> Callable[..., object]:
    """A stand-in answering `value` to its first call and delegating every later one."""
    calls = iter(range(1_000_000))
    return lambda *args: value if next(calls) == 0 else then(*args)


def test_two_concurrent_creates_with_one_key_commit_one_key(
    api: Api, alice: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = create(api, alice, "race")
    # The second request looked for a record before the first one had written it: it goes
    # on, writes, and its transaction meets the first one's record.
    store = api.services.idempotency
    monkeypatch.setattr(store, "first_result", once(None, store.first_result))
    second = create(api, alice, "race")
    assert second.status == 201
    assert second.json == first.json
    assert [k["id"] for k in listed(api, alice)] == [first.json["id"]]


def test_two_concurrent_rotations_with_one_key_commit_one_successor(
    api: Api, alice: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    old = api.create_key(alice)
    keys, store = api.services.key_store, api.services.idempotency
    active = keys.get_with_ciphertext("usr_alice", old["id"])
    first = rotate(api, alice, old["id"], "race")
    # The second request read the old key while it was still active, and found no record.
    monkeypatch.setattr(keys, "get_with_ciphertext", once(active, keys.get_with_ciphertext))
    monkeypatch.setattr(store, "first_result", once(None, store.first_result))
    second = rotate(api, alice, old["id"], "race")
    assert second.status == 201, second.body
    assert second.json == first.json
    assert len(listed(api, alice)) == 2
