"""What a new user trips over in key management, each answered with what to do instead."""

from __future__ import annotations

import pytest

from tests.functional.conftest import Api

KEYS = "/v1/auth/api-keys"
MALFORMED_WORKSPACE_IDS = ["team-1", "ws_", "ws_short", "WS_" + "0" * 26, "ws_" + "0" * 25 + "!"]


def test_a_revoked_key_is_no_longer_revealable(api: Api, alice: str) -> None:
    key = api.create_key(alice)
    assert key["revealable"] is True

    api.call("DELETE", f"{KEYS}/{key['id']}", alice)
    listed = api.call("GET", KEYS, alice).json["keys"]
    got = api.call("GET", f"{KEYS}/{key['id']}", alice).json

    assert got["status"] == "revoked"
    assert got["revealable"] is False
    assert [k["revealable"] for k in listed if k["id"] == key["id"]] == [False]
    assert api.call("GET", f"{KEYS}/{key['id']}/reveal", alice).code == "key_revoked"


def test_a_rotated_key_is_no_longer_revealable_but_its_successor_is(api: Api, alice: str) -> None:
    key = api.create_key(alice)

    successor = api.call("POST", f"{KEYS}/{key['id']}/rotate", alice).json
    old = api.call("GET", f"{KEYS}/{key['id']}", alice).json

    assert (old["revealable"], successor["revealable"]) == (False, True)


def test_the_hint_is_ascii(api: Api, alice: str) -> None:
    key = api.create_key(alice)

    assert key["hint"] == "sv" + "c_..." + key["key"][-4:]
    assert key["hint"].isascii()


def test_a_missing_label_says_it_is_required(api: Api, alice: str) -> None:
    answer = api.call("POST", KEYS, alice, body={"category": "admin"})

    assert answer.status == 400
    assert answer.code == "invalid_label"
    assert answer.json["detail"] == "label is required."


def test_a_workspace_on_an_admin_key_says_to_send_the_workspace_category(
    api: Api, alice: str
) -> None:
    ws = api.workspace(alice)

    answer = api.call("POST", KEYS, alice, body={"label": "x", "workspaceId": ws})

    assert answer.status == 400
    assert answer.code == "workspace_id_not_allowed"
    assert '"category": "workspace"' in answer.json["detail"]


@pytest.mark.parametrize("workspace_id", MALFORMED_WORKSPACE_IDS)
def test_a_malformed_workspace_id_in_the_body_is_400_not_403(
    api: Api, alice: str, workspace_id: str
) -> None:
    body = {"label": "x", "category": "workspace", "workspaceId": workspace_id}

    answer = api.call("POST", KEYS, alice, body=body)

    assert answer.status == 400
    assert answer.code == "invalid_workspace_id"


@pytest.mark.parametrize("workspace_id", MALFORMED_WORKSPACE_IDS)
def test_a_malformed_workspace_header_is_400_not_403(
    api: Api, alice: str, workspace_id: str
) -> None:
    key = api.create_key(alice)["key"]

    by_token = api.call("GET", "/v1/auth/whoami", alice, workspace=workspace_id)
    by_key = api.call("GET", KEYS, key, workspace=workspace_id)
    by_query = api.call("GET", f"{KEYS}?workspace_id={workspace_id}", alice)

    assert [a.status for a in (by_token, by_key, by_query)] == [400, 400, 400]
    assert {a.code for a in (by_token, by_key, by_query)} == {"invalid_workspace_id"}


def test_a_malformed_workspace_header_with_a_bad_credential_is_still_401(api: Api) -> None:
    answer = api.call("GET", "/v1/auth/whoami", "not-a-key", workspace="team-1")

    assert answer.status == 401


def test_rotating_a_workspace_key_of_a_removed_member_is_403_not_a_member(
    api: Api, alice: str, bob: str
) -> None:
    ws = api.workspace(bob)
    api.add_member(bob, ws, "usr_alice")
    key = api.create_key(alice, category="workspace", workspaceId=ws)
    api.call("DELETE", f"/v1/workspaces/{ws}/members/usr_alice", bob)

    answer = api.call("POST", f"{KEYS}/{key['id']}/rotate", alice)

    assert answer.status == 403
    assert answer.code == "not_a_member"
    listed = api.call("GET", KEYS, alice).json["keys"]
    assert [(k["id"], k["status"]) for k in listed] == [(key["id"], "active")]  # no successor


@pytest.mark.parametrize("blank", ["", "   "])
def test_an_empty_workspace_header_names_no_workspace_200(
    api: Api, alice: str, blank: str
) -> None:
    answer = api.call("GET", "/v1/auth/whoami", alice, headers={"X-Workspace-Id": blank})

    assert answer.status == 200
    assert answer.json["workspaceId"] is None


def test_an_empty_workspace_id_query_lists_every_key_200(api: Api, alice: str) -> None:
    ws = api.workspace(alice)
    admin = api.create_key(alice)
    bound = api.create_key(alice, category="workspace", workspaceId=ws)

    answer = api.call("GET", f"{KEYS}?workspace_id=", alice)
    revealed = api.call("GET", f"{KEYS}/{admin['id']}/reveal?workspace_id=", alice)

    assert answer.status == 200
    assert {k["id"] for k in answer.json["keys"]} == {admin["id"], bound["id"]}
    assert revealed.status == 200


@pytest.mark.parametrize("spelling", ["workspaceId", "workspace_id"])
def test_an_empty_workspace_id_in_a_create_body_is_an_admin_key_201(
    api: Api, alice: str, spelling: str
) -> None:
    answer = api.call("POST", KEYS, alice, body={"label": "go client", spelling: ""})

    assert answer.status == 201, answer.body
    assert (answer.json["category"], answer.json["workspaceId"]) == ("admin", None)


@pytest.mark.parametrize(
    ("where", "named"),
    [("header", "X-Workspace-Id"), ("query", "workspace_id query parameter")],
)
def test_a_malformed_workspace_ids_refusal_names_where_it_came_from_400(
    api: Api, alice: str, where: str, named: str
) -> None:
    if where == "header":
        answer = api.call("GET", KEYS, alice, workspace="team-1")
    else:
        answer = api.call("GET", f"{KEYS}?workspace_id=team-1", alice)

    assert answer.status == 400
    assert answer.code == "invalid_workspace_id"
    assert named in answer.json["detail"]


def test_a_malformed_workspace_id_in_a_body_names_the_body_400(api: Api, alice: str) -> None:
    body = {"label": "x", "category": "workspace", "workspaceId": "team-1"}

    answer = api.call("POST", KEYS, alice, body=body)

    assert answer.status == 400
    assert answer.code == "invalid_workspace_id"
    assert "workspaceId in the body" in answer.json["detail"]

