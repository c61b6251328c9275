"""The resolution rules 1–8 (docs/architecture.md), one test (or more) named after each,
through the service's routes."""

from __future__ import annotations

import pytest

from chalicelib.clock import FrozenClock
from tests.functional.conftest import Api

KEYS = "/v1/auth/api-keys"
WHOAMI = "/v1/auth/whoami"


def workspace_key(api: Api, owner: str, ws: str) -> dict:
    return api.create_key(owner, category="workspace", workspaceId=ws)


def test_rule1_workspace_key_sending_its_own_workspace_id_proceeds(api: Api, alice: str) -> None:
    ws = api.workspace(alice)
    key = workspace_key(api, alice, ws)
    answer = api.call("GET", WHOAMI, key["key"], workspace=ws)
    assert answer.status == 200
    assert answer.json["workspaceId"] == ws


def test_rule1_workspace_key_without_header_resolves_to_its_bound_workspace(
    api: Api, alice: str
) -> None:
    ws = api.workspace(alice)
    key = workspace_key(api, alice, ws)
    answer = api.call("GET", WHOAMI, key["key"])
    assert answer.status == 200
    assert answer.json == {
        "userId": "usr_alice",
        "credential": "api_key",
        "keyId": key["id"],
        "category": "workspace",
        "workspaceId": ws,
        "scopes": ["memory", "entities", "reasoning", "ontology", "skills"],
        "act": None,
        "email": None,  # a person's email and name: a user token's only
        "name": None,
    }


def test_rule2_workspace_key_naming_another_workspace_is_403_workspace_mismatch(
    api: Api, alice: str
) -> None:
    ws, other = api.workspace(alice, "one"), api.workspace(alice, "two")
    key = workspace_key(api, alice, ws)
    answer = api.call("GET", WHOAMI, key["key"], workspace=other)
    assert answer.status == 403
    assert answer.code == "workspace_mismatch"


def test_rule2_bound_key_is_never_retargeted_even_to_a_workspace_that_does_not_exist(
    api: Api, alice: str
) -> None:
    key = workspace_key(api, alice, api.workspace(alice))
    answer = api.call("GET", WHOAMI, key["key"], workspace="ws_" + "0" * 26)
    assert answer.status == 403
    assert answer.code == "workspace_mismatch"


def test_rule3_admin_key_owner_not_a_member_of_named_workspace_is_403(
    api: Api, alice: str, bob: str
) -> None:
    bobs_ws = api.workspace(bob)
    key = api.create_key(alice)
    answer = api.call("GET", WHOAMI, key["key"], workspace=bobs_ws)
    assert answer.status == 403
    assert answer.code == "not_a_member"


def test_rule3_user_token_not_a_member_of_named_workspace_is_403(
    api: Api, alice: str, bob: str
) -> None:
    answer = api.call("GET", WHOAMI, alice, workspace=api.workspace(bob))
    assert answer.status == 403
    assert answer.code == "not_a_member"


def test_rule3_admin_key_of_a_member_resolves_the_named_workspace(
    api: Api, alice: str, bob: str
) -> None:
    ws = api.workspace(bob)
    api.add_member(bob, ws, "usr_alice")
    key = api.create_key(alice)
    answer = api.call("GET", WHOAMI, key["key"], workspace=ws)
    assert answer.status == 200
    assert answer.json["workspaceId"] == ws


def test_rule3_removed_members_workspace_key_is_refused_on_the_next_request(
    api: Api, alice: str, bob: str
) -> None:
    ws = api.workspace(bob)
    api.add_member(bob, ws, "usr_alice")
    key = workspace_key(api, alice, ws)
    assert api.call("GET", WHOAMI, key["key"]).status == 200
    removed = api.call("DELETE", f"/v1/workspaces/{ws}/members/usr_alice", bob)
    assert removed.status == 204
    answer = api.call("GET", WHOAMI, key["key"])
    assert answer.status == 403
    assert answer.code == "not_a_member"


# Each key-management call, with the one success status the README documents for it.
MANAGEMENT_CALLS = [
    ("POST", KEYS, {"label": "x"}, 201),
    ("GET", KEYS, None, 200),
    ("GET", KEYS + "/{id}", None, 200),
    ("GET", KEYS + "/{id}/reveal", None, 200),
    ("POST", KEYS + "/{id}/rotate", None, 201),
    ("DELETE", KEYS + "/{id}", None, 204),
]
CALL = ("method", "path", "body", "status")


@pytest.mark.parametrize(CALL, MANAGEMENT_CALLS)
def test_rule4_workspace_key_cannot_create_or_manage_keys(
    api: Api, alice: str, method: str, path: str, body: dict | None, status: int
) -> None:
    key = workspace_key(api, alice, api.workspace(alice))
    answer = api.call(method, path.format(id=key["id"]), key["key"], body=body)
    assert answer.status == 403
    assert answer.code == "insufficient_scope"
    assert api.call("GET", f"{KEYS}/{key['id']}", alice).json["status"] == "active"


