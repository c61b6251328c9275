"""The token endpoints' DPoP nonces (RFC 9449 §8): stateless, nothing stored.

A nonce is the HMAC of a 5-minute window's number, computed in KMS with the key that already
derives refresh tokens' successors (REFRESH_TOKEN_KEY_ID), under its own purpose, so no new
secret and no new setting: `base64url(HMAC-SHA-256(key, purpose || window))`. Only the service
can compute one, so a client cannot make proofs ahead of time; a proof must carry the nonce of
the current window or the one before (a nonce lives 5 to 10 minutes). Each container computes
a window's nonce once (one KMS call per container and 5 minutes).
"""

from __future__ import annotations

import base64
import hmac
from datetime import datetime
from typing import Any

from chalicelib.dependencies import failures_of

WINDOW_SECONDS = 300
MAC_ALGORITHM = "HMAC_SHA_256"
# Binds the MAC to this one use: a nonce is never a refresh token's successor.
_PURPOSE = b"memory-auth dpop nonce v1\x00"


class DpopNonces:
    def __init__(self, kms: Any, kms_key_id: str):
        self._kms = kms
        self._kms_key_id = kms_key_id
        self._cache: dict[int, str] = {}

    def current(self, now: datetime) -> str:
        """The nonce to hand out now. DependencyUnavailable if KMS fails."""
        return self._of(int(now.timestamp()) // WINDOW_SECONDS)

    def accepts(self, nonce: object, now: datetime) -> bool:
        """Whether `nonce` is the current window's or the previous one's."""
        if not isinstance(nonce, str) or not nonce:
            return False
        window = int(now.timestamp()) // WINDOW_SECONDS
        return any(hmac.compare_digest(nonce, self._of(w)) for w in (window, window - 1))

    def _of(self, window: int) -> str:
        found = self._cache.get(window)
        if found is None:
            with failures_of("KMS"):
                answer = self._kms.generate_mac(
                    KeyId=self._kms_key_id,
                    Message=_PURPOSE + str(window).encode("ascii"),
                    MacAlgorithm=MAC_ALGORITHM,
                )
            found = base64.urlsafe_b64encode(bytes(answer["Mac"])).rstrip(b"=").decode("ascii")
            self._cache = {w: n for w, n in self._cache.items() if w >= window - 1}
            self._cache[window] = found
        return found
