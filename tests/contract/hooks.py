"""schemathesis hooks for `make test-contract` (SCHEMATHESIS_HOOKS=tests.contract.hooks).

They give a generated request what no schema can describe, so that its logic is reached:

- an Idempotency-Key new for each request (the same key with another body is rightly 422
  `idempotency_key_reused`, and a generator repeats its values); a malformed one is kept;
- GitHub's signature on a leaked-key report, from the local stack's development signer
  (CONTRACT_SCAN_SIGNER), over the exact bytes sent: without it every report is rightly 401
  (a report sent without a signature header stays without it);
- values of the format `cidr` (a network with its host bits zero), which no pattern states;
- a key of its own for PATCH and DELETE of a key (CONTRACT_UPDATED_KEY_ID,
  CONTRACT_REVOKED_KEY_ID): schemathesis keeps one configuration per path, so the config
  file cannot give GET, PATCH and DELETE of `/v1/auth/api-keys/{key_id}` different keys;
- a real public key for a service client's registration generated as valid (positive) data:
  a JWK Set holds usable keys only when they are real ones, which no schema can generate
  (negative data is sent as generated);
- a sign-in of its own for ending sign-ins (`DELETE /v1/auth/sessions[/{session_id}]`) in the
  user token's run: with the run's token they would end the run's own credential. It is a
  new sign-in of another user at the development issuer (CONTRACT_IDP), and ending one
  sign-in names that sign-in.
"""

from __future__ import annotations

import base64
import ipaddress
import json
import os
import re
import uuid
from collections import deque
from typing import Any

import httpx
import schemathesis
from hypothesis import strategies as st

IDEMPOTENCY_KEY = "Idempotency-Key"
VALID_IDEMPOTENCY_KEY = re.compile(r"[ -~]{1,255}")
SECRET_SCANNING = "/v1/auth/secret-scanning/github"
KEY = "/v1/auth/api-keys/{key_id}"
KEY_OF_METHOD = {"PATCH": "CONTRACT_UPDATED_KEY_ID", "DELETE": "CONTRACT_REVOKED_KEY_ID"}
SESSIONS = ("/v1/auth/sessions", "/v1/auth/sessions/{session_id}")
SIGNATURE_HEADERS = ("Github-Public-Key-Identifier", "Github-Public-Key-Signature")


def _network(address: Any, prefix: int) -> str:
    return str(ipaddress.ip_network(f"{address}/{prefix}", strict=False))


CIDRS = st.one_of(
    st.builds(_network, st.ip_addresses(v=4), st.integers(0, 32)),
    st.builds(_network, st.ip_addresses(v=6), st.integers(0, 128)),
)
schemathesis.openapi.format("cidr", CIDRS)


SERVICE_CLIENTS = "/v1/workspaces/{workspace_id}/service-clients"


def _public_jwks() -> dict[str, Any]:
    from cryptography.hazmat.primitives.asymmetric import ec
    from jwt.algorithms import ECAlgorithm

    key = ec.generate_private_key(ec.SECP256R1()).public_key()
    return {"keys": [{**json.loads(ECAlgorithm.to_jwk(key)), "alg": "ES256", "kid": "contract"}]}


PUBLIC_JWKS = _public_jwks()


def _real_keys(case: Any) -> None:
    from schemathesis import GenerationMode

    body = case.body
    if case.meta is None or case.meta.generation.mode != GenerationMode.POSITIVE:
        return
    if isinstance(body, dict):
        body.pop("jwksUri", None)
        body["jwks"] = PUBLIC_JWKS


# The clients registered, oldest first: (url, headers) to delete each with.
REGISTERED: deque[tuple[str, dict[str, str]]] = deque()
KEEP_REGISTERED = 10  # of a workspace's 20


@schemathesis.hook
def after_call(context: Any, case: Any, response: Any) -> None:
    """The oldest registered service clients are deleted once more than KEEP_REGISTERED are
    kept: a workspace holds 20, and the run registers more than that (each phase's valid
    registrations must be able to succeed). The newest stay, so that a stateful link from a
    registration to the client's GET or DELETE finds it."""
    if case.operation.path != SERVICE_CLIENTS or case.method.upper() != "POST":
        return
    if response.status_code != 201:
        return
    created = response.json()
    request = response.request
    url = str(request.url).rstrip("/") + "/" + created["clientId"]
    kept = ("authorization", "x-workspace-id")
    headers = {k: v for k, v in request.headers.items() if k.lower() in kept}
    REGISTERED.append((url, headers))
    while len(REGISTERED) > KEEP_REGISTERED:
        oldest, with_headers = REGISTERED.popleft()
        httpx.delete(oldest, headers=with_headers, timeout=10)  # 404 if a test deleted it


@schemathesis.hook
def before_call(context: Any, case: Any, kwargs: dict[str, Any]) -> None:
    if case.operation.path == SERVICE_CLIENTS and case.method.upper() == "POST":
        _real_keys(case)
    headers = case.headers
    if headers is not None and IDEMPOTENCY_KEY in headers:
        value = headers[IDEMPOTENCY_KEY]
        if isinstance(value, str) and VALID_IDEMPOTENCY_KEY.fullmatch(value):
            headers[IDEMPOTENCY_KEY] = str(uuid.uuid4())
    if case.operation.path == SECRET_SCANNING:
        _sign(case)
    if case.operation.path in SESSIONS and case.method.upper() == "DELETE":
        _own_sign_in(case)
    own = KEY_OF_METHOD.get(case.method.upper()) if case.operation.path == KEY else None
    parameters = case.path_parameters
    if own and parameters and parameters.get("key_id") == os.environ.get("CONTRACT_KEY_ID"):
        parameters["key_id"] = os.environ[own]


def _own_sign_in(case: Any) -> None:
    credential, idp = os.environ.get("CONTRACT_CREDENTIAL", ""), os.environ.get("CONTRACT_IDP")
    headers = case.headers
    if not idp or headers is None or headers.get("Authorization") != f"Bearer {credential}":
        return  # the admin key's run (refused by design), or no credential sent
    if not credential.startswith("eyJ"):
        return
    endpoint = os.environ["CONTRACT_ENDPOINT"]
    id_token = httpx.post(f"{idp}/token", json={"sub": "contract-sessions"}, timeout=30).json()
    pair = httpx.post(
        f"{endpoint}/v1/auth/exchange", json={"id_token": id_token["id_token"]}, timeout=30
    ).json()
    headers["Authorization"] = f"Bearer {pair['access_token']}"
    parameters = case.path_parameters
    if parameters and parameters.get("session_id") == os.environ.get("CONTRACT_SESSION_ID"):
        claims = pair["access_token"].split(".")[1]
        parameters["session_id"] = json.loads(base64.urlsafe_b64decode(claims + "=="))["sid"]


def _sign(case: Any) -> None:
    signer = os.environ.get("CONTRACT_SCAN_SIGNER")
    try:
        # What schemathesis's transport sends for a JSON body (requests' `json=`).
        raw = json.dumps(case.body, allow_nan=False).encode()
    except (TypeError, ValueError):
        return  # not a JSON value: the report is refused before its signature matters
    if not signer or case.headers is None:
        return
    signed = httpx.post(f"{signer}/sign", content=raw, timeout=30).json()
    values = (signed["key_identifier"], signed["signature"])
    for name, value in zip(SIGNATURE_HEADERS, values, strict=True):
        if name in case.headers:
            case.headers[name] = value
