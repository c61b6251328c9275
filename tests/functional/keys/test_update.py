"""`PATCH /v1/auth/api-keys/{id}`: rename and allow-list."""

from __future__ import annotations

import pytest

from chalicelib.clock import FrozenClock
from tests.functional.conftest import Api

KEYS = "/v1/auth/api-keys"


def test_rename_answers_the_key_with_its_new_label(api: Api, alice: str) -> None:
    key = api.create_key(alice, label="old name")

    answer = api.call("PATCH", f"{KEYS}/{key['id']}", alice, body={"label": "  new name "})

    assert answer.status == 200
    assert answer.json["label"] == "new name"
    assert "key" not in answer.json
    assert api.call("GET", f"{KEYS}/{key['id']}", alice).json["label"] == "new name"
    assert api.call("GET", KEYS, alice).json["keys"][0]["label"] == "new name"
    assert api.call("GET", "/v1/auth/whoami", key["key"]).status == 200


def test_allowed_cidrs_are_set_in_their_canonical_spelling_and_cleared_with_null(
    api: Api, alice: str
) -> None:
    key = api.create_key(alice)
    path = f"{KEYS}/{key['id']}"

    set_answer = api.call(
        "PATCH",
        path,
        alice,
        body={"allowedCidrs": ["127.0.0.0/8", "203.0.113.5", "2001:DB8::/32", "127.0.0.0/8"]},
    )
    cleared = api.call("PATCH", path, alice, body={"allowedCidrs": None})

    assert set_answer.status == 200
    assert set_answer.json["allowedCidrs"] == ["127.0.0.0/8", "203.0.113.5/32", "2001:db8::/32"]
    assert set_answer.json["label"] == key["label"]
    assert cleared.json["allowedCidrs"] is None


def test_create_takes_allowed_cidrs_too(api: Api, alice: str) -> None:
    key = api.create_key(alice, allowedCidrs=["10.0.0.0/8", "::1"])

    assert key["allowedCidrs"] == ["10.0.0.0/8", "::1/128"]


@pytest.mark.parametrize(
    "cidrs",
    [
        [],
        ["10.0.0.1/24"],  # host bits set: refused rather than widened
        ["not a network"],
        ["10.0.0.0/33"],
        [42],
        "10.0.0.0/8",
        [f"10.0.{i}.0/24" for i in range(21)],
    ],
)
def test_invalid_allowed_cidrs_are_400_invalid_cidr(api: Api, alice: str, cidrs: object) -> None:
    key = api.create_key(alice)

    patched = api.call("PATCH", f"{KEYS}/{key['id']}", alice, body={"allowedCidrs": cidrs})
    created = api.call("POST", KEYS, alice, body={"label": "x", "allowedCidrs": cidrs})

    assert (patched.status, patched.code) == (400, "invalid_cidr")
    assert (created.status, created.code) == (400, "invalid_cidr")


def test_an_empty_patch_changes_nothing(api: Api, alice: str) -> None:
    key = api.create_key(alice, label="same")

    answer = api.call("PATCH", f"{KEYS}/{key['id']}", alice, body={})

    assert answer.status == 200
    assert answer.json["label"] == "same"


@pytest.mark.parametrize(
    ("body", "code"),
    [({"label": ""}, "invalid_label"), ({"label": "a\nb"}, "invalid_label"),
     ({"scopes": ["memory"]}, "unknown_field")],
)
def test_invalid_patch_bodies_are_400(api: Api, alice: str, body: dict, code: str) -> None:
    key = api.create_key(alice)

    answer = api.call("PATCH", f"{KEYS}/{key['id']}", alice, body=body)

    assert (answer.status, answer.code) == (400, code)


def test_a_revoked_key_cannot_be_changed(api: Api, alice: str) -> None:
    key = api.create_key(alice)
    api.call("DELETE", f"{KEYS}/{key['id']}", alice)

    answer = api.call("PATCH", f"{KEYS}/{key['id']}", alice, body={"label": "renamed"})

    assert (answer.status, answer.code) == (409, "key_not_active")


def test_a_key_in_its_grace_and_an_expired_key_can_be_renamed(
    api: Api, alice: str, clock: FrozenClock
) -> None:
    rotated = api.create_key(alice)
    api.call("POST", f"{KEYS}/{rotated['id']}/rotate", alice, body={"gracePeriodSeconds": 600})
    expiring = api.create_key(alice, expiresInDays=1)
    in_grace = api.call("PATCH", f"{KEYS}/{rotated['id']}", alice, body={"label": "during"})
    clock.advance(days=2)

    expired = api.call(
        "PATCH", f"{KEYS}/{expiring['id']}", api.token("usr_alice"), body={"label": "later"}
    )

    assert (in_grace.status, in_grace.json["label"]) == (200, "during")
    assert (expired.status, expired.json["status"]) == (200, "expired")


def test_another_users_key_is_404_whatever_the_body(api: Api, alice: str, bob: str) -> None:
    key = api.create_key(alice)

    answers = [
        api.call("PATCH", f"{KEYS}/{key['id']}", bob, body={"label": "mine"}),
        api.call("PATCH", f"{KEYS}/{key['id']}", bob, raw=b"{not json"),
        api.call("PATCH", f"{KEYS}/{key['id']}", bob, body={"allowedCidrs": "nonsense"}),
    ]

    assert [(a.status, a.code) for a in answers] == [(404, "not_found")] * 3
    assert api.call("GET", f"{KEYS}/{key['id']}", alice).json["label"] == key["label"]


def test_a_workspace_key_may_not_change_keys(api: Api, alice: str) -> None:
    ws = api.workspace(alice)
    key = api.create_key(alice, category="workspace", workspaceId=ws)

    answer = api.call("PATCH", f"{KEYS}/{key['id']}", key["key"], raw=b"{not json")

    assert (answer.status, answer.code) == (403, "insufficient_scope")
