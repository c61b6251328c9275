"""A service client: a machine registered in one workspace with its public keys (or a JWKS
URI) and its scopes; and the rules that make one valid. Standard library only at import: the
data-plane authorizer reads a client on every decision of its tokens.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any

MAX_KEYS = 5
LIMIT = 20  # service clients per workspace
MAX_URI = 2048
MIN_RSA_BITS = 2048
# The algorithms an assertion may be signed with, and the key type each needs.
ALGORITHMS = {"RS256": "RSA", "ES256": "EC"}
# Members that only a private key has (RFC 7518 §6.2.2, §6.3.2): a JWKS holding one is refused.
PRIVATE_MEMBERS = frozenset({"d", "p", "q", "dp", "dq", "qi", "oth", "k"})
_PUBLIC_MEMBERS = {"RSA": ("kty", "n", "e"), "EC": ("kty", "crv", "x", "y")}
# https and a host name (never an address: `hosts.names_an_address`); loopback http locally.
_URI = r"https://[A-Za-z0-9.-]+(?::[0-9]{1,5})?(?:/[^?#\s]*)?(?:\?[^#\s]*)?"
_LOCAL_URI = r"http://(?:127\.0\.0\.1|localhost|\[::1\])(?::[0-9]{1,5})?(?:/[^?#\s]*)?"


class InvalidServiceClient(ValueError):
    """A field breaks a rule; the message names the field and the rule (safe to show)."""


@dataclass(frozen=True)
class ServiceClient:
    id: str
    workspace_id: str
    name: str
    scopes: tuple[str, ...]
    jwks: tuple[dict[str, Any], ...] | None  # the keys registered, or None with a URI
    jwks_uri: str | None
    created_at: datetime
    created_by: str  # the workspace's owner

    def json_keys(self) -> str | None:
        return None if self.jwks is None else json.dumps(list(self.jwks), separators=(",", ":"))


def check_jwks(value: Any) -> tuple[dict[str, Any], ...]:
    """1 to MAX_KEYS public RS256 or ES256 keys: each as registered (public members only,
    its `kid` kept, else its RFC 7638 thumbprint given), refused if private or another
    algorithm."""
    keys = value.get("keys") if isinstance(value, dict) else None
    if not isinstance(keys, list) or not 1 <= len(keys) <= MAX_KEYS:
        raise InvalidServiceClient(f"jwks must be a JWK Set with 1 to {MAX_KEYS} keys.")
    checked = [_check_key(jwk, index) for index, jwk in enumerate(keys)]
    kids = [jwk["kid"] for jwk in checked]
    if len(set(kids)) != len(kids):
        raise InvalidServiceClient("jwks names one kid twice.")
    return tuple(checked)


def _check_key(jwk: Any, index: int) -> dict[str, Any]:
    where = f"jwks.keys[{index}]"
    if not isinstance(jwk, dict):
        raise InvalidServiceClient(f"{where} must be a JWK (an object).")
    if PRIVATE_MEMBERS & set(jwk):
        raise InvalidServiceClient(
            f"{where} is a private or secret key: register the public key only."
        )
    kty = jwk.get("kty")
    if kty not in _PUBLIC_MEMBERS:
        raise InvalidServiceClient(f"{where}.kty must be RSA (RS256) or EC (ES256 on P-256).")
    algorithm = "RS256" if kty == "RSA" else "ES256"
    if jwk.get("alg", algorithm) != algorithm:
        raise InvalidServiceClient(f"{where}.alg must be RS256 or ES256, as its kty says.")
    if kty == "EC" and jwk.get("crv") != "P-256":
        raise InvalidServiceClient(f"{where}.crv must be P-256 (ES256).")
    if jwk.get("use", "sig") != "sig":
        raise InvalidServiceClient(f"{where}.use must be sig.")
    public = {name: jwk.get(name) for name in _PUBLIC_MEMBERS[kty]}
    if not all(isinstance(v, str) and v for v in public.values()):
        raise InvalidServiceClient(f"{where} lacks a member of a public {kty} key.")
    # Parsed here, not at import: the authorizer imports this module for a client's fields.
    import jwt
    from cryptography.hazmat.primitives.asymmetric.rsa import RSAPublicKey

    try:
        key = jwt.PyJWK(public, algorithm).key
    except (jwt.PyJWTError, ValueError, TypeError):
        raise InvalidServiceClient(f"{where} is not a usable {algorithm} key.") from None
    if isinstance(key, RSAPublicKey) and key.key_size < MIN_RSA_BITS:
        raise InvalidServiceClient(f"{where} must be an RSA key of at least {MIN_RSA_BITS} bits.")
    kid = jwk.get("kid")
    if kid is not None and (not isinstance(kid, str) or not 0 < len(kid) <= 255):
        raise InvalidServiceClient(f"{where}.kid must be a string of 1 to 255 characters.")
    return {**public, "kid": kid or thumbprint(public), "alg": algorithm, "use": "sig"}


def thumbprint(public: dict[str, Any]) -> str:
    """RFC 7638: SHA-256 over the required members, sorted, without white space."""
    canonical = json.dumps(public, sort_keys=True, separators=(",", ":"))
    digest = hashlib.sha256(canonical.encode("ascii")).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


def check_jwks_uri(value: Any, local_mode: bool) -> str:
    if not isinstance(value, str) or not 0 < len(value) <= MAX_URI:
        raise InvalidServiceClient(f"jwksUri must be a URL of at most {MAX_URI} characters.")
    if local_mode and re.fullmatch(_LOCAL_URI, value):
        return value
    if not re.fullmatch(_URI, value):
        raise InvalidServiceClient(
            "jwksUri must be an https URL of a host name (optional port, path and query), "
            "without credentials or fragment."
        )
    from chalicelib.hosts import ADDRESS_RULE, names_an_address

    if names_an_address(value):
        raise InvalidServiceClient(f"jwksUri {ADDRESS_RULE}.")
    return value
