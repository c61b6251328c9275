"""The data-plane REQUEST authorizer, run as its Lambda function, on moto.

API Gateway REQUEST-authorizer events (tests/fixtures/apigateway/) go through
`Client.lambda_.invoke("authorizer", ...)`: the same `Resolver.resolve` as our routes, so one
test is named after each resolution rule (docs/architecture.md), plus every path segment's
scope.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from chalicelib.access.scopes import DATA_PLANE_SCOPES, SCOPE_BY_PATH_SEGMENT, WORKSPACE_ADMIN
from chalicelib.clock import FrozenClock
from chalicelib.errors import DependencyUnavailable
from chalicelib.runtime import Services
from tests.fixtures.earlier_keys import mint_plain_key
from tests.fixtures.events import HEADERS_ONLY, bearer, request_event
from tests.functional.conftest import Api
from tests.functional.decisions.conftest import Invoke, effect
from tests.functional.failures import broken, throttled

MEMORY = "/v1/memory/items"


def workspace_key(api: Api, owner: str, ws: str, **fields: Any) -> dict[str, Any]:
    return api.create_key(owner, category="workspace", workspaceId=ws, **fields)


def call(
    authorize: Invoke, credential: str | None, workspace: str | None = None, path: str = MEMORY
) -> dict[str, Any]:
    authorization = bearer(credential) if credential is not None else None
    return authorize(request_event(path, authorization, workspace))


def assert_unauthorized(authorize: Invoke, event: dict[str, Any]) -> None:
    # API Gateway answers 401 when the authorizer fails with exactly this message, whatever
    # the exception's class.
    with pytest.raises(Exception, match=r"\AUnauthorized\Z"):
        authorize(event)


# -- the resolution rules, one at a time ------------------------------------------------


def test_rule1_workspace_key_sending_its_own_workspace_id_is_allowed(
    api: Api, alice: str, authorize: Invoke
) -> None:
    ws = api.workspace(alice)
    key = workspace_key(api, alice, ws)
    event = request_event(MEMORY, bearer(key["key"]), ws)
    answer = authorize(event)
    assert effect(answer) == "Allow"
    assert answer["policyDocument"]["Statement"][0]["Resource"] == event["methodArn"]
    assert answer["principalId"] == "usr_alice"
    assert answer["context"] == {
        "userId": "usr_alice",
        "credential": "api_key",
        "keyId": key["id"],
        "category": "workspace",
        "workspaceId": ws,
        "scopes": "memory entities reasoning ontology skills",
        "clientId": "",
    }


def test_rule1_workspace_key_without_header_is_allowed_for_its_bound_workspace(
    api: Api, alice: str, authorize: Invoke
) -> None:
    ws = api.workspace(alice)
    answer = call(authorize, workspace_key(api, alice, ws)["key"])
    assert effect(answer) == "Allow"
    assert answer["context"]["workspaceId"] == ws


def test_rule2_workspace_key_naming_another_workspace_is_denied_workspace_mismatch(
    api: Api, alice: str, authorize: Invoke
) -> None:
    ws, other = api.workspace(alice, "one"), api.workspace(alice, "two")
    answer = call(authorize, workspace_key(api, alice, ws)["key"], other)
    assert effect(answer) == "Deny"
    assert answer["context"] == {"code": "workspace_mismatch"}


def test_rule3_admin_key_whose_owner_is_not_a_member_is_denied_not_a_member(
    api: Api, alice: str, bob: str, authorize: Invoke
) -> None:
    answer = call(authorize, api.create_key(alice)["key"], api.workspace(bob))
    assert effect(answer) == "Deny"
    assert answer["context"] == {"code": "not_a_member"}


def test_rule3_workspace_key_is_denied_once_its_owner_leaves_the_workspace(
    api: Api, alice: str, bob: str, authorize: Invoke
) -> None:
    ws = api.workspace(alice)
    api.add_member(alice, ws, "usr_bob")
    key = workspace_key(api, bob, ws)
    assert effect(call(authorize, key["key"], ws)) == "Allow"
    removed = api.call("DELETE", f"/v1/workspaces/{ws}/members/usr_bob", alice)
    assert removed.status == 204
    answer = call(authorize, key["key"], ws)
    assert effect(answer) == "Deny"
    assert answer["context"] == {"code": "not_a_member"}


def test_rule3_admin_key_of_a_member_is_allowed_for_the_named_workspace(
    api: Api, alice: str, authorize: Invoke
) -> None:
    ws = api.workspace(alice)
    key = api.create_key(alice)
    answer = call(authorize, key["key"], ws)
    assert effect(answer) == "Allow"
    assert answer["context"]["category"] == "admin"
    assert answer["context"]["workspaceId"] == ws


def test_rule4_workspace_key_cannot_reach_workspace_administration(
    api: Api, alice: str, authorize: Invoke
) -> None:
    ws = api.workspace(alice)
    answer = call(authorize, workspace_key(api, alice, ws)["key"], ws, f"/v1/workspaces/{ws}")
    assert effect(answer) == "Deny"
    assert answer["context"] == {"code": "insufficient_scope"}


@pytest.mark.parametrize("path", ["/v1/auth/api-keys", "/v1/auth/api-keys/key_01/rotate"])
def test_rule4_no_key_management_is_reachable_through_the_authorizer(
    api: Api, alice: str, authorize: Invoke, path: str
) -> None:
    ws = api.workspace(alice)
    for credential in (alice, api.create_key(alice)["key"], workspace_key(api, alice, ws)["key"]):
        answer = call(authorize, credential, ws, path)
        assert effect(answer) == "Deny"
        assert answer["context"] == {"code": "insufficient_scope"}


def test_rule5_user_token_and_admin_key_may_administer_workspaces(
    api: Api, alice: str, authorize: Invoke
) -> None:
    ws = api.workspace(alice)
    for credential in (alice, api.create_key(alice)["key"]):
        for workspace in (None, ws):  # a workspace is optional for administration
            answer = call(authorize, credential, workspace, "/v1/workspaces")
            assert effect(answer) == "Allow"
            assert WORKSPACE_ADMIN in answer["context"]["scopes"].split(" ")


def test_rule5_admin_key_without_workspace_admin_scope_may_not_administer_workspaces(
    api: Api, alice: str, authorize: Invoke
) -> None:
    key = api.create_key(alice, scopes=["memory"])
    answer = call(authorize, key["key"], None, "/v1/workspaces")
    assert effect(answer) == "Deny"
    assert answer["context"] == {"code": "insufficient_scope"}


def test_rule6_a_key_acts_only_as_its_owner(
    api: Api, alice: str, bob: str, authorize: Invoke
) -> None:
    ws = api.workspace(alice)
    api.add_member(alice, ws, "usr_bob")
    bobs_key = api.create_key(bob)
    answer = call(authorize, bobs_key["key"], ws)
    assert effect(answer) == "Allow"
    assert answer["principalId"] == answer["context"]["userId"] == "usr_bob"
    assert answer["context"]["keyId"] == bobs_key["id"]


def test_rule7_revoked_key_is_unauthorized_on_the_next_request(
    api: Api, alice: str, authorize: Invoke
) -> None:
    ws = api.workspace(alice)
    key = workspace_key(api, alice, ws)
    assert effect(call(authorize, key["key"], ws)) == "Allow"
    assert api.call("DELETE", f"/v1/auth/api-keys/{key['id']}", alice).status == 204
    assert_unauthorized(authorize, request_event(MEMORY, bearer(key["key"]), ws))


def test_rule8_key_is_unauthorized_ninety_days_after_creation(
    api: Api, alice: str, authorize: Invoke, clock: FrozenClock
) -> None:
    ws = api.workspace(alice)
    key = workspace_key(api, alice, ws)
    clock.advance(days=90, seconds=-1)
    assert effect(call(authorize, key["key"], ws)) == "Allow"
    clock.advance(seconds=1)
    assert_unauthorized(authorize, request_event(MEMORY, bearer(key["key"]), ws))


# -- scopes, workspaces and credentials ----------------------------------------------------


@pytest.mark.parametrize(("segment", "scope"), sorted(SCOPE_BY_PATH_SEGMENT.items()))
def test_each_segment_is_allowed_with_its_scope_and_denied_without_it(
    api: Api, alice: str, authorize: Invoke, segment: str, scope: str
) -> None:
    ws = api.workspace(alice)
    others = [s for s in DATA_PLANE_SCOPES if s != scope][:1]
    if scope in DATA_PLANE_SCOPES:
        holder = workspace_key(api, alice, ws, scopes=[scope])
        lacker = workspace_key(api, alice, ws, scopes=others)
    else:
        holder = api.create_key(alice, scopes=[scope])
        lacker = api.create_key(alice, scopes=others)
    path = f"/v1/{segment}/some/thing"
    allowed = call(authorize, holder["key"], ws, path)
    denied = call(authorize, lacker["key"], ws, path)
    assert effect(allowed) == "Allow"
    assert allowed["context"]["scopes"] == scope
    assert effect(denied) == "Deny"
    assert denied["context"] == {"code": "insufficient_scope"}


@pytest.mark.parametrize("path", ["/v1/billing", "/v1", "/v2/memory", "/v1/Memory/items"])
def test_unknown_first_segment_is_denied_even_for_an_admin_key(
    api: Api, alice: str, authorize: Invoke, path: str
) -> None:
    ws = api.workspace(alice)
    answer = call(authorize, api.create_key(alice)["key"], ws, path)
    assert effect(answer) == "Deny"
    assert answer["context"] == {"code": "insufficient_scope"}


@pytest.mark.parametrize("segment", DATA_PLANE_SCOPES)
def test_admin_key_without_a_workspace_is_denied_workspace_required(
    api: Api, alice: str, authorize: Invoke, segment: str
) -> None:
    answer = call(authorize, api.create_key(alice)["key"], None, f"/v1/{segment}")
    assert effect(answer) == "Deny"
    assert answer["context"] == {"code": "workspace_required"}


def test_user_token_is_allowed_for_a_workspace_it_belongs_to(
    api: Api, alice: str, authorize: Invoke
) -> None:
    ws = api.workspace(alice)
    answer = call(authorize, alice, ws)
    assert effect(answer) == "Allow"
    assert answer["context"] == {
        "userId": "usr_alice",
        "credential": "user_token",
        "keyId": "",
        "category": "",
        "workspaceId": ws,
        "scopes": "memory entities reasoning ontology skills workspace:admin",
        "clientId": "",
    }


def test_user_token_without_a_workspace_is_denied_workspace_required(
    alice: str, authorize: Invoke
) -> None:
    answer = call(authorize, alice)
    assert effect(answer) == "Deny"
    assert answer["context"] == {"code": "workspace_required"}


def test_expired_user_token_is_unauthorized(
    api: Api, authorize: Invoke, services: Services, clock: FrozenClock
) -> None:
    clock.advance(hours=-2)  # minted two hours ago: an hour past its expiry
    expired = services.signer.mint("usr_alice").token
    clock.advance(hours=2)
    assert_unauthorized(authorize, request_event(MEMORY, bearer(expired), None))


@pytest.mark.parametrize(
    "authorization",
    [
        None,
        "",
        "Basic dXNlcjpwYXNz",
        "Bearer",
        "Bearer " + "sv" + "c_tooShort",
        "Bearer " + "sv" + "c_" + "A" * 50,  # right shape, wrong checksum
        "Bearer " + "e" + "yJhbGciOiJub25lIn0" + "." + "e" + "yJzdWIiOiJ1c3JfYWxpY2UifQ.",
    ],
    ids=["absent", "empty", "basic", "no-token", "short-key", "bad-checksum", "unsigned-jwt"],
)
def test_missing_or_malformed_credential_is_unauthorized(
    authorize: Invoke, authorization: str | None
) -> None:
    assert_unauthorized(authorize, request_event(MEMORY, authorization, "ws_team"))


def test_well_formed_unknown_key_is_unauthorized(api: Api, alice: str, authorize: Invoke) -> None:
    from chalicelib.keys.plaintext import generate_key

    assert_unauthorized(authorize, request_event(MEMORY, bearer(generate_key()), None))


def test_lowercase_headers_without_multi_value_headers_are_read(
    api: Api, alice: str, authorize: Invoke
) -> None:
    ws = api.workspace(alice)
    key = workspace_key(api, alice, ws)
    event = request_event(
        "/v1/entities",
        bearer(key["key"]),
        ws,
        method="POST",
        fixture=HEADERS_ONLY,
        authorization_header="authorization",
        workspace_header="x-workspace-id",
    )
    answer = authorize(event)
    assert effect(answer) == "Allow"
    assert answer["policyDocument"]["Statement"][0]["Resource"].endswith("/POST/v1/entities")


# -- fail closed ---------------------------------------------------------------------------


@pytest.mark.parametrize("failure", [broken, throttled], ids=["unreachable", "throttled"])
@pytest.mark.parametrize("failing_read", [1, 2], ids=["key-read", "membership-read"])
def test_dependency_failure_raises_and_never_allows(
    api: Api,
    alice: str,
    authorize: Invoke,
    services: Services,
    failure: Callable[..., None],
    failing_read: int,
) -> None:
    ws = api.workspace(alice)
    key = {"key": mint_plain_key(services, "usr_alice", ws)}  # its two reads: key, membership
    reads = 0

    def fail_on_nth_read(**kwargs: Any) -> None:
        nonlocal reads
        reads += 1
        if reads == failing_read:
            failure(**kwargs)

    services.dynamodb.meta.events.register("before-call.dynamodb.GetItem", fail_on_nth_read)
    event = request_event(MEMORY, bearer(key["key"]), ws)
    # Not Unauthorized (401) and no answer (Allow): API Gateway answers 500.
    with pytest.raises(DependencyUnavailable) as raised:
        authorize(event)
    assert key["key"] not in str(raised.value)
    assert reads == failing_read
