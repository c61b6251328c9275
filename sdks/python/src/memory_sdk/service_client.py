"""Service clients: a machine's workspace tokens with no shared secret (RFC 7523 §2.2).

The workspace owner registers the machine's public key (a JWKS, or a JWKS URI) and gets a
client id (`scl_…`). The machine holds the private key; `ServiceClientCredentials` signs a
short `private_key_jwt` assertion with it (RS256 or ES256, `iss` = `sub` = the client id,
`aud` the token endpoint, a fresh `jti`, 60 s) and sends it with `grant_type=client_credentials`
to `/v1/oauth/token`, then does so again before the token expires.

    credentials = ServiceClientCredentials.from_env()  # MEMORY_CLIENT_ID, MEMORY_CLIENT_KEY_FILE
    token = await credentials.token()   # "Authorization: Bearer <token>" on data-plane calls

Needs `cryptography` (`pip install "memory-sdk[service-clients]"`).
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import os
import secrets
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import httpx

from memory_sdk.errors import issued_token

TOKEN_PATH = "/v1/oauth/token"
ASSERTION_TYPE = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
DEFAULT_ENDPOINT = "https://api.memory.example"
ASSERTION_LIFETIME = 60  # seconds: the service takes assertions of at most 5 minutes
REFRESH_MARGIN = 60.0  # seconds before expiry when a new token is fetched


class ServiceClientError(Exception):
    """The credentials are not configured, or the token request was refused. The message
    holds the service's `error` and `error_description`, never a key or a token."""


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _b64url_int(value: int, size: int | None = None) -> str:
    length = size if size is not None else max(1, (value.bit_length() + 7) // 8)
    return _b64url(value.to_bytes(length, "big"))


def _int_of(text: str) -> int:
    return int.from_bytes(base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)), "big")


class _SigningKey:
    """A private RSA or P-256 key: its algorithm, public JWK and signatures."""

    def __init__(self, key: Any) -> None:
        from cryptography.hazmat.primitives.asymmetric import ec, rsa

        if isinstance(key, rsa.RSAPrivateKey):
            numbers = key.public_key().public_numbers()
            self.algorithm = "RS256"
            self.public_jwk: dict[str, str] = {
                "kty": "RSA",
                "n": _b64url_int(numbers.n),
                "e": _b64url_int(numbers.e),
            }
        elif isinstance(key, ec.EllipticCurvePrivateKey) and key.curve.name == "secp256r1":
            numbers_ec = key.public_key().public_numbers()
            self.algorithm = "ES256"
            self.public_jwk = {
                "kty": "EC",
                "crv": "P-256",
                "x": _b64url_int(numbers_ec.x, 32),
                "y": _b64url_int(numbers_ec.y, 32),
            }
        else:
            raise ServiceClientError("The key must be an RSA key or an EC key on P-256.")
        self._key = key

    def thumbprint(self) -> str:
        """RFC 7638: the `kid` the service gives a registered key that names none."""
        canonical = json.dumps(self.public_jwk, sort_keys=True, separators=(",", ":"))
        return _b64url(hashlib.sha256(canonical.encode("ascii")).digest())

    def sign(self, data: bytes) -> bytes:
        from cryptography.hazmat.primitives import hashes
        from cryptography.hazmat.primitives.asymmetric import ec, padding
        from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature

        if self.algorithm == "RS256":
            signed: bytes = self._key.sign(data, padding.PKCS1v15(), hashes.SHA256())
            return signed
        r, s = decode_dss_signature(self._key.sign(data, ec.ECDSA(hashes.SHA256())))
        return r.to_bytes(32, "big") + s.to_bytes(32, "big")  # JWS: r || s, not DER


def _load_key(private_key: str | bytes | Mapping[str, Any]) -> Any:
    try:
        from cryptography.hazmat.primitives.asymmetric import ec, rsa
        from cryptography.hazmat.primitives.serialization import load_pem_private_key
    except ImportError:  # pragma: no cover - depends on the install
        raise ServiceClientError(
            'ServiceClientCredentials needs cryptography: pip install "memory-sdk[service-clients]"'
        ) from None
    if isinstance(private_key, Mapping):
        jwk = private_key
        if "d" not in jwk:
            raise ServiceClientError("The JWK is a public key: the private key signs.")
        if jwk.get("kty") == "EC" and jwk.get("crv") == "P-256":
            x, y = _int_of(jwk["x"]), _int_of(jwk["y"])
            public = ec.EllipticCurvePublicNumbers(x, y, ec.SECP256R1())
            return ec.EllipticCurvePrivateNumbers(_int_of(jwk["d"]), public).private_key()
        if jwk.get("kty") == "RSA":
            public_rsa = rsa.RSAPublicNumbers(_int_of(jwk["e"]), _int_of(jwk["n"]))
            return rsa.RSAPrivateNumbers(
                _int_of(jwk["p"]), _int_of(jwk["q"]), _int_of(jwk["d"]), _int_of(jwk["dp"]),
                _int_of(jwk["dq"]), _int_of(jwk["qi"]), public_rsa,
            ).private_key()
        raise ServiceClientError("The JWK must be an RSA key or an EC key on P-256.")
    data = private_key.encode() if isinstance(private_key, str) else private_key
    try:
        return load_pem_private_key(data, password=None)
    except (ValueError, TypeError):
        raise ServiceClientError("The key is not a PEM private key (unencrypted).") from None


