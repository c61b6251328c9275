"""Service clients: owner only (a member 403, anyone else 404), at most 20 per workspace
(exact under concurrency, no transaction), every field's rule, and their audit events."""

from __future__ import annotations

import re
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from chalicelib.runtime import Services
from tests.functional.conftest import Api
from tests.functional.service_clients.conftest import JWKS_URI, Machine, create_client

CLIENT_ID = re.compile(r"^scl_[0-9A-HJKMNP-TV-Z]{26}$")


def test_owner_registers_lists_gets_and_deletes_a_service_client(
    api: Api, alice: str, workspace: str, machine: Machine
) -> None:
    created = create_client(api, alice, workspace, machine)
    client = created.json
    base = f"/v1/workspaces/{workspace}/service-clients"
    listed = api.call("GET", base, alice)
    got = api.call("GET", f"{base}/{client['clientId']}", alice)
    deleted = api.call("DELETE", f"{base}/{client['clientId']}", alice)
    after = api.call("GET", f"{base}/{client['clientId']}", alice)
    listed_after = api.call("GET", base, alice)

    assert created.status == 201
    assert CLIENT_ID.match(client["clientId"])
    assert created.headers["Location"].endswith(f"/service-clients/{client['clientId']}")
    assert client["scopes"] == ["memory", "entities"]
    assert client["jwks"]["keys"][0]["kid"] == machine.kid
    assert client["jwksUri"] is None
    assert client["tokenEndpoint"].endswith("/v1/oauth/token")
    assert listed.json == {"serviceClients": [client]}
    assert got.json == client
    assert deleted.status == 204
    assert after.status == 404
    assert listed_after.json == {"serviceClients": []}


def test_a_client_registered_by_jwks_uri_keeps_the_uri(
    api: Api, alice: str, workspace: str
) -> None:
    created = create_client(api, alice, workspace, jwksUri=JWKS_URI)

    assert created.status == 201
    assert (created.json["jwksUri"], created.json["jwks"]) == (JWKS_URI, None)


def test_a_member_who_is_not_the_owner_gets_403_and_others_404(
    api: Api, alice: str, bob: str, workspace: str, machine: Machine
) -> None:
    outsider = create_client(api, bob, workspace, machine)
    api.add_member(alice, workspace, "usr_bob")

    member = create_client(api, bob, workspace, machine)

    assert (outsider.status, outsider.code) == (404, "not_found")
    assert (member.status, member.code) == (403, "owner_required")


def test_a_workspace_key_cannot_manage_service_clients(
    api: Api, alice: str, workspace: str, machine: Machine
) -> None:
    key = api.create_key(alice, category="workspace", workspaceId=workspace)["key"]

    created = create_client(api, key, workspace, machine)

    assert (created.status, created.code) == (403, "insufficient_scope")


def _private_jwk(machine: Machine) -> dict[str, Any]:
    from jwt.algorithms import ECAlgorithm

    return {**ECAlgorithm.to_jwk(machine.private, as_dict=True), "kid": "x"}


@pytest.mark.parametrize(
    ("fields", "says"),
    [
        ({"jwks": {"keys": []}}, "1 to 5 keys"),
        ({"jwks": {"keys": [{"kty": "oct", "k": "c2VjcmV0"}]}}, "private or secret"),
        ({"jwks": {"keys": [{"kty": "RSA", "n": "AQAB", "e": "AQAB", "alg": "PS256"}]}}, "alg"),
        ({"jwksUri": "http://machines.example.com/jwks.json"}, "https"),
        ({"jwksUri": "https://10.0.0.1/jwks.json"}, "not an IP address"),
        ({"jwksUri": "https://2130706433/jwks.json"}, "not an IP address"),
        ({}, "exactly one of jwks and jwksUri"),
    ],
)
def test_a_bad_key_set_or_uri_is_400_invalid_service_client(
    api: Api, alice: str, workspace: str, fields: dict[str, Any], says: str
) -> None:
    created = create_client(api, alice, workspace, **fields)

    assert (created.status, created.code) == (400, "invalid_service_client")
    assert says in created.json["detail"]


