"""ServiceClientCredentials: a signed private_key_jwt assertion (PEM or JWK, ES256 or RS256)
sent with client_credentials, the token reused, and fetched again before it expires."""

from __future__ import annotations

import base64
import json
from typing import Any
from urllib.parse import parse_qs

import httpx
import pytest
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, padding, rsa
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature

from memory_sdk import ServiceClientCredentials, ServiceClientError

pytestmark = pytest.mark.anyio
ENDPOINT = "http://127.0.0.1:9"
CLIENT_ID = "scl_01JQ0000000000000000000000"


def _decode(part: str) -> Any:
    return json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)))


def _raw(part: str) -> bytes:
    return base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))


class Fake:
    """The token endpoint: checks the assertion's signature with the registered public key."""

    def __init__(self, public_key: Any) -> None:
        self.public_key = public_key
        self.forms: list[dict[str, list[str]]] = []
        self.expires_in = 900

    def transport(self) -> httpx.MockTransport:
        return httpx.MockTransport(self._handle)

    def _handle(self, request: httpx.Request) -> httpx.Response:
        form = parse_qs(request.content.decode())
        self.forms.append(form)
        header, claims, signature = form["client_assertion"][0].split(".")
        signed = f"{header}.{claims}".encode()
        if isinstance(self.public_key, rsa.RSAPublicKey):
            self.public_key.verify(_raw(signature), signed, padding.PKCS1v15(), hashes.SHA256())
        else:
            raw = _raw(signature)
            der = encode_dss_signature(int.from_bytes(raw[:32]), int.from_bytes(raw[32:]))
            self.public_key.verify(der, signed, ec.ECDSA(hashes.SHA256()))
        return httpx.Response(
            200,
            json={
                "access_token": f"token-{len(self.forms)}",
                "token_type": "Bearer",
                "expires_in": self.expires_in,
                "scope": "memory",
            },
        )


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


async def test_an_es256_pem_key_signs_an_assertion_the_endpoint_verifies() -> None:
    key = ec.generate_private_key(ec.SECP256R1())
    pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    fake = Fake(key.public_key())
    credentials = ServiceClientCredentials(
        endpoint=ENDPOINT, client_id=CLIENT_ID, private_key=pem, http_transport=fake.transport()
    )

    token = await credentials.token()

    assert token == "token-1"
    (form,) = fake.forms
    assert form["grant_type"] == ["client_credentials"]
    assert form["client_assertion_type"] == [
        "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
    ]
    header, claims, _ = form["client_assertion"][0].split(".")
    assert _decode(header)["alg"] == "ES256"
    assert _decode(header)["kid"] == credentials.public_jwk["kid"]
    body = _decode(claims)
    assert body["iss"] == body["sub"] == CLIENT_ID
    assert body["aud"] == ENDPOINT + "/v1/oauth/token"
    assert 0 < body["exp"] - body["iat"] <= 300


async def test_an_rsa_jwk_signs_rs256_with_its_own_kid() -> None:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    from jwt.algorithms import RSAAlgorithm

    jwk = {**RSAAlgorithm.to_jwk(key, as_dict=True), "kid": "machine-1"}
    fake = Fake(key.public_key())
    credentials = ServiceClientCredentials(
        endpoint=ENDPOINT, client_id=CLIENT_ID, private_key=jwk, http_transport=fake.transport()
    )

    await credentials.token()

    header = _decode(fake.forms[0]["client_assertion"][0].split(".")[0])
    assert (header["alg"], header["kid"]) == ("RS256", "machine-1")
    assert "d" not in credentials.public_jwk


async def test_the_token_is_reused_then_fetched_again_before_it_expires() -> None:
    key = ec.generate_private_key(ec.SECP256R1())
    fake, clock = Fake(key.public_key()), Clock()
    jwk_pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    credentials = ServiceClientCredentials(
        endpoint=ENDPOINT,
        client_id=CLIENT_ID,
        private_key=jwk_pem,
        scope="memory",
        http_transport=fake.transport(),
        clock=clock,
    )

    first = await credentials.token()
    clock.now += 800  # 100 s left: kept
    again = await credentials.token()
    clock.now += 50  # 50 s left: inside the margin
    renewed = await credentials.token()

    assert (first, again, renewed) == ("token-1", "token-1", "token-2")
    jtis = {_decode(f["client_assertion"][0].split(".")[1])["jti"] for f in fake.forms}
    assert len(jtis) == 2  # every assertion its own jti
    assert fake.forms[0]["scope"] == ["memory"]


async def test_a_refusal_names_the_error_and_never_the_key() -> None:
    key = ec.generate_private_key(ec.SECP256R1())
    refusing = httpx.MockTransport(
        lambda _: httpx.Response(
            401, json={"error": "invalid_client", "error_description": "No such service client."}
        )
    )
    credentials = ServiceClientCredentials(
        endpoint=ENDPOINT,
        client_id=CLIENT_ID,
        private_key=key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        ),
        http_transport=refusing,
    )

    with pytest.raises(ServiceClientError) as refused:
        await credentials.token()

    assert "401 invalid_client" in str(refused.value)
    assert "PRIVATE" not in str(refused.value) and "PRIVATE" not in repr(credentials)


def test_a_public_jwk_is_refused() -> None:
    with pytest.raises(ServiceClientError):
        ServiceClientCredentials(
            endpoint=ENDPOINT, client_id=CLIENT_ID, private_key={"kty": "EC", "crv": "P-256"}
        )
