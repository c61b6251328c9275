"""Internal user tokens: RS256 JWTs signed by an asymmetric KMS key (RFC 9068 profile).

Minting calls KMS `Sign` (RAW message); verification never calls KMS: the public keys are
fetched once per process with `GetPublicKey` and kept. PyJWT and cryptography are imported
only when a token is minted or verified, so that the API-key path (and the authorizer's
cold start) never loads them.
"""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from chalicelib.clock import Clock, epoch, monotonic
from chalicelib.errors import DependencyUnavailable

ACCESS_TOKEN_LIFETIME = 3600  # seconds; spec §8: about one hour
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


class SigningKeys:
    """The public halves of the configured KMS signing keys, fetched once and kept.

    `kms_key_ids` lists the current key first, then any previous key still inside its
    overlap window. An unknown `kid` refreshes the set once (at most every 60 s), then fails.
    """

    REFRESH_INTERVAL = 60.0

    def __init__(self, kms: Any, kms_key_ids: Sequence[str]):
        self._kms = kms
        self._kms_key_ids = [k for k in kms_key_ids if k]
        self._by_kid: dict[str, dict[str, Any]] = {}
        self._kid_by_kms_key: dict[str, str] = {}
        self._fetched_at: float | None = None

    def _fetch(self) -> None:
        by_kid: dict[str, dict[str, Any]] = {}
        kid_by_kms_key: dict[str, str] = {}
        for kms_key_id in self._kms_key_ids:
            try:
                answer = self._kms.get_public_key(KeyId=kms_key_id)
            except (ClientError, BotoCoreError):
                raise DependencyUnavailable("KMS") from None
            jwk = public_jwk_from_der(bytes(answer["PublicKey"]))
            by_kid[jwk["kid"]] = jwk
            kid_by_kms_key[kms_key_id] = jwk["kid"]
        self._by_kid, self._kid_by_kms_key = by_kid, kid_by_kms_key
        self._fetched_at = monotonic()

    def jwks(self) -> dict[str, Any]:
        if self._fetched_at is None:
            self._fetch()
        ordered = [self._kid_by_kms_key[k] for k in self._kms_key_ids]
        return {"keys": [self._by_kid[kid] for kid in dict.fromkeys(ordered)]}

    def current_kid(self) -> str:
        if self._fetched_at is None:
            self._fetch()
        return self._kid_by_kms_key[self._kms_key_ids[0]]

    def current_kms_key_id(self) -> str:
        return self._kms_key_ids[0]

    def by_kid(self, kid: str) -> dict[str, Any] | None:
        if self._fetched_at is None:
            self._fetch()
        if (
            kid not in self._by_kid
            and monotonic() - (self._fetched_at or 0) > self.REFRESH_INTERVAL
        ):
            self._fetch()
        return self._by_kid.get(kid)


@dataclass(frozen=True)
class MintedToken:
    token: str = field(repr=False)
    expires_in: int
    claims: dict[str, Any]


class TokenSigner:
    def __init__(self, kms: Any, keys: SigningKeys, issuer: str, clock: Clock):
        self._kms = kms
        self._keys = keys
        self._issuer = issuer
        self._clock = clock

    def mint(
        self,
        user_id: str,
        lifetime: int = ACCESS_TOKEN_LIFETIME,
        audience: str | None = None,
        extra: dict[str, str] | None = None,
    ) -> MintedToken:
        """A user token by default; with `audience` (an MCP resource) and `extra` claims
        (`client_id`, `scope`, `workspace_id`, `sid`), a token for that resource only."""
        now = epoch(self._clock.now())
        header = {"alg": ALGORITHM, "typ": TOKEN_TYPE, "kid": self._keys.current_kid()}
        claims: dict[str, Any] = {
            **(extra or {}),
            "iss": self._issuer,
            "aud": audience or self._issuer,
            "sub": user_id,
            "iat": now,
            "nbf": now,
            "exp": now + lifetime,
            "jti": secrets.token_urlsafe(16),
        }
        signing_input = (
            b64url(json.dumps(header, separators=(",", ":")).encode())
            + "."
            + b64url(json.dumps(claims, separators=(",", ":")).encode())
        )
        try:
            answer = self._kms.sign(
                KeyId=self._keys.current_kms_key_id(),
                Message=signing_input.encode("ascii"),
                MessageType="RAW",
                SigningAlgorithm=_KMS_ALGORITHM,
            )
        except (ClientError, BotoCoreError):
            raise DependencyUnavailable("KMS") from None
        token = signing_input + "." + b64url(bytes(answer["Signature"]))
        return MintedToken(token, lifetime, claims)


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
        from jwt.algorithms import RSAAlgorithm

        try:
            header = jwt.get_unverified_header(token)
        except jwt.InvalidTokenError:
            raise TokenRejected("malformed token") from None
        if header.get("alg") != ALGORITHM or header.get("typ") != TOKEN_TYPE:
            raise TokenRejected("not an access token of this service")
        kid = header.get("kid")
        jwk = self._keys.by_kid(kid) if isinstance(kid, str) else None
        if jwk is None:
            raise TokenRejected("unknown signing key")
        public_key = RSAAlgorithm.from_jwk(jwk)
        try:
            claims: dict[str, Any] = jwt.decode(
                token,
                key=public_key,  # type: ignore[arg-type]
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
