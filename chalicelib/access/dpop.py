"""DPoP proofs (RFC 9449): a JWT its client signs with a key it keeps, sent in the `DPoP`
header of each request. A credential bound to that key (a token's `cnf.jkt`, a key's
`dpopJkt`: the key's RFC 7638 thumbprint) is accepted only with a proof by it, so a copy of
the credential alone is useless.

`check_proof` is the RFC 9449 §4.3 check, one straight sequence; a bad proof is a result
(`BadProof`, with the reason said to the caller), never an exception. It reads nothing: the
proof carries its own public key, and the credential names which key it must be. Resources
ask no nonce (a decision writes nothing): a proof is good for 60 seconds either side of its
`iat`, the documented residual of a proof copied together with its credential. The token
endpoint asks a server nonce too (`nonce_ok`).

PyJWT and cryptography are imported on the first proof only: the bearer path of the
authorizer's cold start never loads them.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, NamedTuple
from urllib.parse import urlsplit, urlunsplit

HEADER = "dpop"  # the request header, as `access/headers.py` spells header names
SCHEME = "DPoP"  # the Authorization scheme of a bound credential
TYP = "dpop+jwt"
ALGORITHMS = ("ES256", "RS256", "EdDSA")
ALGS = " ".join(ALGORITHMS)  # as a challenge's `algs` lists them
MAX_AGE_SECONDS = 60  # a proof's `iat` may be this far in the past or the future
MAX_PROOF_LENGTH = 8192  # an RSA-4096 key and the claims fit with room to spare
MIN_RSA_BITS = 2048
# The members a JWK's private part is made of (RFC 7518 §6.2.2, §6.3.2, §6.4; RFC 8037).
PRIVATE_MEMBERS = frozenset({"d", "p", "q", "dp", "dq", "qi", "oth", "k"})
# The members a thumbprint is computed over, per key type (RFC 7638 §3.2, RFC 8037 §2).
THUMBPRINT_MEMBERS = {
    "EC": ("crv", "kty", "x", "y"),
    "RSA": ("e", "kty", "n"),
    "OKP": ("crv", "kty", "x"),
}
# Which key type and curve each algorithm takes.
KEY_TYPES = {"ES256": ("EC", "P-256"), "RS256": ("RSA", None), "EdDSA": ("OKP", "Ed25519")}
DEFAULT_PORTS = {"http": 80, "https": 443}


class DpopRequest(NamedTuple):
    """What a DPoP proof is checked against: the `DPoP` header as sent (None: none, or more
    than one copy), and the request's method and URL as its client addressed it."""

    proof: str | None
    method: str
    url: str


class Proof(NamedTuple):
    """A proof that passed: the thumbprint of its key, and its `jti` and `iat`."""

    jkt: str
    jti: str
    iat: int


class BadProof(NamedTuple):
    """Why a proof was refused: said to the caller (it names no secret)."""

    reason: str
    # The token endpoint's only retryable refusal: the proof lacks a current server nonce.
    nonce: bool = False


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def ath(credential: str) -> str:
    """The `ath` a proof carries for a credential: base64url(SHA-256(its ASCII))."""
    return b64url(hashlib.sha256(credential.encode("ascii", "replace")).digest())


def thumbprint(jwk: dict[str, Any]) -> str | None:
    """The RFC 7638 SHA-256 thumbprint of a public JWK, or None when it is not one we take."""
    members = THUMBPRINT_MEMBERS.get(jwk.get("kty"))  # type: ignore[arg-type]
    if members is None or not all(isinstance(jwk.get(m), str) for m in members):
        return None
    canonical = json.dumps({m: jwk[m] for m in members}, separators=(",", ":"), sort_keys=True)
    return b64url(hashlib.sha256(canonical.encode()).digest())


def normalized_url(url: str) -> str | None:
    """A URL as `htu` is compared (RFC 9449 §4.3, RFC 3986 §6.2.2-3): scheme and host in
    lower case, a default port dropped, an empty path as `/`, no query, no fragment; None when
    it is not an absolute http(s) URL."""
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    if scheme not in DEFAULT_PORTS or not host or parts.username or parts.password:
        return None
    if ":" in host:
        host = f"[{host}]"
    netloc = host if port in (None, DEFAULT_PORTS[scheme]) else f"{host}:{port}"
    return urlunsplit((scheme, netloc, parts.path or "/", "", ""))


def same_url(proof_htu: str, request_url: str) -> bool:
    left, right = normalized_url(proof_htu), normalized_url(request_url)
    return left is not None and left == right


def _segment(part: str) -> dict[str, Any] | None:
    try:
        decoded = json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)))
    except ValueError:
        return None
    return decoded if isinstance(decoded, dict) else None


