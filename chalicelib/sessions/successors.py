"""The successor of a refresh token: derived from it with a keyed MAC whose key stays in KMS.

A refresh answers a new refresh token. If that answer is lost (a timeout, a dropped
connection), the client still holds only the token it sent, which the refresh has already
consumed. Because the successor is a function of the consumed token, a retry computes the
same successor again and can answer it, without the service ever storing a plaintext token
(the store keeps only SHA-256 digests). Only someone holding the consumed token can ask for
that; only the service, through KMS, can compute it: the HMAC key never leaves KMS
(`REFRESH_TOKEN_KEY_ID`, an HMAC_256 key that only the API handler's role may use).

The successor has the shape of any refresh token: `rt_` and 43 base64url characters (the
32 bytes of HMAC-SHA-256).
"""

from __future__ import annotations

import base64
from typing import Any

from chalicelib.dependencies import failures_of
from chalicelib.sessions.refresh import PREFIX

MAC_ALGORITHM = "HMAC_SHA_256"
# Binds the MAC to this one use: the same key can never be made to answer anything else.
_PURPOSE = b"memory-auth refresh-token successor v1\x00"


class RefreshSuccessors:
    def __init__(self, kms: Any, kms_key_id: str):
        self._kms = kms
        self._kms_key_id = kms_key_id

    def successor_of(self, refresh_token: str) -> str:
        """The one successor `refresh_token` ever has. DependencyUnavailable if KMS fails."""
        with failures_of("KMS"):
            answer = self._kms.generate_mac(
                KeyId=self._kms_key_id,
                Message=_PURPOSE + refresh_token.encode("ascii"),
                MacAlgorithm=MAC_ALGORITHM,
            )
        mac = bytes(answer["Mac"])
        return PREFIX + base64.urlsafe_b64encode(mac).rstrip(b"=").decode("ascii")
