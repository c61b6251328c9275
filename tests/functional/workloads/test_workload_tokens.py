"""A workload token's decisions: a workspace key of its workspace with exactly its scopes,
judged from ONE GetItem of its trust policy (no membership), refused on the request after its
policy is deleted, and never allowed to manage anything."""

from __future__ import annotations

from typing import Any

import pytest

from chalicelib.access.principal import Principal, Refusal
from chalicelib.runtime import Services
from tests.fixtures.events import bearer, request_event
from tests.functional.conftest import Api
from tests.functional.decisions.conftest import Invoke, effect
from tests.functional.workloads.conftest import create_policy, exchange
from tests.workload_issuer import GITHUB, REPO_SUBJECT, WorkloadIssuer

pytestmark = pytest.mark.usefixtures("fetcher")


@pytest.fixture
def policy(api: Api, alice: str, workspace: str) -> dict[str, Any]:
    return dict(create_policy(api, alice, workspace).json)


@pytest.fixture
def token(api: Api, issuer: WorkloadIssuer, workspace: str, policy: dict[str, Any]) -> str:
    answer = exchange(api, issuer.token(), workspace)
    assert answer.status == 200, answer.body
    return str(answer.json["access_token"])


@pytest.fixture
def sent(services: Services) -> list[str]:
    operations: list[str] = []

    def on_send(request: Any, **_: Any) -> None:
        operations.append(request.headers["X-Amz-Target"].decode().rsplit(".", 1)[-1])

    services.dynamodb.meta.events.register("before-send.dynamodb", on_send)
    return operations


def test_a_workload_token_resolves_as_a_workload_bound_to_its_workspace(
    services: Services, token: str, workspace: str, policy: dict[str, Any]
) -> None:
    found = services.resolver.resolve(bearer(token), None)

    assert isinstance(found, Principal)
    assert found.credential == "workload"
    assert found.workspace_id == workspace
    assert found.scopes == frozenset({"memory", "entities"})
    assert found.policy_id == policy["id"]
    assert found.user_id.startswith("wl_")
    assert found.act == {"sub": REPO_SUBJECT, "iss": GITHUB}


def test_the_authorizer_allows_its_scopes_and_denies_others(
    authorize: Invoke, token: str, workspace: str
) -> None:
    allowed = authorize(request_event("/v1/memory/items", bearer(token), workspace))
    other_scope = authorize(request_event("/v1/skills/list", bearer(token), workspace))

    assert effect(allowed) == "Allow"
    assert allowed["context"]["credential"] == "workload"
    assert effect(other_scope) == "Deny"


def test_a_decision_reads_only_its_trust_policy_once(
    authorize: Invoke, sent: list[str], token: str, workspace: str
) -> None:
    event = request_event("/v1/memory/items", bearer(token), workspace)
    authorize(event)  # a container's first decision also fetches the signing keys (KMS)
    sent.clear()

    answer = authorize(event)

    assert effect(answer) == "Allow"
    assert sent == ["GetItem"]


def test_a_deleted_policy_refuses_its_tokens_on_the_next_request(
    api: Api,
    services: Services,
    alice: str,
    token: str,
    workspace: str,
    policy: dict[str, Any],
) -> None:
    before = services.resolver.resolve(bearer(token), workspace)
    api.call("DELETE", f"/v1/workspaces/{workspace}/trust-policies/{policy['id']}", alice)

    after = services.resolver.resolve(bearer(token), workspace)

    assert isinstance(before, Principal)
    assert isinstance(after, Refusal)
    assert (after.status, after.code) == (401, "revoked_credentials")


def test_naming_another_workspace_is_a_workspace_mismatch(
    api: Api, services: Services, alice: str, token: str
) -> None:
    other = api.workspace(alice, "Other")

    found = services.resolver.resolve(bearer(token), other)

    assert isinstance(found, Refusal)
    assert (found.status, found.code) == (403, "workspace_mismatch")


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", "/v1/auth/api-keys"),
        ("POST", "/v1/workspaces"),
        ("GET", "/v1/workspaces/{ws}/trust-policies"),
    ],
)
def test_a_workload_token_never_manages_anything(
    api: Api, token: str, workspace: str, method: str, path: str
) -> None:
    body = {"name": "x"} if method == "POST" else None

    answer = api.call(method, path.format(ws=workspace), token, body=body)

    assert (answer.status, answer.code) == (403, "insufficient_scope")