def check_proof(
    proof: str | None,
    method: str,
    url: str,
    now: float,
    credential: str | None = None,
    nonce_ok: Callable[[object], bool] | None = None,
) -> Proof | BadProof:
    """RFC 9449 §4.3: the proof for a request (`method`, `url`) at `now` (epoch seconds).
    `credential`: the access token or key presented with it (the proof's `ath` must be its
    hash); `nonce_ok`: the token endpoint's nonce check (None: no nonce asked)."""
    if not proof or len(proof) > MAX_PROOF_LENGTH or proof.count(".") != 2:
        return BadProof("A DPoP proof is required: one compact JWT in the DPoP header.")
    header = _segment(proof.partition(".")[0])
    if header is None:
        return BadProof("The DPoP proof is not a JWT.")
    if header.get("typ") != TYP:
        return BadProof("The DPoP proof's typ must be dpop+jwt.")
    alg = header.get("alg")
    if alg not in ALGORITHMS:
        return BadProof(f"The DPoP proof's alg must be one of {', '.join(ALGORITHMS)}.")
    jwk = header.get("jwk")
    if not isinstance(jwk, dict):
        return BadProof("The DPoP proof's header must carry its public key (jwk).")
    if PRIVATE_MEMBERS & jwk.keys():
        return BadProof("The DPoP proof's jwk holds a private key: send only the public key.")
    kty, crv = KEY_TYPES[alg]
    if jwk.get("kty") != kty or (crv is not None and jwk.get("crv") != crv):
        return BadProof(f"The DPoP proof's jwk is not a key for {alg}.")
    jkt = thumbprint(jwk)
    if jkt is None:
        return BadProof("The DPoP proof's jwk is not a public key.")
    claims = _verified_claims(proof, jwk, alg)
    if claims is None:
        return BadProof("The DPoP proof's signature does not verify with its jwk.")
    jti, iat, htm, htu = (claims.get(n) for n in ("jti", "iat", "htm", "htu"))
    if not isinstance(jti, str) or not jti or len(jti) > 256:
        return BadProof("The DPoP proof needs a jti.")
    if not isinstance(htm, str) or htm != method.upper():
        return BadProof("The DPoP proof's htm is not this request's method.")
    if not isinstance(htu, str) or not same_url(htu, url):
        return BadProof("The DPoP proof's htu is not this request's URL.")
    if isinstance(iat, bool) or not isinstance(iat, int | float):
        return BadProof("The DPoP proof needs an iat.")
    if abs(now - iat) > MAX_AGE_SECONDS:
        return BadProof("The DPoP proof's iat is more than 60 seconds from now.")
    if credential is not None:
        if "ath" not in claims:
            return BadProof("The DPoP proof needs the credential's hash (ath).")
        if not isinstance(claims["ath"], str) or claims["ath"] != ath(credential):
            return BadProof("The DPoP proof's ath is not this credential's hash.")
    if nonce_ok is not None and not nonce_ok(claims.get("nonce")):
        return BadProof("Sign the DPoP proof with the nonce in the DPoP-Nonce header.", nonce=True)
    return Proof(jkt, jti, int(iat))


def _verified_claims(proof: str, jwk: dict[str, Any], alg: str) -> dict[str, Any] | None:
    """The proof's claims when its signature verifies with its own key (the one algorithm
    its header names, pinned), else None. No registered claim is checked here: `exp`, `aud`
    and `iss` have no place in a proof; §4.3 says what to check, and `check_proof` does."""
    import jwt
    from cryptography.hazmat.primitives.asymmetric.rsa import RSAPublicKey

    try:
        key = jwt.PyJWK(jwk, algorithm=alg)
        if isinstance(key.key, RSAPublicKey) and key.key.key_size < MIN_RSA_BITS:
            return None
        claims = jwt.decode(
            proof,
            key=key,
            algorithms=[alg],
            options={
                "verify_exp": False,
                "verify_aud": False,
                "verify_iat": False,
                "verify_nbf": False,
                "verify_iss": False,
            },
        )
    except (jwt.PyJWTError, ValueError, TypeError, KeyError):
        return None
    return claims if isinstance(claims, dict) else None


def challenge(error: str | None = None, description: str | None = None) -> str:
    """The `WWW-Authenticate` value of a DPoP refusal (RFC 9449 §7.1)."""
    parts = []
    if error:
        parts.append(f'error="{error}"')
    if description:
        parts.append('error_description="{}"'.format(description.replace('"', "'")))
    parts.append(f'algs="{ALGS}"')
    return f"{SCHEME} " + ", ".join(parts)


# The key a token request proved (RFC 9449 §5), while its grant issues: every access token
# minted meanwhile carries it as `cnf.jkt`, and a refresh family started meanwhile is bound to
# it. Set by the token endpoints in one place (api/grants/endpoint.py), for every grant.
_BINDING: ContextVar[str | None] = ContextVar("dpop_binding", default=None)


@contextmanager
def binding(jkt: str | None) -> Iterator[None]:
    reset = _BINDING.set(jkt)
    try:
        yield
    finally:
        _BINDING.reset(reset)


def bound_key() -> str | None:
    """The thumbprint of the key the current token request proved, if any."""
    return _BINDING.get()
