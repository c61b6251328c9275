"""Credentials bound to a key pair (RFC 9449 DPoP) at every resource: the routes and the
data-plane authorizer. A bound credential works only as `Authorization: DPoP <credential>`
with a proof by its key; every refusal is a 401 whose challenge says DPoP; a decision still
takes one store round trip and writes nothing."""

from __future__ import annotations

import time
from typing import Any

import pytest

from chalicelib.clock import Clock
from chalicelib.decisions.authorizer import Unauthorized, dpop_request
from chalicelib.runtime import Services
from chalicelib.sessions.access_tokens import TokenSigner
from tests.fixtures.dpop import DpopKey
from tests.fixtures.events import request_event
from tests.functional.conftest import ISSUER, Api, register_user, sign_in
from tests.functional.decisions.conftest import Invoke, effect

WHOAMI = "/v1/auth/whoami"
MEMORY = "/v1/memory/items"
CHALLENGE_PROOF = 'DPoP error="invalid_dpop_proof", algs="ES256 RS256 EdDSA"'
CHALLENGE_TOKEN = 'DPoP error="invalid_token", algs="ES256 RS256 EdDSA"'


@pytest.fixture(scope="module")
def pair() -> DpopKey:
    return DpopKey()


def whoami(api: Api, credential: str, proof: str | None, scheme: str = "DPoP") -> Any:
    headers = {"Authorization": f"{scheme} {credential}"}
    if proof is not None:
        headers["DPoP"] = proof
    return api.call("GET", WHOAMI, headers=headers)


def bound_token(services: Services, user_id: str, jkt: str) -> str:
    register_user(services, user_id)
    signer = TokenSigner(services.kms, services.signing_keys, services.settings.issuer, Clock())
    extra = {"sid": sign_in(services, user_id), "cnf": {"jkt": jkt}}
    return signer.mint(user_id, extra=extra).token


# -- key-bound API keys at the routes ---------------------------------------------------------


def test_a_key_created_with_dpop_jkt_shows_it_and_works_with_a_proof_by_its_pair(
    api: Api, alice: str, pair: DpopKey
) -> None:
    created = api.create_key(alice, dpopJkt=pair.jkt)

    answer = whoami(api, created["key"], pair.proof("GET", ISSUER + WHOAMI, created["key"]))

    assert created["dpopJkt"] == pair.jkt
    assert answer.status == 200, answer.body
    assert answer.json["keyId"] == created["id"]


def test_a_stolen_bound_key_sent_as_bearer_is_401_dpop_required(
    api: Api, alice: str, pair: DpopKey
) -> None:
    key = api.create_key(alice, dpopJkt=pair.jkt)["key"]

    answer = whoami(api, key, None, scheme="Bearer")

    assert (answer.status, answer.code) == (401, "dpop_required")
    assert answer.headers["WWW-Authenticate"] == CHALLENGE_TOKEN


def test_a_bound_key_without_its_proof_is_401_invalid_dpop_proof(
    api: Api, alice: str, pair: DpopKey
) -> None:
    key = api.create_key(alice, dpopJkt=pair.jkt)["key"]

    answer = whoami(api, key, None)

    assert (answer.status, answer.code) == (401, "invalid_dpop_proof")
    assert answer.headers["WWW-Authenticate"] == CHALLENGE_PROOF


def test_a_bound_key_with_a_proof_by_another_pair_is_401_invalid_dpop_proof(
    api: Api, alice: str, pair: DpopKey
) -> None:
    key = api.create_key(alice, dpopJkt=pair.jkt)["key"]
    thief = DpopKey()

    answer = whoami(api, key, thief.proof("GET", ISSUER + WHOAMI, key))

    assert (answer.status, answer.code) == (401, "invalid_dpop_proof")
    assert "another key" in answer.json["detail"]
    assert answer.headers["WWW-Authenticate"] == CHALLENGE_PROOF


@pytest.mark.parametrize(
    "wrong",
    ["method", "url", "stale iat", "future iat", "no ath", "ath of another credential"],
)
def test_a_bound_key_with_a_proof_wrong_in_one_way_is_401_invalid_dpop_proof(
    api: Api, alice: str, pair: DpopKey, wrong: str
) -> None:
    key = api.create_key(alice, dpopJkt=pair.jkt)["key"]
    now = api.services.clock.now().timestamp()
    proof = {
        "method": lambda: pair.proof("POST", ISSUER + WHOAMI, key),
        "url": lambda: pair.proof("GET", ISSUER + "/v1/auth/api-keys", key),
        "stale iat": lambda: pair.proof("GET", ISSUER + WHOAMI, key, iat=now - 120),
        "future iat": lambda: pair.proof("GET", ISSUER + WHOAMI, key, iat=now + 120),
        "no ath": lambda: pair.proof("GET", ISSUER + WHOAMI),
        "ath of another credential": lambda: pair.proof("GET", ISSUER + WHOAMI, key + "x"),
    }[wrong]()

    answer = whoami(api, key, proof)

    assert (answer.status, answer.code) == (401, "invalid_dpop_proof")
    assert answer.headers["WWW-Authenticate"] == CHALLENGE_PROOF


def test_a_bearer_key_sent_with_the_dpop_scheme_is_refused_with_a_dpop_challenge(
    api: Api, alice: str, pair: DpopKey
) -> None:
    key = api.create_key(alice)["key"]

    answer = whoami(api, key, pair.proof("GET", ISSUER + WHOAMI, key))

    assert (answer.status, answer.code) == (401, "invalid_credentials")
    assert answer.headers["WWW-Authenticate"] == CHALLENGE_TOKEN


