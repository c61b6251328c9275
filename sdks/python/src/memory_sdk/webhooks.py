"""Verifying a webhook delivery on the receiving side (Standard Webhooks).

Each delivery carries `webhook-id`, `webhook-timestamp` and `webhook-signature` (one or more
space-separated `v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>">`). `verify` checks
the signature against every secret it is given (during a rotation, give both: the new and
the old), compares in constant time, and refuses a timestamp more than 5 minutes from now
(a replayed delivery). Use the body exactly as received: any re-encoding breaks the
signature.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from memory_sdk.errors import MemorySDKError

SECRET_PREFIX = "whsec_"
TOLERANCE_SECONDS = 5 * 60


class WebhookVerificationError(MemorySDKError):
    """The delivery is not signed by one of the secrets, or is too old (or too new)."""


def _key(secret: str) -> bytes:
    try:
        return base64.b64decode(secret.removeprefix(SECRET_PREFIX), validate=True)
    except (binascii.Error, ValueError):
        raise WebhookVerificationError("a webhook secret is not whsec_ and base64") from None


def sign(secret: str, message_id: str, timestamp: int, body: bytes) -> str:
    """The `v1,` signature of one delivery with one secret."""
    signed = f"{message_id}.{timestamp}.".encode() + body
    digest = hmac.new(_key(secret), signed, hashlib.sha256).digest()
    return "v1," + base64.b64encode(digest).decode()


def verify(
    body: bytes | str,
    headers: Mapping[str, str],
    secrets: str | Sequence[str],
    *,
    tolerance: int = TOLERANCE_SECONDS,
    now: Callable[[], float] = time.time,
) -> Any:
    """The delivery's JSON (`{"type", "timestamp", "data"}`) once its signature verifies with
    one of `secrets`; WebhookVerificationError otherwise. `headers` are matched without
    regard to case."""
    raw = body.encode() if isinstance(body, str) else body
    lowered = {k.lower(): v for k, v in headers.items()}
    message_id = lowered.get("webhook-id")
    stamp = lowered.get("webhook-timestamp")
    signatures = lowered.get("webhook-signature")
    if not message_id or not stamp or not signatures:
        raise WebhookVerificationError("the webhook headers are missing")
    if not stamp.isascii() or not stamp.isdigit():
        raise WebhookVerificationError("webhook-timestamp is not a number")
    timestamp = int(stamp)
    if abs(now() - timestamp) > tolerance:
        raise WebhookVerificationError("webhook-timestamp is outside the tolerance")
    keys = [secrets] if isinstance(secrets, str) else list(secrets)
    if not keys:
        raise WebhookVerificationError("no webhook secret to verify with")
    sent = [part.partition(",") for part in signatures.split(" ")]
    offered = [value for version, _, value in sent if version == "v1"]
    for secret in keys:
        expected = sign(secret, message_id, timestamp, raw).partition(",")[2]
        # Every offered signature is compared: no early exit on which one matched.
        matched = False
        for value in offered:
            matched |= hmac.compare_digest(value.encode(), expected.encode())
        if matched:
            return json.loads(raw)
    raise WebhookVerificationError("no webhook signature matches")
