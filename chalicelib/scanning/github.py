"""GitHub's secret scanning partner protocol: the signing keys, the signature, the report.

GitHub signs each report with ECDSA P-256 over SHA-256 of the raw body, names the key in
`Github-Public-Key-Identifier` and puts the base64 DER signature in
`Github-Public-Key-Signature`. Its public keys are published as JSON
(`{"public_keys": [{"key_identifier", "key" (PEM), "is_current"}]}`) at the configured URL,
fetched without SSRF (fetch.py's fetcher: https, public addresses, no redirects, 3 s,
64 KiB) and cached here: an hour, and refetched once (at most every 30 s) when a report
names a key identifier the cache does not know.
"""

from __future__ import annotations

import base64
import binascii
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from chalicelib.clock import monotonic
from chalicelib.fetch import FetchRefused, SafeFetcher

IDENTIFIER_HEADER = "github-public-key-identifier"
SIGNATURE_HEADER = "github-public-key-signature"
KEY_LIST_MAX_BYTES = 64 * 1024  # GitHub's list is about 1 KiB today; room for many more keys
CACHE_SECONDS = 3600
REFETCH_SECONDS = 30
MAX_TOKENS = 1000


class KeyListUnavailable(Exception):
    """The published key list could not be fetched or read: nothing can be verified."""


def parse_key_list(document: Any) -> dict[str, Any]:
    """key identifier -> EC P-256 public key; keys of another kind are left out."""
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.hazmat.primitives.serialization import load_pem_public_key

    try:
        entries = document["public_keys"]
    except (KeyError, TypeError):
        raise KeyListUnavailable("the key list is not GitHub's format") from None
    keys: dict[str, Any] = {}
    for entry in entries if isinstance(entries, list) else []:
        if not isinstance(entry, dict):
            continue
        identifier, pem = entry.get("key_identifier"), entry.get("key")
        if not isinstance(identifier, str) or not isinstance(pem, str):
            continue
        try:
            key = load_pem_public_key(pem.encode("ascii"))
        except (ValueError, UnicodeError, TypeError):
            continue
        if isinstance(key, ec.EllipticCurvePublicKey) and isinstance(key.curve, ec.SECP256R1):
            keys[identifier] = key
    return keys


class PublishedKeys:
    """GitHub's signing keys by identifier, cached in the process (PyJWKClient's shape)."""

    def __init__(self, fetch: Callable[[], Any], clock: Callable[[], float] = monotonic):
        """`fetch` answers the published list, parsed (see `fetch_key_list`)."""
        self._fetch = fetch
        self._clock = clock
        self._keys: dict[str, Any] = {}
        self._fetched_at: float | None = None
        self._lock = threading.Lock()

    def _refresh(self) -> None:
        try:
            self._keys = parse_key_list(self._fetch())
        except FetchRefused:
            raise KeyListUnavailable("the key list could not be fetched") from None
        self._fetched_at = self._clock()

    def key(self, identifier: str) -> Any | None:
        """The key, or None when the (refreshed) list does not name it."""
        with self._lock:
            now = self._clock()
            stale = self._fetched_at is None or now - self._fetched_at >= CACHE_SECONDS
            may_refetch = self._fetched_at is None or now - self._fetched_at >= REFETCH_SECONDS
            if stale or (identifier not in self._keys and may_refetch):
                self._refresh()
            return self._keys.get(identifier)


def fetch_key_list(url: str, local_mode: bool) -> Any:
    """GitHub's published key list at `url`, parsed; FetchRefused if it cannot be had."""
    return SafeFetcher(local_mode, max_bytes=KEY_LIST_MAX_BYTES).fetch_json(url).body


def verify(keys: PublishedKeys, identifier: str | None, signature: str | None, body: bytes) -> bool:
    """True when `signature` (base64 DER) over `body` verifies with the named published key.

    Raises KeyListUnavailable when the keys cannot be had: the caller answers 503, never a
    verdict it could not check.
    """
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import ec

    if not identifier or not signature or len(identifier) > 256 or len(signature) > 512:
        return False
    try:
        der = base64.b64decode(signature.strip(), validate=True)
    except (binascii.Error, ValueError):
        return False
    key = keys.key(identifier.strip())
    if key is None:
        return False
    try:
        key.verify(der, body, ec.ECDSA(hashes.SHA256()))
    except (InvalidSignature, ValueError):
        return False
    return True


@dataclass(frozen=True)
class ReportedToken:
    token: str = field(repr=False)
    type: str
    url: str | None
    source: str | None
