"""Workspaces and membership (README, "Workspaces")."""

from __future__ import annotations

from tests.functional.conftest import Api

WS = "/v1/workspaces"


def test_create_workspace_makes_the_caller_its_owner_and_first_member(api: Api, alice: str) -> None:
    answer = api.call("POST", WS, alice, body={"name": " Research "})
    assert answer.status == 201
    ws = answer.json
    assert ws["name"] == "Research"
    assert ws["ownerId"] == "usr_alice"
    assert ws["id"].startswith("ws_")
    assert answer.headers["Location"] == f"{WS}/{ws['id']}"
    members = api.call("GET", f"{WS}/{ws['id']}/members", alice).json["members"]
    assert [(m["userId"], m["role"]) for m in members] == [("usr_alice", "owner")]


def test_admin_key_can_create_a_workspace(api: Api, alice: str) -> None:
    admin = api.create_key(alice)["key"]
    assert api.call("POST", WS, admin, body={"name": "x"}).json["ownerId"] == "usr_alice"


def test_list_workspaces_shows_the_callers_workspaces_with_role(
    api: Api, alice: str, bob: str
) -> None:
    mine = api.workspace(alice, "mine")
    theirs = api.workspace(bob, "theirs")
    api.add_member(bob, theirs, "usr_alice")
    api.workspace(bob, "private")
    listed = api.call("GET", WS, alice).json["workspaces"]
    assert {(w["id"], w["role"]) for w in listed} == {(mine, "owner"), (theirs, "member")}


def test_members_are_visible_to_members_only_anyone_else_is_404_not_found(
    api: Api, alice: str, bob: str
) -> None:
    ws = api.workspace(bob)
    answer = api.call("GET", f"{WS}/{ws}/members", alice)
    assert answer.status == 404
    assert answer.code == "not_found"


def test_owner_adds_a_member_201_then_200_when_already_a_member(
    api: Api, alice: str, bob: str
) -> None:
    ws = api.workspace(bob)
    first = api.call("PUT", f"{WS}/{ws}/members/usr_alice", bob)
    again = api.call("PUT", f"{WS}/{ws}/members/usr_alice", bob)
    assert (first.status, again.status) == (201, 200)
    assert first.json["role"] == "member"


def test_a_member_who_is_not_the_owner_cannot_change_members(
    api: Api, alice: str, bob: str
) -> None:
    ws = api.workspace(bob)
    api.add_member(bob, ws, "usr_alice")
    answer = api.call("PUT", f"{WS}/{ws}/members/usr_carol", alice)
    assert answer.status == 403
    assert answer.code == "owner_required"
    assert api.call("DELETE", f"{WS}/{ws}/members/usr_bob", alice).code == "owner_required"


def test_the_owner_cannot_remove_itself(api: Api, bob: str) -> None:
    ws = api.workspace(bob)
    answer = api.call("DELETE", f"{WS}/{ws}/members/usr_bob", bob)
    assert answer.status == 409
    assert answer.code == "owner_cannot_leave"


def test_removing_a_non_member_is_404(api: Api, bob: str) -> None:
    ws = api.workspace(bob)
    assert api.call("DELETE", f"{WS}/{ws}/members/usr_zed", bob).status == 404


def test_adding_an_invalid_user_id_is_400(api: Api, bob: str) -> None:
    ws = api.workspace(bob)
    answer = api.call("PUT", f"{WS}/{ws}/members/alice", bob)
    assert answer.status == 400
    assert answer.code == "invalid_user_id"


def test_workspace_key_cannot_use_workspace_endpoints(api: Api, alice: str) -> None:
    ws = api.workspace(alice)
    key = api.create_key(alice, category="workspace", workspaceId=ws)["key"]
    for method, path in [("POST", WS), ("GET", WS), ("GET", f"{WS}/{ws}/members")]:
        body = {"name": "x"} if method == "POST" else None
        answer = api.call(method, path, key, body=body)
        assert (answer.status, answer.code) == (403, "insufficient_scope")


def test_invalid_workspace_name_is_400(api: Api, alice: str) -> None:
    answer = api.call("POST", WS, alice, body={"name": ""})
    assert answer.status == 400
    assert answer.code == "invalid_name"


def test_unknown_workspace_is_404_not_found(api: Api, alice: str) -> None:
    answer = api.call("GET", f"{WS}/ws_01ARZ3NDEKTSV4RRFFQ69G5FAV/members", alice)
    assert (answer.status, answer.code) == (404, "not_found")


def test_adding_a_user_who_never_signed_in_is_404_user_not_found(api: Api, bob: str) -> None:
    ws = api.workspace(bob)

    answer = api.call("PUT", f"{WS}/{ws}/members/usr_nobody", bob)

    assert answer.status == 404
    assert answer.code == "user_not_found"
    members = api.call("GET", f"{WS}/{ws}/members", bob).json["members"]
    assert [m["userId"] for m in members] == ["usr_bob"]


def test_a_malformed_workspace_id_in_the_path_is_404_not_found(api: Api, bob: str) -> None:
    answer = api.call("GET", f"{WS}/team-1/members", bob)

    assert answer.status == 404
    assert answer.code == "not_found"
