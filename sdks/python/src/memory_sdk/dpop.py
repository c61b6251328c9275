"""DPoP (RFC 9449): a key pair the client keeps, and a proof signed by it for each request.

A credential bound to the pair (a key created with `dpopJkt`, a token issued to a sign-in
made with DPoP) works only with these proofs, so a copy of it alone is useless. Needs the
`cryptography` package (`pip install "memory-sdk[dpop]"`).
"""

from __future__ import annotations

import base64
import hashlib
import json
import time
import uuid
from typing import Any
from urllib.parse import urlsplit, urlunsplit


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


class DpopKey:
    """A P-256 key pair (ES256). Keep the private half where the client runs; share only
    `jwk` or `thumbprint` (what a key-bound API key is created with)."""

    def __init__(self, private_key: Any) -> None:
        from cryptography.hazmat.primitives.asymmetric import ec

        if not isinstance(private_key, ec.EllipticCurvePrivateKey) or not isinstance(
            private_key.curve, ec.SECP256R1
        ):
            raise ValueError("a DPoP key must be a P-256 private key (cryptography's ec)")
        self._private = private_key
        numbers = private_key.public_key().public_numbers()
        self.jwk: dict[str, str] = {
            "kty": "EC",
            "crv": "P-256",
            "x": _b64(numbers.x.to_bytes(32, "big")),
            "y": _b64(numbers.y.to_bytes(32, "big")),
        }
        canonical = json.dumps(self.jwk, separators=(",", ":"), sort_keys=True)
        # RFC 7638: the SHA-256 of the required members, in lexical order, no spaces.
        self.thumbprint = _b64(hashlib.sha256(canonical.encode()).digest())

    @classmethod
    def generate(cls) -> DpopKey:
        from cryptography.hazmat.primitives.asymmetric import ec

        return cls(ec.generate_private_key(ec.SECP256R1()))

    def __repr__(self) -> str:
        return f"DpopKey(thumbprint={self.thumbprint!r})"

    def proof(
        self,
        method: str,
        url: str,
        credential: str | None = None,
        nonce: str | None = None,
        now: float | None = None,
    ) -> str:
        """A proof for one request: its method and URL (without query or fragment), the
        credential's hash (`ath`) when one is sent, the server's nonce when it asked one."""
        from cryptography.hazmat.primitives import hashes
        from cryptography.hazmat.primitives.asymmetric import ec
        from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature

        parts = urlsplit(url)
        claims: dict[str, Any] = {
            "jti": str(uuid.uuid4()),
            "htm": method.upper(),
            "htu": urlunsplit((parts.scheme, parts.netloc, parts.path or "/", "", "")),
            "iat": int(time.time() if now is None else now),
        }
        if credential is not None:
            claims["ath"] = _b64(hashlib.sha256(credential.encode("ascii")).digest())
        if nonce is not None:
            claims["nonce"] = nonce
        header = {"typ": "dpop+jwt", "alg": "ES256", "jwk": self.jwk}
        signing_input = ".".join(
            _b64(json.dumps(part, separators=(",", ":")).encode()) for part in (header, claims)
        )
        der = self._private.sign(signing_input.encode("ascii"), ec.ECDSA(hashes.SHA256()))
        r, s = decode_dss_signature(der)
        return f"{signing_input}.{_b64(r.to_bytes(32, 'big') + s.to_bytes(32, 'big'))}"