class ServiceClientCredentials:
    def __init__(
        self,
        *,
        endpoint: str,
        client_id: str,
        private_key: str | bytes | Mapping[str, Any],
        key_id: str | None = None,
        scope: str | None = None,
        resource: str | None = None,
        expires_in: int | None = None,
        audience: str | None = None,
        http_transport: httpx.AsyncBaseTransport | None = None,
        clock: Callable[[], float] = time.monotonic,
        wall_clock: Callable[[], float] = time.time,
    ) -> None:
        if not client_id.startswith("scl_"):
            raise ServiceClientError("client_id must be a service client id (scl_…).")
        self._key = _SigningKey(_load_key(private_key))
        jwk_kid = private_key.get("kid") if isinstance(private_key, Mapping) else None
        self._kid = key_id or jwk_kid or self._key.thumbprint()
        self._endpoint = endpoint.rstrip("/")
        self._client_id = client_id
        self._scope = scope
        self._resource = resource
        self._expires_in = expires_in
        self._audience = audience or self._endpoint + TOKEN_PATH
        self._transport = http_transport
        self._clock = clock
        self._wall_clock = wall_clock
        self._token: str | None = None
        self._expires_at = 0.0
        self._lock = asyncio.Lock()

    def __repr__(self) -> str:  # never the key
        return f"ServiceClientCredentials(client_id={self._client_id!r}, kid={self._kid!r})"

    @classmethod
    def from_env(
        cls,
        environ: Mapping[str, str] | None = None,
        http_transport: httpx.AsyncBaseTransport | None = None,
    ) -> ServiceClientCredentials:
        """MEMORY_ENDPOINT, MEMORY_CLIENT_ID, MEMORY_CLIENT_KEY_FILE (a PEM or a JWK file),
        and optionally MEMORY_CLIENT_KEY_ID and MEMORY_SCOPE."""
        env = os.environ if environ is None else environ
        path = env.get("MEMORY_CLIENT_KEY_FILE")
        if not env.get("MEMORY_CLIENT_ID") or not path:
            raise ServiceClientError("Set MEMORY_CLIENT_ID and MEMORY_CLIENT_KEY_FILE.")
        text = Path(path).read_text(encoding="utf-8")
        key: str | dict[str, Any] = json.loads(text) if text.lstrip().startswith("{") else text
        return cls(
            endpoint=env.get("MEMORY_ENDPOINT", DEFAULT_ENDPOINT),
            client_id=env["MEMORY_CLIENT_ID"],
            private_key=key,
            key_id=env.get("MEMORY_CLIENT_KEY_ID") or None,
            scope=env.get("MEMORY_SCOPE") or None,
            http_transport=http_transport,
        )

    @property
    def public_jwk(self) -> dict[str, str]:
        """What the owner registers (`{"keys": [credentials.public_jwk]}`)."""
        return {**self._key.public_jwk, "kid": self._kid, "alg": self._key.algorithm, "use": "sig"}

    def assertion(self) -> str:
        """A fresh signed assertion (a new `jti` each time: the service takes each once)."""
        now = int(self._wall_clock())
        header = {"alg": self._key.algorithm, "typ": "JWT", "kid": self._kid}
        claims = {
            "iss": self._client_id,
            "sub": self._client_id,
            "aud": self._audience,
            "iat": now,
            "exp": now + ASSERTION_LIFETIME,
            "jti": secrets.token_urlsafe(16),
        }
        signing_input = ".".join(
            _b64url(json.dumps(part, separators=(",", ":")).encode()) for part in (header, claims)
        )
        return signing_input + "." + _b64url(self._key.sign(signing_input.encode("ascii")))

    async def token(self) -> str:
        """A workspace token of the client, fetched again when it is near its end."""
        async with self._lock:
            if self._token is None or self._clock() >= self._expires_at - REFRESH_MARGIN:
                await self._fetch()
            assert self._token is not None
            return self._token

    async def _fetch(self) -> None:
        form = {
            "grant_type": "client_credentials",
            "client_assertion_type": ASSERTION_TYPE,
            "client_assertion": self.assertion(),
        }
        for name, value in (
            ("scope", self._scope),
            ("resource", self._resource),
            ("expires_in", None if self._expires_in is None else str(self._expires_in)),
        ):
            if value is not None:
                form[name] = value
        started = self._clock()
        async with httpx.AsyncClient(transport=self._transport, timeout=30) as http:
            answer = await http.post(self._endpoint + TOKEN_PATH, data=form)
        token, expires_in = issued_token(
            answer, TOKEN_PATH, ServiceClientError, "The token request"
        )
        self._token = token
        self._expires_at = started + expires_in
