"""A service client's token at the decisions: a workspace key of its workspace with exactly
its client's scopes, judged from ONE GetItem of the client (no membership), refused at the
routes and at the data-plane authorizer on the request after its client is deleted, and never
allowed to manage anything."""

from __future__ import annotations

import time
from typing import Any

import pytest

from chalicelib.access.principal import Principal, Refusal
from chalicelib.decisions.authorizer import Unauthorized
from chalicelib.runtime import Services
from tests.fixtures.events import bearer, request_event
from tests.functional.conftest import Api
from tests.functional.decisions.conftest import Invoke, effect
from tests.functional.service_clients.conftest import Machine, create_client, token_request


@pytest.fixture
def client(api: Api, alice: str, workspace: str, machine: Machine) -> dict[str, Any]:
    return dict(create_client(api, alice, workspace, machine).json)


@pytest.fixture
def token(api: Api, services: Services, client: dict[str, Any], machine: Machine) -> str:
    assertion = machine.assertion(client["clientId"], services.settings.issuer, int(time.time()))
    answer = token_request(api, client_assertion=assertion)
    assert answer.status == 200, answer.body
    return str(answer.json["access_token"])


def test_a_service_client_token_resolves_bound_to_its_workspace(
    services: Services, token: str, workspace: str, client: dict[str, Any]
) -> None:
    found = services.resolver.resolve(bearer(token), None)

    assert isinstance(found, Principal)
    assert found.credential == "service_client"
    assert (found.workspace_id, found.client_id) == (workspace, client["clientId"])
    assert found.scopes == frozenset({"memory", "entities"})


def test_the_authorizer_allows_its_scopes_and_denies_others(
    authorize: Invoke, token: str, workspace: str
) -> None:
    allowed = authorize(request_event("/v1/memory/items", bearer(token), workspace))
    other_scope = authorize(request_event("/v1/skills/list", bearer(token), workspace))

    assert effect(allowed) == "Allow"
    assert allowed["context"]["credential"] == "service_client"
    assert effect(other_scope) == "Deny"


def test_a_deleted_client_is_refused_on_the_next_request_at_routes_and_authorizer(
    api: Api,
    services: Services,
    authorize: Invoke,
    alice: str,
    token: str,
    workspace: str,
    client: dict[str, Any],
) -> None:
    event = request_event("/v1/memory/items", bearer(token), workspace)
    before_route = api.call("GET", "/v1/auth/whoami", token)
    before = authorize(event)
    api.call("DELETE", f"/v1/workspaces/{workspace}/service-clients/{client['clientId']}", alice)

    after_route = api.call("GET", "/v1/auth/whoami", token)
    after = services.resolver.resolve(bearer(token), workspace)

    assert before_route.status == 200
    assert effect(before) == "Allow"
    assert (after_route.status, after_route.code) == (401, "revoked_credentials")
    assert isinstance(after, Refusal)
    assert (after.status, after.code) == (401, "revoked_credentials")
    with pytest.raises(Unauthorized):
        authorize(event)


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
        ("GET", "/v1/workspaces/{ws}/service-clients"),
    ],
)
def test_a_service_client_token_never_manages_anything(
    api: Api, token: str, workspace: str, method: str, path: str
) -> None:
    answer = api.call(
        method, path.format(ws=workspace), token, body={} if method == "POST" else None
    )

    assert answer.status == 403
