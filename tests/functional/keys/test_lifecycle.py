"""Key states and transitions, and the key endpoints, one test per row and rule."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from chalicelib.clock import FrozenClock
from tests.functional.conftest import Api
from tests.functional.failures import replicated_write_conflict

KEYS = "/v1/auth/api-keys"


# -- (none) --POST create--> active ----------------------------------------------------


def test_create_by_user_token_returns_an_active_key_and_its_raw_key_once(
    api: Api, alice: str
) -> None:
    answer = api.call("POST", KEYS, alice, body={"label": "ci"})
    assert answer.status == 201
    created = answer.json
    assert created["status"] == "active"
    assert created["key"].startswith("sv" + "c_")
    assert answer.headers["Location"] == f"{KEYS}/{created['id']}"
    assert answer.headers["Cache-Control"] == "no-store"
    listed = api.call("GET", KEYS, alice).json["keys"]
    assert [k["id"] for k in listed] == [created["id"]]
    assert "key" not in listed[0]


def test_create_by_admin_key_returns_an_active_key(api: Api, alice: str) -> None:
    admin = api.create_key(alice)["key"]
    answer = api.call("POST", KEYS, admin, body={"label": "second"})
    assert answer.status == 201
    assert answer.json["status"] == "active"


def test_created_key_resource_has_every_documented_field(api: Api, alice: str) -> None:
    created = api.create_key(alice)
    assert set(created) == {
        "id",
        "label",
        "category",
        "workspaceId",
        "scopes",
        "status",
        "hint",
        "createdAt",
        "expiresAt",
        "revokedAt",
        "replacedBy",
        "revealable",
        "lastUsedAt",
        "allowedCidrs",
        "requestsPerDay",
        "dpopJkt",
        "key",
    }
    assert created["id"].startswith("key_")
    assert created["hint"] == "sv" + "c_..." + created["key"][-4:]
    assert created["revealable"] is True


def test_category_defaults_to_admin(api: Api, alice: str) -> None:
    created = api.create_key(alice)
    assert created["category"] == "admin"
    assert created["workspaceId"] is None
    assert created["scopes"] == [
        "memory",
        "entities",
        "reasoning",
        "ontology",
        "skills",
        "workspace:admin",
    ]


def test_create_accepts_json_with_a_charset_parameter(api: Api, alice: str) -> None:
    answer = api.call(
        "POST",
        KEYS,
        alice,
        raw=b'{"label": "x"}',
        headers={"Content-Type": "application/json; charset=utf-8"},
    )
    assert answer.status == 201


def test_label_is_trimmed(api: Api, alice: str) -> None:
    assert api.create_key(alice, label="  padded  ")["label"] == "padded"


def test_workspace_key_gets_data_plane_scopes_by_default(api: Api, alice: str) -> None:
    ws = api.workspace(alice)
    created = api.create_key(alice, category="workspace", workspaceId=ws)
    assert created["workspaceId"] == ws
    assert created["scopes"] == ["memory", "entities", "reasoning", "ontology", "skills"]


def test_create_accepts_workspace_id_snake_case_spelling(api: Api, alice: str) -> None:
    ws = api.workspace(alice)
    created = api.create_key(alice, category="workspace", workspace_id=ws)
    assert created["workspaceId"] == ws


def test_create_with_a_subset_of_scopes(api: Api, alice: str) -> None:
    ws = api.workspace(alice)
    created = api.create_key(alice, category="workspace", workspaceId=ws, scopes=["memory"])
    assert created["scopes"] == ["memory"]


# -- active --POST rotate--> revoked (+ new active key) --------------------------------


def test_rotate_by_owner_revokes_old_key_and_returns_a_new_active_key(
    api: Api, alice: str, clock: FrozenClock
) -> None:
    ws = api.workspace(alice)
    old = api.create_key(
        alice, category="workspace", workspaceId=ws, label="svc", scopes=["memory"]
    )
    clock.advance(days=10)
    answer = api.call("POST", f"{KEYS}/{old['id']}/rotate", alice)
    assert answer.status == 201
    new = answer.json
    assert new["id"] != old["id"]
    assert new["key"] != old["key"]
    assert answer.headers["Location"] == f"{KEYS}/{new['id']}"
    assert answer.headers["Cache-Control"] == "no-store"
    assert (new["label"], new["category"], new["workspaceId"], new["scopes"]) == (
        "svc",
        "workspace",
        ws,
        ["memory"],
    )
    assert new["expiresAt"] > old["expiresAt"]  # a fresh 90-day lifetime
    previous = api.call("GET", f"{KEYS}/{old['id']}", alice).json
    assert previous["status"] == "revoked"
    assert previous["replacedBy"] == new["id"]
    assert api.call("GET", "/v1/auth/whoami", old["key"]).code == "revoked_credentials"
    assert api.call("GET", "/v1/auth/whoami", new["key"]).status == 200


def test_rotating_a_revoked_key_is_409_key_not_active(api: Api, alice: str) -> None:
    key = api.create_key(alice)
    api.call("DELETE", f"{KEYS}/{key['id']}", alice)
    answer = api.call("POST", f"{KEYS}/{key['id']}/rotate", alice)
    assert answer.status == 409
    assert answer.code == "key_not_active"


def test_rotating_an_expired_key_is_409_key_not_active(
    api: Api, alice: str, clock: FrozenClock
) -> None:
    key = api.create_key(alice)
    clock.advance(days=91)
    answer = api.call("POST", f"{KEYS}/{key['id']}/rotate", api.token("usr_alice"))
    assert answer.status == 409
    assert answer.code == "key_not_active"


def test_rotating_twice_in_a_row_second_is_409(api: Api, alice: str) -> None:
    key = api.create_key(alice)
    assert api.call("POST", f"{KEYS}/{key['id']}/rotate", alice).status == 201
    assert api.call("POST", f"{KEYS}/{key['id']}/rotate", alice).status == 409


def test_rotation_whose_claim_meets_replicated_write_conflicts_is_503_and_nothing_changes(
    api: Api, alice: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    key = api.create_key(alice)
    monkeypatch.setattr(api.services.dynamodb, "update_item", replicated_write_conflict)
    answer = api.call("POST", f"{KEYS}/{key['id']}/rotate", alice)
    monkeypatch.undo()
    assert answer.status == 503 and answer.code == "dependency_unavailable"
    assert answer.headers["Retry-After"] == "1"
    assert api.call("GET", "/v1/auth/whoami", key["key"]).status == 200
    assert [k["id"] for k in api.call("GET", KEYS, alice).json["keys"]] == [key["id"]]


# -- active --DELETE revoke--> revoked ---------------------------------------------------


def test_revoke_by_owner_is_204_and_effective_on_the_next_request(api: Api, alice: str) -> None:
    key = api.create_key(alice)
    assert api.call("GET", "/v1/auth/whoami", key["key"]).status == 200
    answer = api.call("DELETE", f"{KEYS}/{key['id']}", alice)
    assert answer.status == 204
    assert answer.body == b""
    refused = api.call("GET", "/v1/auth/whoami", key["key"])
    assert refused.status == 401
    assert refused.code == "revoked_credentials"


def test_revoking_an_already_revoked_key_is_204_again(api: Api, alice: str) -> None:
    key = api.create_key(alice)
    assert api.call("DELETE", f"{KEYS}/{key['id']}", alice).status == 204
    first = api.call("GET", f"{KEYS}/{key['id']}", alice).json["revokedAt"]
    assert api.call("DELETE", f"{KEYS}/{key['id']}", alice).status == 204
    assert api.call("GET", f"{KEYS}/{key['id']}", alice).json["revokedAt"] == first


def test_an_admin_key_can_revoke_itself(api: Api, alice: str) -> None:
    key = api.create_key(alice)
    assert api.call("DELETE", f"{KEYS}/{key['id']}", key["key"]).status == 204
    assert api.call("GET", "/v1/auth/whoami", key["key"]).status == 401


def test_revocation_after_a_replicated_write_conflict_sends_it_again_and_is_204(
    api: Api, alice: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    key = api.create_key(alice)
    real = api.services.dynamodb.update_item
    calls = []

    def conflict_once(**request: Any) -> Any:
        calls.append(1)
        if len(calls) == 1:
            replicated_write_conflict()
        return real(**request)

    monkeypatch.setattr(api.services.dynamodb, "update_item", conflict_once)
    assert api.call("DELETE", f"{KEYS}/{key['id']}", alice).status == 204
    monkeypatch.undo()
    assert len(calls) >= 2  # the credential twice, then what follows it
    assert api.call("GET", "/v1/auth/whoami", key["key"]).code == "revoked_credentials"


def test_revocation_never_reports_success_while_conflicts_persist(
    api: Api, alice: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    key = api.create_key(alice)
    monkeypatch.setattr(api.services.dynamodb, "update_item", replicated_write_conflict)
    answer = api.call("DELETE", f"{KEYS}/{key['id']}", alice)
    assert answer.status == 503
    monkeypatch.undo()
    assert api.call("GET", "/v1/auth/whoami", key["key"]).status == 200


# -- active --time--> expired ------------------------------------------------------------


def test_key_expires_ninety_days_after_creation(api: Api, alice: str, clock: FrozenClock) -> None:
    key = api.create_key(alice)
    clock.advance(days=90, seconds=-1)
    assert api.call("GET", "/v1/auth/whoami", key["key"]).status == 200
    clock.advance(seconds=1)
    refused = api.call("GET", "/v1/auth/whoami", key["key"])
    assert refused.status == 401
    assert refused.code == "expired_credentials"
    fresh = api.token("usr_alice")
    assert api.call("GET", f"{KEYS}/{key['id']}", fresh).json["status"] == "expired"


def test_expires_at_is_created_at_plus_ninety_days(api: Api, alice: str) -> None:
    from chalicelib.clock import parse_rfc3339

    key = api.create_key(alice)
    created, expires = parse_rfc3339(key["createdAt"]), parse_rfc3339(key["expiresAt"])
    assert created is not None and expires is not None
    assert expires - created == timedelta(days=90)


# -- reveal and list do not change state ---------------------------------------------------


def test_reveal_and_list_do_not_change_state(api: Api, alice: str) -> None:
    key = api.create_key(alice)
    before = api.call("GET", f"{KEYS}/{key['id']}", alice).json
    api.call("GET", f"{KEYS}/{key['id']}/reveal", alice)
    api.call("GET", KEYS, alice)
    assert api.call("GET", f"{KEYS}/{key['id']}", alice).json == before
    assert api.call("GET", "/v1/auth/whoami", key["key"]).status == 200


def test_reveal_returns_the_plaintext_to_its_owner(api: Api, alice: str) -> None:
    key = api.create_key(alice)
    answer = api.call("GET", f"{KEYS}/{key['id']}/reveal", alice)
    assert answer.status == 200
    assert answer.json["key"] == key["key"]
    assert answer.headers["Cache-Control"] == "no-store"


def test_reveal_of_an_expired_key_is_allowed(api: Api, alice: str, clock: FrozenClock) -> None:
    key = api.create_key(alice)
    clock.advance(days=100)
    answer = api.call("GET", f"{KEYS}/{key['id']}/reveal", api.token("usr_alice"))
    assert answer.status == 200
    assert answer.json["status"] == "expired"
    assert answer.json["key"] == key["key"]


def test_reveal_of_a_revoked_key_is_410_key_revoked(api: Api, alice: str) -> None:
    key = api.create_key(alice)
    api.call("DELETE", f"{KEYS}/{key['id']}", alice)
    answer = api.call("GET", f"{KEYS}/{key['id']}/reveal", alice)
    assert answer.status == 410
    assert answer.code == "key_revoked"


def test_a_narrower_admin_key_cannot_reveal_a_broader_key(api: Api, alice: str) -> None:
    narrow = api.create_key(alice, scopes=["workspace:admin"])
    broad = api.create_key(alice)
    answer = api.call("GET", f"{KEYS}/{broad['id']}/reveal", narrow["key"])
    assert answer.status == 403
    assert answer.code == "insufficient_scope"
    assert broad["key"].encode() not in answer.body


def test_a_narrower_admin_key_may_reveal_a_key_within_its_scopes(api: Api, alice: str) -> None:
    narrow = api.create_key(alice, scopes=["memory", "workspace:admin"])
    ws = api.workspace(alice)
    inside = api.create_key(alice, category="workspace", workspaceId=ws, scopes=["memory"])
    answer = api.call("GET", f"{KEYS}/{inside['id']}/reveal", narrow["key"])
    assert answer.status == 200


# -- get and list ------------------------------------------------------------------------------


def test_get_returns_the_resource_without_plaintext(api: Api, alice: str) -> None:
    key = api.create_key(alice)
    answer = api.call("GET", f"{KEYS}/{key['id']}", alice)
    assert answer.status == 200
    assert "key" not in answer.json
    assert key["key"].encode() not in answer.body
    assert answer.json["id"] == key["id"]


def test_list_has_no_plaintext(api: Api, alice: str) -> None:
    key = api.create_key(alice)
    answer = api.call("GET", KEYS, alice)
    assert key["key"].encode() not in answer.body
    assert all("key" not in k for k in answer.json["keys"])


def test_list_is_newest_first_and_paginates_with_a_cursor(
    api: Api, alice: str, clock: FrozenClock
) -> None:
    made = []
    for i in range(5):
        made.append(api.create_key(alice, label=f"k{i}")["id"])
        clock.advance(seconds=1)
    first = api.call("GET", KEYS + "?limit=2", alice).json
    assert [k["id"] for k in first["keys"]] == made[::-1][:2]
    second = api.call("GET", f"{KEYS}?limit=2&cursor={first['nextCursor']}", alice).json
    assert [k["id"] for k in second["keys"]] == made[::-1][2:4]
    third = api.call("GET", f"{KEYS}?limit=2&cursor={second['nextCursor']}", alice).json
    assert [k["id"] for k in third["keys"]] == made[::-1][4:]
    assert third["nextCursor"] is None


def test_list_filters_by_status_and_keeps_revoked_keys_listed(api: Api, alice: str) -> None:
    kept = api.create_key(alice)
    gone = api.create_key(alice)
    api.call("DELETE", f"{KEYS}/{gone['id']}", alice)
    everything = api.call("GET", KEYS, alice).json["keys"]
    assert {k["id"]: k["status"] for k in everything} == {
        kept["id"]: "active",
        gone["id"]: "revoked",
    }
    revoked = api.call("GET", KEYS + "?status=revoked", alice).json["keys"]
    assert [k["id"] for k in revoked] == [gone["id"]]


def test_list_of_active_keys_of_a_workspace_leaves_out_revoked_and_rotated_keys(
    api: Api, alice: str
) -> None:
    ws = api.workspace(alice, "team")
    first = api.create_key(alice, category="workspace", workspaceId=ws)
    rotated = api.call("POST", f"{KEYS}/{first['id']}/rotate", alice, body={}).json
    api.call("DELETE", f"{KEYS}/{rotated['id']}", alice)

    active = api.call("GET", KEYS + "?status=active", alice, workspace=ws).json["keys"]
    revoked = api.call("GET", KEYS + "?status=revoked", alice, workspace=ws).json["keys"]

    assert active == []
    assert {k["id"] for k in revoked} == {first["id"], rotated["id"]}


def test_list_with_a_workspace_lists_only_keys_bound_to_it(api: Api, alice: str) -> None:
    ws1, ws2 = api.workspace(alice, "one"), api.workspace(alice, "two")
    k1 = api.create_key(alice, category="workspace", workspaceId=ws1)
    api.create_key(alice, category="workspace", workspaceId=ws2)
    api.create_key(alice)
    by_header = api.call("GET", KEYS, alice, workspace=ws1).json["keys"]
    by_query = api.call("GET", f"{KEYS}?workspace_id={ws1}", alice).json["keys"]
    assert [k["id"] for k in by_header] == [k1["id"]]
    assert by_query == by_header


def test_list_with_a_workspace_the_caller_is_not_in_is_403(api: Api, alice: str, bob: str) -> None:
    ws = api.workspace(bob)
    answer = api.call("GET", f"{KEYS}?workspace_id={ws}", alice)
    assert answer.status == 403
    assert answer.code == "not_a_member"


def test_list_with_header_and_query_naming_different_workspaces_is_400(
    api: Api, alice: str
) -> None:
    ws1, ws2 = api.workspace(alice, "one"), api.workspace(alice, "two")
    answer = api.call("GET", f"{KEYS}?workspace_id={ws2}", alice, workspace=ws1)
    assert answer.status == 400
    assert answer.code == "conflicting_workspace_id"


def test_reveal_accepts_workspace_id_query(api: Api, alice: str) -> None:
    ws = api.workspace(alice)
    key = api.create_key(alice, category="workspace", workspaceId=ws)
    answer = api.call("GET", f"{KEYS}/{key['id']}/reveal?workspace_id={ws}", alice)
    assert answer.status == 200


# -- retention ---------------------------------------------------------------------------------


def test_revoked_key_is_gone_thirty_days_after_revocation(
    api: Api, alice: str, clock: FrozenClock
) -> None:
    key = api.create_key(alice)
    api.call("DELETE", f"{KEYS}/{key['id']}", alice)
    clock.advance(days=29, hours=23)
    fresh = api.token("usr_alice")
    assert api.call("GET", f"{KEYS}/{key['id']}", fresh).status == 200
    assert api.call("GET", "/v1/auth/whoami", key["key"]).code == "revoked_credentials"
    clock.advance(hours=1)
    fresh = api.token("usr_alice")
    # DynamoDB may not have deleted the item yet; the code treats it as gone all the same.
    assert api.call("GET", f"{KEYS}/{key['id']}", fresh).status == 404
    assert api.call("GET", KEYS, fresh).json["keys"] == []
    assert api.call("GET", "/v1/auth/whoami", key["key"]).code == "invalid_credentials"


def test_revoked_records_carry_a_ttl_attribute_thirty_days_out(api: Api, alice: str) -> None:
    key = api.create_key(alice)
    api.call("DELETE", f"{KEYS}/{key['id']}", alice)
    items = api.services.dynamodb.scan(TableName="memory-auth-dev")["Items"]
    ttls = {
        int(item["ttl"]["N"])
        for item in items
        if item.get("keyId", {}).get("S") == key["id"] and not item["sk"]["S"].startswith("EVT#")
    }
    expected = int((api.services.clock.now() + timedelta(days=30)).timestamp())
    assert ttls == {expected}
