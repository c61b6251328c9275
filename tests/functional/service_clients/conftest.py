"""A workspace owned by Alice, a machine's key pairs, its signed assertions, and the
client_credentials request as a machine sends it (a form)."""

from __future__ import annotations

import json
import secrets
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from jwt.algorithms import ECAlgorithm, RSAAlgorithm

from chalicelib.fetch import Fetched, FetchRefused
from chalicelib.runtime import Services
from chalicelib.workloads.issuers import IssuerKeys
from tests.functional.conftest import Answer, Api

ASSERTION_TYPE = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
JWKS_URI = "https://machines.example.com/jwks.json"


@dataclass
class Machine:
    """A key pair the machine holds; the public half is what the owner registers."""

    algorithm: str = "ES256"
    kid: str = field(default_factory=lambda: "k-" + secrets.token_hex(4))

    def __post_init__(self) -> None:
        if self.algorithm == "ES256":
            self.private: Any = ec.generate_private_key(ec.SECP256R1())
            public = ECAlgorithm.to_jwk(self.private.public_key(), as_dict=True)
        else:
            self.private = rsa.generate_private_key(public_exponent=65537, key_size=2048)
            public = RSAAlgorithm.to_jwk(self.private.public_key(), as_dict=True)
        self.public_jwk: dict[str, Any] = {**public, "kid": self.kid, "alg": self.algorithm}

    def jwks(self) -> dict[str, Any]:
        return {"keys": [self.public_jwk]}

    def assertion(self, client_id: str, audience: str, now: int, **claims: Any) -> str:
        body: dict[str, Any] = {
            "iss": client_id,
            "sub": client_id,
            "aud": audience,
            "iat": now,
            "exp": now + 60,
            "jti": secrets.token_urlsafe(12),
            **claims,
        }
        body = {name: value for name, value in body.items() if value is not None}
        return jwt.encode(body, self.private, algorithm=self.algorithm, headers={"kid": self.kid})


class FakeJwksFetcher:
    """`SafeFetcher.fetch_json` answering one JWKS URI; counts its fetches."""

    def __init__(self) -> None:
        self.published: list[dict[str, Any]] = []
        self.fetched: list[str] = []
        self.now = 1000.0  # the key cache's monotonic clock

    def fetch_json(self, url: str) -> Fetched:
        self.fetched.append(url)
        if url != JWKS_URI:
            raise FetchRefused("it answered HTTP 404, not 200")
        return Fetched({"keys": list(self.published)}, 300)


@pytest.fixture
def jwks_fetcher(services: Services) -> FakeJwksFetcher:
    fake = FakeJwksFetcher()
    vars(services)["service_client_keys"] = IssuerKeys(fake, now=lambda: fake.now)  # type: ignore[arg-type]
    return fake


RESOURCE = "https://mcp.test.example/mcp"


@pytest.fixture
def served_resource(services: Services) -> str:
    """An MCP resource served here (set before anything reads the settings)."""
    from copy import replace

    from chalicelib.config import parse_mcp_resources

    resources = parse_mcp_resources(f'["{RESOURCE}"]', False)
    vars(services)["settings"] = replace(services.settings, mcp_resources=resources)
    return RESOURCE


@pytest.fixture
def workspace(api: Api, alice: str) -> str:
    return api.workspace(alice)


@pytest.fixture
def machine() -> Machine:
    return Machine()


def create_client(
    api: Api, owner: str, workspace: str, machine: Machine | None = None, **overrides: Any
) -> Answer:
    body: dict[str, Any] = {"name": "nightly sync", "scopes": ["memory", "entities"]}
    if machine is not None:
        body["jwks"] = machine.jwks()
    body.update(overrides)
    body = {name: value for name, value in body.items() if value is not None}
    return api.call("POST", f"/v1/workspaces/{workspace}/service-clients", owner, body=body)


def token_request(api: Api, **form: str | None) -> Answer:
    fields = {"grant_type": "client_credentials", "client_assertion_type": ASSERTION_TYPE}
    fields.update({name: value for name, value in form.items() if value is not None})
    return api.call(
        "POST",
        "/v1/oauth/token",
        raw=urlencode(fields).encode(),
        headers={"Content-Type": "application/x-www-form-urlencoded"},
    )


def claims_of(token: str) -> dict[str, Any]:
    payload = token.split(".")[1]
    return dict(json.loads(jwt.utils.base64url_decode(payload)))