def test_a_private_key_is_refused_400(
    api: Api, alice: str, workspace: str, machine: Machine
) -> None:
    created = create_client(api, alice, workspace, jwks={"keys": [_private_jwk(machine)]})

    assert (created.status, created.code) == (400, "invalid_service_client")
    assert "public key only" in created.json["detail"]


def test_six_keys_are_refused_400(api: Api, alice: str, workspace: str) -> None:
    keys = [Machine().public_jwk for _ in range(6)]

    created = create_client(api, alice, workspace, jwks={"keys": keys})

    assert (created.status, created.code) == (400, "invalid_service_client")


@pytest.mark.parametrize("scopes", [["workspace:admin"], [], ["memory", "memory"]])
def test_scopes_beyond_the_data_plane_are_400_invalid_scope(
    api: Api, alice: str, workspace: str, machine: Machine, scopes: list[str]
) -> None:
    created = create_client(api, alice, workspace, machine, scopes=scopes)

    assert (created.status, created.code) == (400, "invalid_scope")


def test_a_name_breaking_the_label_rule_is_400_invalid_name(
    api: Api, alice: str, workspace: str, machine: Machine
) -> None:
    created = create_client(api, alice, workspace, machine, name="x" * 101)

    assert (created.status, created.code) == (400, "invalid_name")


def test_a_workspace_holds_at_most_20_service_clients_even_created_at_once(
    api: Api,
    services: Services,
    alice: str,
    workspace: str,
    machine: Machine,
    one_request_at_a_time: None,
) -> None:
    with ThreadPoolExecutor(max_workers=6) as pool:
        answers = list(
            pool.map(
                lambda i: create_client(api, alice, workspace, machine, name=f"m{i}"), range(24)
            )
        )
    listed = api.call("GET", f"/v1/workspaces/{workspace}/service-clients", alice)

    assert sorted(a.status for a in answers) == [201] * 20 + [409] * 4
    assert {a.code for a in answers if a.status == 409} == {"limit_reached"}
    assert len(listed.json["serviceClients"]) == 20


def test_a_deleted_client_gives_its_place_back(
    api: Api, alice: str, workspace: str, machine: Machine
) -> None:
    made = [create_client(api, alice, workspace, machine, name=f"m{i}").json for i in range(20)]
    full = create_client(api, alice, workspace, machine)
    api.call("DELETE", f"/v1/workspaces/{workspace}/service-clients/{made[0]['clientId']}", alice)

    again = create_client(api, alice, workspace, machine)

    assert full.status == 409
    assert again.status == 201


def test_no_transaction_is_used(
    api: Api, services: Services, alice: str, workspace: str, machine: Machine
) -> None:
    sent: list[str] = []
    services.dynamodb.meta.events.register(
        "before-send.dynamodb",
        lambda request, **_: sent.append(request.headers["X-Amz-Target"].decode()),
    )
    created = create_client(api, alice, workspace, machine).json
    api.call("DELETE", f"/v1/workspaces/{workspace}/service-clients/{created['clientId']}", alice)

    assert sent
    assert not [target for target in sent if "Transact" in target]


def test_creating_and_deleting_record_events(
    api: Api, alice: str, workspace: str, machine: Machine
) -> None:
    created = create_client(api, alice, workspace, machine).json
    api.call("DELETE", f"/v1/workspaces/{workspace}/service-clients/{created['clientId']}", alice)

    events = api.call("GET", "/v1/auth/events", alice).json["events"]
    types = [(e["type"], e["data"].get("clientId")) for e in events]

    assert ("service_client.created", created["clientId"]) in types
    assert ("service_client.deleted", created["clientId"]) in types