@pytest.mark.parametrize(CALL, MANAGEMENT_CALLS)
def test_rule5_admin_key_may_manage_keys(
    api: Api, alice: str, method: str, path: str, body: dict | None, status: int
) -> None:
    admin = api.create_key(alice)["key"]
    target = api.create_key(alice)
    answer = api.call(method, path.format(id=target["id"]), admin, body=body)
    assert answer.status == status, answer.body


@pytest.mark.parametrize(CALL, MANAGEMENT_CALLS)
def test_rule5_user_token_may_manage_keys(
    api: Api, alice: str, method: str, path: str, body: dict | None, status: int
) -> None:
    target = api.create_key(alice)
    answer = api.call(method, path.format(id=target["id"]), alice, body=body)
    assert answer.status == status, answer.body


def test_rule5_admin_key_without_workspace_admin_scope_cannot_manage_keys(
    api: Api, alice: str
) -> None:
    limited = api.create_key(alice, scopes=["memory"])
    answer = api.call("GET", KEYS, limited["key"])
    assert answer.status == 403
    assert answer.code == "insufficient_scope"


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", KEYS + "/{id}"),
        ("GET", KEYS + "/{id}/reveal"),
        ("POST", KEYS + "/{id}/rotate"),
        ("DELETE", KEYS + "/{id}"),
    ],
)
def test_rule6_non_owner_gets_404_for_another_users_key(
    api: Api, alice: str, bob: str, method: str, path: str
) -> None:
    alices = api.create_key(alice)
    answer = api.call(method, path.format(id=alices["id"]), bob)
    assert answer.status == 404
    assert answer.code == "not_found"
    assert api.call("GET", WHOAMI, alices["key"]).status == 200


def test_rule6_non_owner_404_is_indistinguishable_from_an_unknown_id(
    api: Api, alice: str, bob: str
) -> None:
    alices = api.create_key(alice)
    theirs = api.call("GET", f"{KEYS}/{alices['id']}/reveal", bob)
    unknown = api.call("GET", f"{KEYS}/key_01ARZ3NDEKTSV4RRFFQ69G5FAV/reveal", bob)
    assert theirs.json == unknown.json


def test_rule6_list_shows_only_the_callers_own_keys(api: Api, alice: str, bob: str) -> None:
    api.create_key(alice)
    mine = api.create_key(bob)
    assert [k["id"] for k in api.call("GET", KEYS, bob).json["keys"]] == [mine["id"]]


def test_rule6_workspace_owner_cannot_see_a_members_keys(api: Api, alice: str, bob: str) -> None:
    ws = api.workspace(bob)
    api.add_member(bob, ws, "usr_alice")
    alices = workspace_key(api, alice, ws)
    assert api.call("GET", KEYS, bob, workspace=ws).json["keys"] == []
    assert api.call("GET", f"{KEYS}/{alices['id']}/reveal", bob).status == 404


def test_rule7_revocation_takes_effect_on_the_next_request(api: Api, alice: str) -> None:
    ws = api.workspace(alice)
    key = workspace_key(api, alice, ws)
    assert api.call("GET", WHOAMI, key["key"]).status == 200
    api.call("DELETE", f"{KEYS}/{key['id']}", alice)
    answer = api.call("GET", WHOAMI, key["key"])
    assert answer.status == 401
    assert answer.code == "revoked_credentials"


def test_rule8_static_keys_expire_ninety_days_after_creation(
    api: Api, alice: str, clock: FrozenClock
) -> None:
    key = api.create_key(alice)
    clock.advance(days=90)
    answer = api.call("GET", WHOAMI, key["key"])
    assert answer.status == 401
    assert answer.code == "expired_credentials"


def test_user_token_whoami_carries_every_scope_and_no_key(api: Api, alice: str) -> None:
    answer = api.call("GET", WHOAMI, alice)
    assert answer.json == {
        "userId": "usr_alice",
        "credential": "user_token",
        "keyId": None,
        "category": None,
        "workspaceId": None,
        "scopes": ["memory", "entities", "reasoning", "ontology", "skills", "workspace:admin"],
        "act": None,
        "email": None,  # this test's sign-in sent none
        "name": None,
    }


def test_legacy_prefixed_keys_are_accepted_as_credentials(api: Api) -> None:
    from tools.import_legacy_keys import LegacyKey, import_keys

    legacy = "leg" + "acy_" + "Zq8uT0mOldKey42"
    import_keys(
        api.services,
        [LegacyKey(owner_id="usr_carol", label="old", category="admin", plaintext=legacy)],
    )
    answer = api.call("GET", WHOAMI, legacy)
    assert answer.status == 200
    assert answer.json["userId"] == "usr_carol"
