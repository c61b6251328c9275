"""Internal user tokens: RS256 JWTs signed by an asymmetric KMS key (RFC 9068 profile).

Minting calls KMS `Sign` (RAW message); verification never calls KMS: the public keys are
fetched once per process with `GetPublicKey` and kept as PyJWT key objects. PyJWT and
cryptography are imported only when a token is minted or verified, so that the API-key path
(and the authorizer's cold start) never loads them.
"""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from chalicelib.access.dpop import bound_key
from chalicelib.clock import Clock, epoch, monotonic
from chalicelib.dependencies import failures_of

if TYPE_CHECKING:
    from jwt import PyJWK

ACCESS_TOKEN_LIFETIME = 3600  # seconds; about one hour
CLOCK_SKEW = 60  # seconds of leeway on exp/nbf/iat
TOKEN_TYPE = "at+jwt"
ALGORITHM = "RS256"
_KMS_ALGORITHM = "RSASSA_PKCS1_V1_5_SHA_256"


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def looks_like_jwt(candidate: str) -> bool:
    return candidate.startswith("eyJ") and candidate.count(".") == 2


def thumbprint(jwk: dict[str, Any]) -> str:
    """RFC 7638: SHA-256 over the required members, sorted, without white space."""
    required = {name: jwk[name] for name in ("e", "kty", "n")}
    canonical = json.dumps(required, sort_keys=True, separators=(",", ":"))
    return b64url(hashlib.sha256(canonical.encode("ascii")).digest())


def public_jwk_from_der(der: bytes) -> dict[str, Any]:
    from cryptography.hazmat.primitives.asymmetric.rsa import RSAPublicKey
    from cryptography.hazmat.primitives.serialization import load_der_public_key
    from jwt.algorithms import RSAAlgorithm

    public_key = load_der_public_key(der)
    if not isinstance(public_key, RSAPublicKey):
        raise ValueError("the signing key is not an RSA key")
    jwk: dict[str, Any] = RSAAlgorithm.to_jwk(public_key, as_dict=True)
    jwk = {"kty": jwk["kty"], "n": jwk["n"], "e": jwk["e"]}
    return {**jwk, "kid": thumbprint(jwk), "use": "sig", "alg": ALGORITHM}


@dataclass(frozen=True)
class _PublicKeys:
    """One fetch of the signing keys' public halves."""

    jwks: dict[str, Any]  # the JWKS document: the current key first, each key once
    by_kid: dict[str, PyJWK]  # the same keys, parsed once by PyJWT, for verification
    current_kid: str


class SigningKeys:
    """The public halves of the configured KMS signing keys, fetched once and kept.

    `kms_key_ids` lists the current key first, then any previous key still inside its
    overlap window. An unknown `kid` refreshes the set once (at most every 60 s), then fails.
    """

    REFRESH_INTERVAL = 60.0

    def __init__(self, kms: Any, kms_key_ids: Sequence[str]):
        self._kms = kms
        self._kms_key_ids = [k for k in kms_key_ids if k]
        self._keys: _PublicKeys | None = None
        self._fetched_at = 0.0

    def _fetch(self) -> _PublicKeys:
        from jwt import PyJWKSet

        by_kid: dict[str, dict[str, Any]] = {}  # the current key first, each key once
        for kms_key_id in self._kms_key_ids:
            with failures_of("KMS"):
                answer = self._kms.get_public_key(KeyId=kms_key_id)
            jwk = public_jwk_from_der(bytes(answer["PublicKey"]))
            by_kid.setdefault(jwk["kid"], jwk)
        jwks = {"keys": list(by_kid.values())}
        parsed = {key.key_id: key for key in PyJWKSet.from_dict(jwks) if key.key_id}
        # One object swapped in whole: a request on another thread sees the old set or the new.
        self._keys = _PublicKeys(jwks, parsed, next(iter(by_kid)))
        self._fetched_at = monotonic()
        return self._keys

    def _current(self) -> _PublicKeys:
        return self._keys or self._fetch()

    def jwks(self) -> dict[str, Any]:
        return self._current().jwks

    def current_kid(self) -> str:
        return self._current().current_kid

    def current_kms_key_id(self) -> str:
        return self._kms_key_ids[0]

    def verification_key(self, kid: str) -> PyJWK | None:
        """The public key for `kid`, or None: not ours, even after one refresh."""
        keys = self._current()
        if kid not in keys.by_kid and monotonic() - self._fetched_at > self.REFRESH_INTERVAL:
            keys = self._fetch()
        return keys.by_kid.get(kid)


