"""`grant_type=client_credentials` with a `private_key_jwt` assertion: a workspace token with
the client's scopes, and every refusal (signature, audience, expiry, replayed jti, unknown
client, wider scope, deleted client) answered as RFC 6749 errors."""

from __future__ import annotations

import time
from typing import Any

import pytest

from chalicelib.runtime import Services
from tests.functional.conftest import Api
from tests.functional.service_clients.conftest import (
    JWKS_URI,
    FakeJwksFetcher,
    Machine,
    claims_of,
    create_client,
    token_request,
)


@pytest.fixture
def client(api: Api, alice: str, workspace: str, machine: Machine) -> dict[str, Any]:
    return dict(create_client(api, alice, workspace, machine).json)


@pytest.fixture
def issuer(services: Services) -> str:
    return services.settings.issuer


def now() -> int:
    return int(time.time())  # PyJWT judges exp by the wall clock


def test_a_signed_assertion_gets_a_workspace_token_with_the_clients_scopes(
    api: Api, client: dict[str, Any], machine: Machine, issuer: str, workspace: str
) -> None:
    answer = token_request(
        api, client_assertion=machine.assertion(client["clientId"], issuer, now())
    )

    assert answer.status == 200, answer.body
    assert answer.headers["Cache-Control"] == "no-store"
    body = answer.json
    assert (body["token_type"], body["expires_in"], body["scope"]) == (
        "Bearer",
        900,
        "memory entities",
    )
    assert "refresh_token" not in body
    claims = claims_of(body["access_token"])
    assert claims["sub"] == claims["client_id"] == client["clientId"]
    assert (claims["workspace_id"], claims["aud"]) == (workspace, issuer)


def test_the_token_endpoint_url_is_an_accepted_audience_and_rs256_keys_work(
    api: Api, alice: str, workspace: str, issuer: str
) -> None:
    machine = Machine("RS256")
    client = create_client(api, alice, workspace, machine).json

    answer = token_request(
        api,
        client_assertion=machine.assertion(client["clientId"], issuer + "/v1/oauth/token", now()),
    )

    assert answer.status == 200, answer.body


def test_a_narrower_scope_and_a_lifetime_are_granted(
    api: Api, client: dict[str, Any], machine: Machine, issuer: str
) -> None:
    answer = token_request(
        api,
        client_assertion=machine.assertion(client["clientId"], issuer, now()),
        scope="entities",
        expires_in="120",
    )

    assert answer.status == 200, answer.body
    assert (answer.json["scope"], answer.json["expires_in"]) == ("entities", 120)


def test_a_wider_scope_is_400_invalid_scope(
    api: Api, client: dict[str, Any], machine: Machine, issuer: str
) -> None:
    answer = token_request(
        api,
        client_assertion=machine.assertion(client["clientId"], issuer, now()),
        scope="memory skills",
    )

    assert (answer.status, answer.json["error"]) == (400, "invalid_scope")


@pytest.mark.parametrize("expires_in", ["59", "3601", "ten"])
def test_a_lifetime_outside_60_to_3600_is_400_invalid_request(
    api: Api, client: dict[str, Any], machine: Machine, issuer: str, expires_in: str
) -> None:
    answer = token_request(
        api,
        client_assertion=machine.assertion(client["clientId"], issuer, now()),
        expires_in=expires_in,
    )

    assert (answer.status, answer.json["error"]) == (400, "invalid_request")


def test_a_resource_we_serve_gives_a_token_of_that_audience(
    served_resource: str, api: Api, client: dict[str, Any], machine: Machine, issuer: str
) -> None:
    resource = served_resource

    answer = token_request(
        api,
        client_assertion=machine.assertion(client["clientId"], issuer, now()),
        resource=resource,
    )
    other = token_request(
        api,
        client_assertion=machine.assertion(client["clientId"], issuer, now()),
        resource="https://elsewhere.example.com/mcp",
    )

    assert answer.status == 200, answer.body
    assert claims_of(answer.json["access_token"])["aud"] == resource
    assert (other.status, other.json["error"]) == (400, "invalid_target")


def test_a_bad_signature_is_401_invalid_client(
    api: Api, client: dict[str, Any], issuer: str
) -> None:
    impostor = Machine()
    impostor.kid = client["jwks"]["keys"][0]["kid"]  # the right kid, another key

    answer = token_request(
        api, client_assertion=impostor.assertion(client["clientId"], issuer, now())
    )

    assert (answer.status, answer.json["error"]) == (401, "invalid_client")
    assert "signature" in answer.json["error_description"]


def test_another_audience_is_401_invalid_client(
    api: Api, client: dict[str, Any], machine: Machine
) -> None:
    answer = token_request(
        api,
        client_assertion=machine.assertion(client["clientId"], "https://other.example.com", now()),
    )

    assert (answer.status, answer.json["error"]) == (401, "invalid_client")
    assert "aud" in answer.json["error_description"]


def test_an_expired_assertion_is_401_invalid_client(
    api: Api, client: dict[str, Any], machine: Machine, issuer: str
) -> None:
    answer = token_request(
        api,
        client_assertion=machine.assertion(
            client["clientId"], issuer, now() - 600, exp=now() - 300
        ),
    )

    assert (answer.status, answer.json["error"]) == (401, "invalid_client")
    assert "expired" in answer.json["error_description"]


def test_an_exp_more_than_5_minutes_ahead_is_401_invalid_client(
    api: Api, client: dict[str, Any], machine: Machine, issuer: str
) -> None:
    answer = token_request(
        api,
        client_assertion=machine.assertion(client["clientId"], issuer, now(), exp=now() + 3600),
    )

    assert (answer.status, answer.json["error"]) == (401, "invalid_client")
    assert "300 s ahead" in answer.json["error_description"]


