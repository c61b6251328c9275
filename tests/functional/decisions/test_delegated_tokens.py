"""A delegated token at the data-plane authorizer: a workspace key of its workspace with exactly
its scopes, whose root is re-judged at every decision (the cascade)."""

from __future__ import annotations

import pytest

from tests.fixtures.events import bearer, request_event
from tests.functional.conftest import Api
from tests.functional.decisions.conftest import Invoke, effect
from tests.functional.oauth import delegated

MEMORY = "/v1/memory/items"
KEYS = "/v1/auth/api-keys"


def test_delegated_token_is_allowed_in_its_workspace_with_exactly_its_scopes(
    api: Api, alice: str, authorize: Invoke
) -> None:
    ws = api.workspace(alice)
    key = api.create_key(alice, category="workspace", workspaceId=ws)
    token = delegated(api, key["key"], scope="memory entities")
    jti = api.services.verifier.verify(token)["jti"]

    answer = authorize(request_event(MEMORY, bearer(token), None))

    assert effect(answer) == "Allow"
    assert answer["context"] == {
        "userId": "usr_alice",
        "credential": "delegated",
        "keyId": "",
        "category": "",
        "workspaceId": ws,
        "scopes": "memory entities",
        "clientId": "",
        "root": key["id"],
        "tokenId": jti,
    }


@pytest.mark.parametrize("path", ["/v1/skills/list", "/v1/workspaces"])
def test_delegated_token_is_denied_a_scope_it_does_not_hold(
    api: Api, alice: str, authorize: Invoke, path: str
) -> None:
    ws = api.workspace(alice)
    token = delegated(api, api.create_key(alice)["key"], workspace_id=ws, scope="memory")

    answer = authorize(request_event(path, bearer(token), ws))

    assert effect(answer) == "Deny"
    assert answer["context"]["code"] == "insufficient_scope"


def test_delegated_token_naming_another_workspace_is_denied_workspace_mismatch(
    api: Api, alice: str, authorize: Invoke
) -> None:
    ws, other = api.workspace(alice), api.workspace(alice, "Other")
    token = delegated(api, alice, workspace_id=ws)

    answer = authorize(request_event(MEMORY, bearer(token), other))

    assert effect(answer) == "Deny"
    assert answer["context"]["code"] == "workspace_mismatch"


def test_revoking_the_root_key_denies_the_delegated_token_on_the_next_decision(
    api: Api, alice: str, authorize: Invoke
) -> None:
    ws = api.workspace(alice)
    key = api.create_key(alice, category="workspace", workspaceId=ws)
    token = delegated(api, delegated(api, key["key"]))
    event = request_event(MEMORY, bearer(token), None)
    assert effect(authorize(event)) == "Allow"

    api.call("DELETE", f"{KEYS}/{key['id']}", alice)

    with pytest.raises(Exception, match=r"\AUnauthorized\Z"):
        authorize(event)


def test_removing_the_member_denies_the_delegated_token_on_the_next_decision(
    api: Api, alice: str, bob: str, authorize: Invoke
) -> None:
    ws = api.workspace(bob)
    api.add_member(bob, ws, "usr_alice")
    token = delegated(api, api.create_key(alice, category="workspace", workspaceId=ws)["key"])
    event = request_event(MEMORY, bearer(token), None)
    assert effect(authorize(event)) == "Allow"

    api.call("DELETE", f"/v1/workspaces/{ws}/members/usr_alice", bob)

    answer = authorize(event)
    assert effect(answer) == "Deny"
    assert answer["context"]["code"] == "not_a_member"