@dataclass(frozen=True)
class MintedToken:
    token: str = field(repr=False)
    expires_in: int
    jti: str | None = None  # what a log line may name instead of the token


class TokenSigner:
    def __init__(self, kms: Any, keys: SigningKeys, issuer: str, clock: Clock):
        self._kms = kms
        self._keys = keys
        self._issuer = issuer
        self._clock = clock

    def mint(
        self,
        user_id: str,
        audience: str | None = None,
        extra: dict[str, Any] | None = None,
        lifetime: int = ACCESS_TOKEN_LIFETIME,
    ) -> MintedToken:
        """A user token by default; with `audience` (an MCP resource) and `extra` claims
        (`client_id`, `scope`, `workspace_id`, `sid`), a token for that resource only; with
        `extra` claims and a shorter `lifetime` (seconds), a delegated or workload token."""
        now = epoch(self._clock.now())
        jti = secrets.token_urlsafe(16)
        header = {"alg": ALGORITHM, "typ": TOKEN_TYPE, "kid": self._keys.current_kid()}
        claims: dict[str, Any] = {
            **(extra or {}),
            "iss": self._issuer,
            "aud": audience or self._issuer,
            "sub": user_id,
            "iat": now,
            "nbf": now,
            "exp": now + lifetime,
            "jti": jti,
        }
        jkt = bound_key()
        if jkt is not None:  # issued to a DPoP token request: bound to the key it proved
            claims["cnf"] = {"jkt": jkt}
        signing_input = (
            b64url(json.dumps(header, separators=(",", ":")).encode())
            + "."
            + b64url(json.dumps(claims, separators=(",", ":")).encode())
        )
        with failures_of("KMS"):
            answer = self._kms.sign(
                KeyId=self._keys.current_kms_key_id(),
                Message=signing_input.encode("ascii"),
                MessageType="RAW",
                SigningAlgorithm=_KMS_ALGORITHM,
            )
        token = signing_input + "." + b64url(bytes(answer["Signature"]))
        return MintedToken(token, lifetime, jti)


class TokenRejected(Exception):
    def __init__(self, reason: str, expired: bool = False):
        super().__init__(reason)
        self.reason = reason
        self.expired = expired


class TokenVerifier:
    """Checks signature, kid, typ, iss, aud, exp, nbf and iat. Time is PyJWT's wall clock
    (with CLOCK_SKEW leeway): tests that need an expired token mint one with a past lifetime.
    """

    def __init__(self, keys: SigningKeys, issuer: str):
        self._keys = keys
        self._issuer = issuer

    def verify(self, token: str, audience: str | None = None) -> dict[str, Any]:
        """The verified claims, or TokenRejected. DependencyUnavailable if keys can't load.

        `audience` is where the token is presented: this service (the default) or one MCP
        resource. A token for any other audience is rejected, so no token works elsewhere.
        """
        import jwt

        try:
            header = jwt.get_unverified_header(token)
        except jwt.InvalidTokenError:
            raise TokenRejected("malformed token") from None
        if header.get("alg") != ALGORITHM or header.get("typ") != TOKEN_TYPE:
            raise TokenRejected("not an access token of this service")
        kid = header.get("kid")
        key = self._keys.verification_key(kid) if isinstance(kid, str) else None
        if key is None:
            raise TokenRejected("unknown signing key")
        try:
            claims: dict[str, Any] = jwt.decode(
                token,
                key=key,
                algorithms=[ALGORITHM],
                audience=audience or self._issuer,
                issuer=self._issuer,
                leeway=CLOCK_SKEW,
                # strict_aud: `aud` is one string equal to the audience, never a list that
                # would make one token good at two places.
                options={
                    "require": ["exp", "iat", "nbf", "iss", "aud", "sub"],
                    "strict_aud": True,
                },
            )
        except jwt.ExpiredSignatureError:
            raise TokenRejected("token expired", expired=True) from None
        except jwt.InvalidTokenError:
            raise TokenRejected("invalid token") from None
        if not isinstance(claims.get("sub"), str):
            raise TokenRejected("invalid subject")
        return claims