@pytest.mark.parametrize("jkt", ["short", "x" * 44, "a" * 42 + "!", 7])
def test_a_dpop_jkt_that_is_not_a_thumbprint_is_400_invalid_dpop_jkt(
    api: Api, alice: str, jkt: object
) -> None:
    answer = api.call("POST", "/v1/auth/api-keys", alice, body={"label": "k", "dpopJkt": jkt})

    assert (answer.status, answer.code) == (400, "invalid_dpop_jkt")


def test_a_rotated_bound_key_stays_bound_to_the_same_pair(
    api: Api, alice: str, pair: DpopKey
) -> None:
    created = api.create_key(alice, dpopJkt=pair.jkt)
    rotated = api.call("POST", f"/v1/auth/api-keys/{created['id']}/rotate", alice, body={}).json

    bearer = whoami(api, rotated["key"], None, scheme="Bearer")
    bound = whoami(api, rotated["key"], pair.proof("GET", ISSUER + WHOAMI, rotated["key"]))

    assert rotated["dpopJkt"] == pair.jkt
    assert (bearer.status, bound.status) == (401, 200)


# -- DPoP-bound tokens (cnf.jkt) at the routes ------------------------------------------------


def test_a_bound_token_works_with_a_proof_by_its_key_and_not_as_bearer(
    api: Api, pair: DpopKey
) -> None:
    token = bound_token(api.services, "usr_carol", pair.jkt)

    good = whoami(api, token, pair.proof("GET", ISSUER + WHOAMI, token))
    as_bearer = whoami(api, token, None, scheme="Bearer")
    other_key = whoami(api, token, DpopKey().proof("GET", ISSUER + WHOAMI, token))

    assert good.status == 200, good.body
    assert (as_bearer.status, as_bearer.code) == (401, "dpop_required")
    assert as_bearer.headers["WWW-Authenticate"] == CHALLENGE_TOKEN
    assert (other_key.status, other_key.code) == (401, "invalid_dpop_proof")


# -- the data-plane authorizer ----------------------------------------------------------------


def data_plane_url(event: dict[str, Any]) -> str:
    context = event["requestContext"]
    return f"https://{context['domainName']}{context['path']}"


def dpop_event(key: str, workspace: str, proof: str | None, scheme: str = "DPoP") -> Any:
    event = request_event(MEMORY, f"{scheme} {key}", workspace)
    if proof is not None:
        event["headers"]["DPoP"] = proof
        event["multiValueHeaders"]["DPoP"] = [proof]
    return event


@pytest.fixture
def workspace_key(api: Api, alice: str, pair: DpopKey) -> tuple[str, str]:
    ws = api.workspace(alice)
    key = api.create_key(alice, category="workspace", workspaceId=ws, dpopJkt=pair.jkt)["key"]
    return key, ws


def test_the_authorizer_allows_a_bound_key_with_its_proof_for_the_url_api_gateway_served(
    authorize: Invoke, workspace_key: tuple[str, str], pair: DpopKey
) -> None:
    key, ws = workspace_key
    event = dpop_event(key, ws, None)
    event = dpop_event(key, ws, pair.proof("GET", data_plane_url(event), key))

    answer = authorize(event)

    assert effect(answer) == "Allow"
    assert dpop_request(event).url == (
        "https://abcdef123.execute-api.us-east-1.amazonaws.com/v1api/v1/memory/items"
    )


@pytest.mark.parametrize("how", ["as bearer", "without a proof", "proof by another key"])
def test_the_authorizer_refuses_a_bound_key_without_its_proof_as_401(
    authorize: Invoke, workspace_key: tuple[str, str], pair: DpopKey, how: str
) -> None:
    key, ws = workspace_key
    url = data_plane_url(dpop_event(key, ws, None))
    event = {
        "as bearer": lambda: dpop_event(key, ws, None, scheme="Bearer"),
        "without a proof": lambda: dpop_event(key, ws, None),
        "proof by another key": lambda: dpop_event(key, ws, DpopKey().proof("GET", url, key)),
    }[how]()

    with pytest.raises(Unauthorized) as refused:
        authorize(event)

    assert str(refused.value) == "Unauthorized"


def test_a_dpop_decision_takes_one_round_trip_and_writes_nothing(
    services: Services, authorize: Invoke, workspace_key: tuple[str, str], pair: DpopKey
) -> None:
    key, ws = workspace_key
    url = data_plane_url(dpop_event(key, ws, None))
    operations: list[str] = []

    def on_send(request: Any, **_: Any) -> None:
        operations.append(request.headers["X-Amz-Target"].decode().rsplit(".", 1)[-1])

    assert effect(authorize(dpop_event(key, ws, pair.proof("GET", url, key)))) == "Allow"
    for client in (services.dynamodb, services.last_use_dynamodb):
        client.meta.events.register("before-send.dynamodb", on_send)

    answer = authorize(dpop_event(key, ws, pair.proof("GET", url, key, iat=time.time())))

    assert effect(answer) == "Allow"
    assert operations == ["BatchGetItem"]


def test_a_bad_proof_is_refused_before_any_read(
    services: Services, authorize: Invoke, workspace_key: tuple[str, str], pair: DpopKey
) -> None:
    key, ws = workspace_key
    operations: list[str] = []
    services.dynamodb.meta.events.register(
        "before-send.dynamodb", lambda request, **_: operations.append("read")
    )

    with pytest.raises(Unauthorized):
        authorize(dpop_event(key, ws, pair.proof("GET", "https://elsewhere.example/x", key)))

    assert operations == []
