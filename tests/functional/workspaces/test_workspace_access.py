"""One workspace-access rule for every route under `/v1/workspaces/{workspace_id}`
(`decisions/workspace_access.py`): a non-member, a workspace that does not exist and a
malformed workspace id get the same 404 `not_found`; a member who is not the owner gets 403
`owner_required` on an owner-only action. The rule is checked before the path's other ids
and before the body, so every route is called here with ids that name nothing and a body
that is not JSON."""

from __future__ import annotations

import pytest

from chalicelib.api.openapi import DECLARED
from tests.functional.conftest import Answer, Api

# (method, path, owner only): every workspace-scoped route, written out so that a route that
# loses its declaration, or a new one without it, fails here.
ROUTES = [
    ("GET", "/v1/workspaces/{workspace_id}/members", False),
    ("PUT", "/v1/workspaces/{workspace_id}/members/{user_id}", True),
    ("DELETE", "/v1/workspaces/{workspace_id}/members/{user_id}", True),
    ("POST", "/v1/workspaces/{workspace_id}/trust-policies", True),
    ("GET", "/v1/workspaces/{workspace_id}/trust-policies", True),
    ("GET", "/v1/workspaces/{workspace_id}/trust-policies/{policy_id}", True),
    ("DELETE", "/v1/workspaces/{workspace_id}/trust-policies/{policy_id}", True),
    ("POST", "/v1/workspaces/{workspace_id}/service-clients", True),
    ("GET", "/v1/workspaces/{workspace_id}/service-clients", True),
    ("GET", "/v1/workspaces/{workspace_id}/service-clients/{client_id}", True),
    ("DELETE", "/v1/workspaces/{workspace_id}/service-clients/{client_id}", True),
    ("POST", "/v1/workspaces/{workspace_id}/webhooks", True),
    ("GET", "/v1/workspaces/{workspace_id}/webhooks", True),
    ("GET", "/v1/workspaces/{workspace_id}/webhooks/{webhook_id}", True),
    ("PATCH", "/v1/workspaces/{workspace_id}/webhooks/{webhook_id}", True),
    ("POST", "/v1/workspaces/{workspace_id}/webhooks/{webhook_id}/rotate-secret", True),
    ("DELETE", "/v1/workspaces/{workspace_id}/webhooks/{webhook_id}", True),
    ("GET", "/v1/workspaces/{workspace_id}/webhooks/{webhook_id}/deliveries", True),
    (
        "POST",
        "/v1/workspaces/{workspace_id}/webhooks/{webhook_id}/deliveries/{delivery_id}/retry",
        True,
    ),
]
OTHER_IDS = {
    "user_id": "usr_carol",
    "policy_id": "tp_01ARZ3NDEKTSV4RRFFQ69G5FAV",
    "client_id": "scl_01ARZ3NDEKTSV4RRFFQ69G5FAV",
    "webhook_id": "whk_01ARZ3NDEKTSV4RRFFQ69G5FAV",
    "delivery_id": "dlv_01ARZ3NDEKTSV4RRFFQ69G5FAV",
}
NO_SUCH_WORKSPACE = "ws_01ARZ3NDEKTSV4RRFFQ69G5FAV"
NOT_JSON = b"{not json"


def call(api: Api, method: str, path: str, token: str, workspace_id: str) -> Answer:
    target = path.format(workspace_id=workspace_id, **OTHER_IDS)
    raw = NOT_JSON if method in ("POST", "PUT", "PATCH") else None
    return api.call(method, target, token, raw=raw)


def problem(answer: Answer) -> dict[str, object]:
    """The problem document, without what names the request itself."""
    return {k: v for k, v in answer.json.items() if k not in ("instance", "requestId")}


def test_the_table_names_every_route_under_a_workspace_id_and_each_declares_its_access() -> None:
    declared = {
        (op.method, op.path, op.workspace.owner_only if op.workspace else None)
        for op in DECLARED
        if "{workspace_id}" in op.path
    }

    assert declared == set(ROUTES)


@pytest.mark.parametrize(("method", "path", "owner_only"), ROUTES)
def test_a_non_member_an_unknown_and_a_malformed_workspace_are_the_same_404_not_found(
    api: Api, alice: str, bob: str, method: str, path: str, owner_only: bool
) -> None:
    ws = api.workspace(bob)

    not_a_member = call(api, method, path, alice, ws)
    unknown = call(api, method, path, alice, NO_SUCH_WORKSPACE)
    malformed = call(api, method, path, alice, "team-1")

    assert (not_a_member.status, not_a_member.code) == (404, "not_found")
    assert not_a_member.json["detail"] == "No such workspace."
    assert problem(unknown) == problem(not_a_member)
    assert problem(malformed) == problem(not_a_member)


@pytest.mark.parametrize(("method", "path", "owner_only"), ROUTES)
def test_a_member_who_is_not_the_owner_is_403_owner_required_on_an_owner_only_route(
    api: Api, alice: str, bob: str, method: str, path: str, owner_only: bool
) -> None:
    ws = api.workspace(bob)
    api.add_member(bob, ws, "usr_alice")

    answer = call(api, method, path, alice, ws)

    if owner_only:
        assert (answer.status, answer.code) == (403, "owner_required")
        assert answer.json["detail"].startswith("Only the workspace owner ")
    else:
        assert answer.status == 200, answer.body


def test_a_removed_member_gets_the_same_404_as_someone_who_never_was(
    api: Api, alice: str, bob: str
) -> None:
    ws = api.workspace(bob)
    api.add_member(bob, ws, "usr_alice")
    assert api.call("GET", f"/v1/workspaces/{ws}/members", alice).status == 200
    api.call("DELETE", f"/v1/workspaces/{ws}/members/usr_alice", bob)

    answer = api.call("GET", f"/v1/workspaces/{ws}/members", alice)
    never = api.call("GET", f"/v1/workspaces/{NO_SUCH_WORKSPACE}/members", alice)

    assert (answer.status, answer.code) == (404, "not_found")
    assert problem(answer) == problem(never)
