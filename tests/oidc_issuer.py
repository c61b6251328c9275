"""An OpenID issuer in memory for the unit and functional tiers (no HTTP).

It signs with `local/idp.py`'s provider and hands its key set to PyJWT's real
`PyJWKClient` through `fetch_data`, so caching, the refresh on an unknown `kid` and its
cooldown are PyJWT's own, exactly as in production; only the transport is replaced.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import itertools
import json
import time
from collections.abc import Callable
from typing import Any

from jwt import PyJWKClient, PyJWKClientConnectionError

from chalicelib.config import TrustedIssuer
from chalicelib.sessions.openid import JWKS_REFRESH_COOLDOWN
from local.idp import DevIdentityProvider

ISSUER = "https://idp.test.example"
AUDIENCE = "memory-dashboard"
_KEYS: list[Any] = []
_next_key = itertools.count()


def signing_key() -> Any:
    """One of four RSA keys made once per session (2048-bit generation is slow on CI); any
    four consecutive calls give four different keys, more than one test ever needs."""
    from cryptography.hazmat.primitives.asymmetric import rsa

    index = next(_next_key) % 4
    if index == len(_KEYS):
        _KEYS.append(rsa.generate_private_key(public_exponent=65537, key_size=2048))
    return _KEYS[index]


class FakeIssuer:
    def __init__(self, issuer: str = ISSUER, audience: str = AUDIENCE):
        self.issuer = issuer
        self.audience = audience
        self.key = signing_key()
        self.provider = DevIdentityProvider(issuer, audience, self.key)
        self.published = [self.provider]  # the keys its JWKS lists
        self.fetches = 0
        self.reachable = True
        self.cooldown = JWKS_REFRESH_COOLDOWN

    @property
    def trusted(self) -> TrustedIssuer:
        return TrustedIssuer(self.issuer, self.audience, f"{self.issuer}/jwks.json")

    def jwks(self) -> dict[str, Any]:
        return {"keys": [provider.jwk for provider in self.published]}

    def rotate(self, keep_old: bool = True) -> None:
        """A new signing key, published (with the old one unless keep_old is False)."""
        self.key = signing_key()
        self.provider = DevIdentityProvider(self.issuer, self.audience, self.key)
        self.published = [*self.published, self.provider] if keep_old else [self.provider]

    def claims(self, subject: str = "alice", **overrides: Any) -> dict[str, Any]:
        claims = self.provider.claims(subject, email=f"{subject}@example.test", name="Alice")
        claims.update(overrides)
        return {name: value for name, value in claims.items() if value is not None}

    def id_token(self, subject: str = "alice", **overrides: Any) -> str:
        return self.provider.sign(self.claims(subject, **overrides))


def jwks_clients(*issuers: FakeIssuer) -> Callable[[TrustedIssuer], PyJWKClient]:
    """An `IdTokenVerifier` JWKS-client factory serving these issuers' key sets."""
    by_issuer = {issuer.issuer: issuer for issuer in issuers}

    def factory(trusted: TrustedIssuer) -> PyJWKClient:
        issuer = by_issuer[trusted.issuer]
        return InMemoryJwksClient(issuer, cooldown_duration=issuer.cooldown)

    return factory


class InMemoryJwksClient(PyJWKClient):
    def __init__(self, issuer: FakeIssuer, **options: Any):
        super().__init__(issuer.trusted.jwks_uri, **options)
        self._issuer = issuer

    def fetch_data(self) -> Any:
        self._issuer.fetches += 1
        if not self._issuer.reachable:
            raise PyJWKClientConnectionError("issuer unreachable")
        self._last_successful_fetch = time.monotonic()
        return self._issuer.jwks()


# -- forgeries -----------------------------------------------------------------------------


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _segments(header: dict[str, Any], claims: dict[str, Any]) -> str:
    return _b64(json.dumps(header).encode()) + "." + _b64(json.dumps(claims).encode())


def signed_raw(issuer: FakeIssuer, payload: Any) -> str:
    """Any JSON as the payload, properly signed: claims PyJWT would refuse to encode."""
    from jwt.api_jws import PyJWS

    return PyJWS().encode(
        json.dumps(payload).encode(), issuer.key, algorithm="RS256",
        headers={"kid": issuer.provider.kid},
    )


def unsigned(issuer: FakeIssuer, claims: dict[str, Any]) -> str:
    """`alg: none`, no signature (RFC 7519 §6's unsecured JWT)."""
    return _segments({"alg": "none", "typ": "JWT", "kid": issuer.provider.kid}, claims) + "."


def hs256_with_public_key(issuer: FakeIssuer, claims: dict[str, Any]) -> str:
    """The key-confusion forgery: HMAC-SHA256 keyed with the issuer's *public* key (PEM)."""
    from cryptography.hazmat.primitives import serialization
    from jwt.algorithms import RSAAlgorithm

    public_pem = RSAAlgorithm.from_jwk(issuer.provider.jwk).public_bytes(  # type: ignore[union-attr]
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    signing_input = _segments({"alg": "HS256", "typ": "JWT", "kid": issuer.provider.kid}, claims)
    mac = hmac.new(public_pem, signing_input.encode(), hashlib.sha256).digest()
    return signing_input + "." + _b64(mac)


def with_foreign_signature(issuer: FakeIssuer, claims: dict[str, Any]) -> str:
    """Right header and claims, signed by another key that claims the issuer's kid."""
    impostor = DevIdentityProvider(issuer.issuer, issuer.audience, signing_key())
    return impostor.sign(claims, headers={"kid": issuer.provider.kid})