def test_a_replayed_jti_is_401_invalid_client(
    api: Api, client: dict[str, Any], machine: Machine, issuer: str
) -> None:
    assertion = machine.assertion(client["clientId"], issuer, now())

    first = token_request(api, client_assertion=assertion)
    replayed = token_request(api, client_assertion=assertion)

    assert first.status == 200
    assert (replayed.status, replayed.json["error"]) == (401, "invalid_client")
    assert "single use" in replayed.json["error_description"]


def test_a_refused_assertion_spends_no_jti(
    api: Api, client: dict[str, Any], machine: Machine, issuer: str
) -> None:
    wider = token_request(
        api,
        client_assertion=machine.assertion(
            client["clientId"], "https://other.example", now(), jti="j1"
        ),
    )
    good = token_request(
        api, client_assertion=machine.assertion(client["clientId"], issuer, now(), jti="j1")
    )

    assert wider.status == 401
    assert good.status == 200


def test_an_unknown_client_is_401_invalid_client(api: Api, machine: Machine, issuer: str) -> None:
    answer = token_request(
        api, client_assertion=machine.assertion("scl_01JQ0000000000000000000000", issuer, now())
    )

    assert (answer.status, answer.json["error"]) == (401, "invalid_client")


def test_a_deleted_client_gets_no_token(
    api: Api, alice: str, workspace: str, client: dict[str, Any], machine: Machine, issuer: str
) -> None:
    api.call("DELETE", f"/v1/workspaces/{workspace}/service-clients/{client['clientId']}", alice)

    answer = token_request(
        api, client_assertion=machine.assertion(client["clientId"], issuer, now())
    )

    assert (answer.status, answer.json["error"]) == (401, "invalid_client")


@pytest.mark.parametrize(
    ("claims", "header_alg"),
    [({"sub": "scl_01JQ0000000000000000000001"}, None), ({"jti": None}, None)],
)
def test_a_sub_other_than_iss_or_no_jti_is_401_invalid_client(
    api: Api,
    client: dict[str, Any],
    machine: Machine,
    issuer: str,
    claims: dict[str, Any],
    header_alg: str | None,
) -> None:
    answer = token_request(
        api, client_assertion=machine.assertion(client["clientId"], issuer, now(), **claims)
    )

    assert (answer.status, answer.json["error"]) == (401, "invalid_client")


def test_an_hs256_assertion_is_401_invalid_client(
    api: Api, client: dict[str, Any], issuer: str
) -> None:
    import jwt

    forged = jwt.encode(
        {
            "iss": client["clientId"],
            "sub": client["clientId"],
            "aud": issuer,
            "exp": now() + 60,
            "jti": "h",
        },
        "a-guessed-" + "secret-of-32-bytes-at-least!!",
        algorithm="HS256",
    )

    answer = token_request(api, client_assertion=forged)

    assert (answer.status, answer.json["error"]) == (401, "invalid_client")


def test_a_wrong_assertion_type_is_400_invalid_request(
    api: Api, client: dict[str, Any], machine: Machine, issuer: str
) -> None:
    answer = token_request(
        api,
        client_assertion=machine.assertion(client["clientId"], issuer, now()),
        client_assertion_type="urn:example:other",
    )

    assert (answer.status, answer.json["error"]) == (400, "invalid_request")


def test_a_jwks_uri_client_is_verified_with_its_published_keys_fetched_once(
    api: Api,
    alice: str,
    workspace: str,
    machine: Machine,
    issuer: str,
    jwks_fetcher: FakeJwksFetcher,
) -> None:
    jwks_fetcher.published = [machine.public_jwk]
    client = create_client(api, alice, workspace, jwksUri=JWKS_URI).json

    first = token_request(
        api, client_assertion=machine.assertion(client["clientId"], issuer, now())
    )
    second = token_request(
        api, client_assertion=machine.assertion(client["clientId"], issuer, now())
    )
    unknown = Machine()
    made_up = token_request(
        api, client_assertion=unknown.assertion(client["clientId"], issuer, now())
    )

    assert (first.status, second.status) == (200, 200)
    assert made_up.status == 401
    assert jwks_fetcher.fetched == [JWKS_URI]  # a made-up kid inside 30 s: no new fetch


def test_token_issued_is_recorded_once_per_client_and_hour(
    api: Api,
    services: Services,
    alice: str,
    client: dict[str, Any],
    machine: Machine,
    issuer: str,
) -> None:
    for _ in range(3):
        token_request(api, client_assertion=machine.assertion(client["clientId"], issuer, now()))
    services.clock.advance(hours=1, seconds=1)  # type: ignore[attr-defined]
    token_request(api, client_assertion=machine.assertion(client["clientId"], issuer, now()))

    events = api.call("GET", "/v1/auth/events", alice).json["events"]
    issued = [e for e in events if e["type"] == "service_client.token_issued"]

    assert len(issued) == 2
    assert issued[0]["data"]["clientId"] == client["clientId"]


def test_metadata_lists_client_credentials_and_private_key_jwt(api: Api) -> None:
    document = api.call("GET", "/.well-known/oauth-authorization-server").json

    assert "client_credentials" in document["grant_types_supported"]
    assert "private_key_jwt" in document["token_endpoint_auth_methods_supported"]
    assert document["token_endpoint_auth_signing_alg_values_supported"] == ["RS256", "ES256"]
