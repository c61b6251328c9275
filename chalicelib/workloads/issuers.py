"""A trust policy's issuer: its discovery document and signing keys, fetched SSRF-safely.

`{issuer}/.well-known/openid-configuration` names `jwks_uri`; both are fetched with
`fetch.SafeFetcher` (https only, public addresses only; loopback http in local mode), cached
for what their headers allow but never longer than MAX_CACHE (a key the issuer withdrew stops
verifying within that bound), and fetched again on an unknown `kid` at most once per
REFRESH_COOLDOWN per issuer, so a stream of made-up `kid`s cannot make us hammer an issuer.
The cache is its own small class on `time.monotonic()` (PyJWT's PyJWKClient's shape).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from chalicelib.errors import DependencyUnavailable
from chalicelib.fetch import FetchRefused, SafeFetcher
from chalicelib.logs import logger

MAX_CACHE = 3600.0  # seconds: the longest a discovery document or key set is reused
MIN_CACHE = 60.0  # seconds: even an answer marked no-store is reused this long
REFRESH_COOLDOWN = 30.0  # seconds between fetches forced by an unknown kid, per issuer
MAX_JWKS_BYTES = 64 * 1024  # GitHub's and Google's key sets are a few KiB
# The algorithms a workload token may be signed with, and the key type each needs.
ALGORITHMS = {"RS256": "RSA", "ES256": "EC"}


class UnknownKey(Exception):
    """No key of the issuer has this `kid`, even after a refresh (or one was too recent)."""


@dataclass
class _Cached:
    keys: dict[str, dict[str, Any]]  # kid -> JWK
    expires: float
    fetched: float


def _lifetime(max_age: int) -> float:
    return min(max(float(max_age), MIN_CACHE), MAX_CACHE)


class IssuerKeys:
    def __init__(self, fetcher: SafeFetcher, now: Callable[[], float] = time.monotonic):
        self._fetcher = fetcher
        self._now = now
        self._cache: dict[str, _Cached] = {}
        self._lock = threading.Lock()
        self.fetches = 0  # key-set fetches made (tests and the bench read it)

    def key(self, issuer: str, kid: str) -> dict[str, Any]:
        """The JWK with this `kid` that `issuer` publishes; UnknownKey if none;
        DependencyUnavailable when the issuer cannot be fetched or answers nonsense."""
        now = self._now()
        with self._lock:
            cached = self._cache.get(issuer)
        if cached is not None and cached.expires > now and kid in cached.keys:
            return cached.keys[kid]
        if cached is not None and cached.expires > now and now - cached.fetched < REFRESH_COOLDOWN:
            raise UnknownKey(kid)  # refreshed moments ago: a made-up kid gets no new fetch
        fresh = self._fetch(issuer, now)
        with self._lock:
            self._cache[issuer] = fresh
        if kid not in fresh.keys:
            raise UnknownKey(kid)
        return fresh.keys[kid]

    def _fetch(self, issuer: str, now: float) -> _Cached:
        self.fetches += 1
        try:
            discovery = self._fetcher.fetch_json(
                issuer.rstrip("/") + "/.well-known/openid-configuration"
            )
            document = discovery.body
            if not isinstance(document, dict) or document.get("issuer") != issuer:
                raise FetchRefused("its discovery document names another issuer")
            jwks_uri = document.get("jwks_uri")
            if not isinstance(jwks_uri, str):
                raise FetchRefused("its discovery document has no jwks_uri")
            jwks = self._fetcher.fetch_json(jwks_uri)
        except FetchRefused as refused:
            # The issuer is the policy owner's choice, not the caller's: a 503 that says why.
            logger.warning(
                "workload issuer unusable", extra={"issuer": issuer, "reason": refused.reason}
            )
            raise DependencyUnavailable("the workload's identity provider") from None
        found = jwks.body.get("keys") if isinstance(jwks.body, dict) else None
        if not isinstance(found, list):
            logger.warning("workload issuer JWKS unreadable", extra={"issuer": issuer})
            raise DependencyUnavailable("the workload's identity provider")
        keys = {
            jwk["kid"]: jwk
            for jwk in found
            if isinstance(jwk, dict) and isinstance(jwk.get("kid"), str)
        }
        lifetime = _lifetime(min(discovery.max_age, jwks.max_age))
        return _Cached(keys, now + lifetime, now)


def jwks_fetcher(local_mode: bool) -> SafeFetcher:
    return SafeFetcher(local_mode=local_mode, max_bytes=MAX_JWKS_BYTES)
