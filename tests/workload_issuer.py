"""A workload's OIDC issuer in memory (GitHub Actions-like): RS256 and ES256 keys, its
discovery document and JWKS served through a fake `SafeFetcher` (no HTTP), so the service's
own discovery, cache and refresh on an unknown `kid` run unchanged."""

from __future__ import annotations

import time
from typing import Any

import jwt
from cryptography.hazmat.primitives.asymmetric import ec

from chalicelib.fetch import Fetched, FetchRefused
from chalicelib.sessions.access_tokens import public_jwk_from_der
from tests.oidc_issuer import signing_key

GITHUB = "https://token.actions.githubusercontent.com"
AUDIENCE = "memory-service"
REPO_SUBJECT = "repo:acme/agents:ref:refs/heads/main"


def _der(key: Any) -> bytes:
    from cryptography.hazmat.primitives import serialization

    return key.public_key().public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    )


class WorkloadIssuer:
    def __init__(self, issuer: str = GITHUB):
        self.issuer = issuer
        self.rsa = signing_key()
        self.rsa_jwk = public_jwk_from_der(_der(self.rsa))
        self.ec = ec.generate_private_key(ec.SECP256R1())
        ec_jwk = jwt.algorithms.ECAlgorithm.to_jwk(self.ec.public_key(), as_dict=True)
        self.ec_jwk = {**ec_jwk, "kid": "ec-1", "use": "sig", "alg": "ES256"}
        self.published = [self.rsa_jwk, self.ec_jwk]

    def claims(
        self,
        subject: str = REPO_SUBJECT,
        audience: Any = AUDIENCE,
        lifetime: int = 600,
        **extra: Any,
    ) -> dict[str, Any]:
        now = int(time.time())
        claims = {
            "iss": self.issuer,
            "aud": audience,
            "sub": subject,
            "iat": now,
            "nbf": now,
            "exp": now + lifetime,
            "repository_owner": "acme",
            "repository": "acme/agents",
            "ref": "refs/heads/main",
        }
        claims.update(extra)
        return {name: value for name, value in claims.items() if value is not None}

    def token(
        self, subject: str = REPO_SUBJECT, alg: str = "RS256", kid: str | None = None, **claims: Any
    ) -> str:
        key, default_kid = (self.rsa, self.rsa_jwk["kid"]) if alg == "RS256" else (self.ec, "ec-1")
        return jwt.encode(
            self.claims(subject, **claims),
            key,
            algorithm=alg,
            headers={"kid": kid or default_kid, "typ": "JWT"},
        )

    def rotate(self) -> str:
        """A new RSA key published beside the old ones; its kid."""
        self.rsa = signing_key()
        self.rsa_jwk = public_jwk_from_der(_der(self.rsa))
        self.published = [*self.published, self.rsa_jwk]
        return str(self.rsa_jwk["kid"])


class FakeFetcher:
    """`SafeFetcher.fetch_json` over in-memory issuers; counts what it serves."""

    def __init__(self, *issuers: WorkloadIssuer, max_age: int = 300):
        self.issuers = {i.issuer: i for i in issuers}
        self.max_age = max_age
        self.fetched: list[str] = []
        self.reachable = True
        self.jwks_status = 200  # another status: the key set's URL answers it
        self.now = 1000.0  # a monotonic clock for the key cache

    def fetch_json(self, url: str) -> Fetched:
        self.fetched.append(url)
        if not self.reachable:
            raise FetchRefused("it could not be fetched in time")
        for issuer in self.issuers.values():
            if url == issuer.issuer + "/.well-known/openid-configuration":
                return Fetched(
                    {"issuer": issuer.issuer, "jwks_uri": issuer.issuer + "/.well-known/jwks"},
                    self.max_age,
                )
            if url == issuer.issuer + "/.well-known/jwks" and self.jwks_status != 200:
                raise FetchRefused(f"it answered HTTP {self.jwks_status}, not 200")
            if url == issuer.issuer + "/.well-known/jwks":
                return Fetched({"keys": list(issuer.published)}, self.max_age)
        raise FetchRefused("it answered HTTP 404, not 200")

    @property
    def jwks_fetches(self) -> int:
        return sum(url.endswith("/jwks") for url in self.fetched)
