"""DPoP in the Python SDK on a scripted fake: the key pair, its proofs, the `DPoP` scheme for
a bound credential, the nonce retried once, and sign-ins made with a proof."""

from __future__ import annotations

import base64
import hashlib
import json
from typing import Any

import httpx
import jwt
import pytest

from memory_sdk import DpopKey, MemoryClient
from tests.unit.fakes import ADMIN_KEY, ENDPOINT, FakeService

pytestmark = pytest.mark.anyio

PRINCIPAL = {"userId": "u", "credential": "api_key"}
TOKENS = {
    "access_token": "eyJ" + "hbGciOiJSUzI1NiJ9.eyJzdWIiOiJ1c3JfMSJ9.c2lnbmF0dXJl",
    "token_type": "DPoP",
    "expires_in": 900,
    "refresh_token": "rt_" + "unitTestRefreshToken000000000000",
}


def client(fake: FakeService, key: DpopKey | bool, **kwargs: Any) -> MemoryClient:
    return MemoryClient(
        api_key=ADMIN_KEY,
        endpoint=ENDPOINT,
        svc={"backoff": 0},
        http_transport=fake.transport(),
        dpop=key,
        **kwargs,
    )


def verified(proof: str, key: DpopKey) -> tuple[dict[str, Any], dict[str, Any]]:
    header = jwt.get_unverified_header(proof)
    public = jwt.PyJWK(header["jwk"], algorithm="ES256")
    return header, jwt.decode(proof, key=public, algorithms=["ES256"])


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def test_a_dpop_key_is_p256_and_its_thumbprint_is_rfc_7638() -> None:
    key = DpopKey.generate()
    canonical = json.dumps(
        {"crv": "P-256", "kty": "EC", "x": key.jwk["x"], "y": key.jwk["y"]},
        separators=(",", ":"),
    )

    assert key.thumbprint == b64(hashlib.sha256(canonical.encode()).digest())
    assert "d" not in key.jwk
    assert len(key.thumbprint) == 43


def test_a_proof_verifies_with_its_public_key_and_names_the_request() -> None:
    key = DpopKey.generate()

    header, claims = verified(key.proof("get", "https://h.example/v1/x?q=1#f", "cred", "n"), key)

    assert (header["typ"], header["alg"], header["jwk"]) == ("dpop+jwt", "ES256", key.jwk)
    assert (claims["htm"], claims["htu"], claims["nonce"]) == ("GET", "https://h.example/v1/x", "n")
    assert claims["ath"] == b64(hashlib.sha256(b"cred").digest())
    assert claims["jti"]


async def test_a_bound_key_is_sent_with_the_dpop_scheme_and_a_proof_for_each_request() -> None:
    key = DpopKey.generate()
    fake = FakeService(httpx.Response(200, json=PRINCIPAL), httpx.Response(200, json=PRINCIPAL))

    async with client(fake, key) as memory:
        await memory.auth.whoami()
        await memory.auth.whoami()

    proofs = [request.headers["DPoP"] for request in fake.requests]
    assert all(r.headers["Authorization"] == f"DPoP {ADMIN_KEY}" for r in fake.requests)
    _, claims = verified(proofs[0], key)
    assert claims["htu"] == ENDPOINT + "/v1/auth/whoami"
    assert claims["ath"] == b64(hashlib.sha256(ADMIN_KEY.encode()).digest())
    assert proofs[0] != proofs[1]  # a new proof (jti) per request


async def test_use_dpop_nonce_is_retried_once_with_the_nonce() -> None:
    asks = httpx.Response(
        400,
        json={"error": "use_dpop_nonce", "error_description": "nonce"},
        headers={"DPoP-Nonce": "n-1"},
    )
    fake = FakeService(asks, httpx.Response(200, json=TOKENS))

    async with client(fake, True) as memory:
        pair = await memory.auth.exchange("id-" + "token")
        key = memory.dpop_key

    assert key is not None
    assert len(fake.requests) == 2
    _, first = verified(fake.requests[0].headers["DPoP"], key)
    _, second = verified(fake.requests[1].headers["DPoP"], key)
    assert "nonce" not in first and "ath" not in first  # a token request carries no credential
    assert second["nonce"] == "n-1"
    assert pair.access_token.get_secret_value() == TOKENS["access_token"]


async def test_a_nonce_asked_twice_is_not_retried_again() -> None:
    def asks(nonce: str) -> httpx.Response:
        body = {"error": "use_dpop_nonce", "error_description": "nonce"}
        return httpx.Response(400, json=body, headers={"DPoP-Nonce": nonce})

    fake = FakeService(asks("n-1"), asks("n-2"))

    async with client(fake, True) as memory:
        with pytest.raises(Exception) as refused:
            await memory.auth.exchange("id-" + "token")

    assert len(fake.requests) == 2
    assert getattr(refused.value, "code", None) == "use_dpop_nonce"


async def test_without_dpop_no_proof_is_sent() -> None:
    fake = FakeService(httpx.Response(200, json=PRINCIPAL))

    async with client(fake, False) as memory:
        await memory.auth.whoami()

    assert "DPoP" not in fake.requests[0].headers
    assert fake.requests[0].headers["Authorization"] == f"Bearer {ADMIN_KEY}"
