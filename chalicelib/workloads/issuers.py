"""A trust policy's issuer: its discovery document and signing keys, fetched SSRF-safely.

`{issuer}/.well-known/openid-configuration` names `jwks_uri`; both are fetched with
`fetch.SafeFetcher` (https only, public addresses only; loopback http in local mode), cached
for what their headers allow but never longer than MAX_CACHE (a key the issuer withdrew stops
verifying within that bound). An issuer is fetched at most once per REFRESH_COOLDOWN,
whatever the outcome: a made-up `kid` finds the key set fetched moments ago and gets no new
fetch, and a failure (an error answer, a timeout, nonsense) is remembered as long, every
exchange meanwhile answered 503 without a fetch. Any workspace owner names an issuer, and
exchanges need no credential: without that bound our service would be an amplifier of
requests towards a host of their choice, and an issuer that hangs would hold a worker on
every exchange. One fetch per issuer is in flight at a time; a request that finds one
waits for its outcome and shares it.
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
REFRESH_COOLDOWN = 30.0  # seconds between two fetches of an issuer, whatever the first gave
MAX_JWKS_BYTES = 64 * 1024  # GitHub's and Google's key sets are a few KiB
# The algorithms a workload token may be signed with, and the key type each needs.
ALGORITHMS = {"RS256": "RSA", "ES256": "EC"}


class UnknownKey(Exception):
    """No key of the issuer has this `kid`, even after a refresh (or one was too recent)."""


class UnusableKey(Exception):
    """The issuer's key with this `kid` is not one for the token's algorithm (the reason)."""


@dataclass
class _Cached:
    keys: dict[str, dict[str, Any]]  # kid -> JWK, as last fetched ({} before any success)
    expires: float  # until when `keys` may be used
    fetched: float  # when the issuer was last fetched, whatever it gave
    failed: bool = False  # whether that fetch failed


_UNUSABLE = "the workload's identity provider"


def _lifetime(max_age: int) -> float:
    return min(max(float(max_age), MIN_CACHE), MAX_CACHE)


class IssuerKeys:
    def __init__(self, fetcher: SafeFetcher, now: Callable[[], float] = time.monotonic):
        self._fetcher = fetcher
        self._now = now
        self._cache: dict[str, _Cached] = {}
        self._lock = threading.Lock()  # guards the two dicts
        self._fetching: dict[str, threading.Lock] = {}  # one fetch per issuer at a time
        self.fetches = 0  # issuer fetches made (tests and the bench read it)

    def key(self, issuer: str, kid: str, jwks_uri: str | None = None) -> dict[str, Any]:
        """The JWK with this `kid` that `issuer` publishes; UnknownKey if none;
        DependencyUnavailable when the issuer cannot be fetched or answers nonsense (or did
        so less than REFRESH_COOLDOWN ago). `jwks_uri`: the issuer's key set where it is
        configured (an enterprise IdP of ENTERPRISE_IDPS), not discovered."""
        source = issuer if jwks_uri is None else f"{issuer} {jwks_uri}"
        with self._lock:
            fetching = self._fetching.setdefault(source, threading.Lock())
        with fetching:  # a concurrent request for this issuer waits for its fetch, not a second
            now = self._now()
            with self._lock:
                cached = self._cache.get(source)
            if cached is not None and cached.expires > now and kid in cached.keys:
                return cached.keys[kid]
            if cached is None or now - cached.fetched >= REFRESH_COOLDOWN:
                cached = self._fetch(issuer, now, cached, jwks_uri)
                with self._lock:
                    self._cache[source] = cached
        if cached.expires > now and kid in cached.keys:
            return cached.keys[kid]
        if cached.failed:
            raise DependencyUnavailable(_UNUSABLE)
        raise UnknownKey(kid)  # fetched moments ago: a made-up kid gets no new fetch

    def verification_key(
        self, issuer: str, kid: str, algorithm: str, jwks_uri: str | None = None
    ) -> Any:
        """The public key that verifies `issuer`'s token signed with `algorithm` (one of
        ALGORITHMS, pinned by the caller) by the key `kid`: UnknownKey if not published,
        UnusableKey if that key is not one for the algorithm."""
        import jwt

        jwk = self.key(issuer, kid, jwks_uri)
        if jwk.get("kty") != ALGORITHMS[algorithm] or jwk.get("alg", algorithm) != algorithm:
            raise UnusableKey("its algorithm does not match its key")
        try:
            return jwt.PyJWK(jwk, algorithm).key
        except jwt.PyJWTError:
            raise UnusableKey("its signing key is not usable") from None

    def _fetch(
        self, issuer: str, now: float, previous: _Cached | None, jwks_uri: str | None
    ) -> _Cached:
        """The issuer's keys fetched now; on a failure, the keys of before (still usable
        until they expire) marked as failed now."""
        self.fetches += 1
        try:
            return self._fetched(issuer, now, jwks_uri)
        except FetchRefused as refused:
            # The issuer is the policy owner's choice, not the caller's: a 503 that says why.
            logger.warning(
                "workload issuer unusable", extra={"issuer": issuer, "reason": refused.reason}
            )
        if previous is None:
            return _Cached({}, now, now, failed=True)
        return _Cached(previous.keys, previous.expires, now, failed=True)

    def _fetched(self, issuer: str, now: float, jwks_uri: str | None) -> _Cached:
        max_age = int(MAX_CACHE)
        if jwks_uri is None:
            discovery = self._fetcher.fetch_json(
                issuer.rstrip("/") + "/.well-known/openid-configuration"
            )
            document = discovery.body
            if not isinstance(document, dict) or document.get("issuer") != issuer:
                raise FetchRefused("its discovery document names another issuer")
            jwks_uri = document.get("jwks_uri")
            if not isinstance(jwks_uri, str):
                raise FetchRefused("its discovery document has no jwks_uri")
            max_age = discovery.max_age
        jwks = self._fetcher.fetch_json(jwks_uri)
        found = jwks.body.get("keys") if isinstance(jwks.body, dict) else None
        if not isinstance(found, list):
            raise FetchRefused("its JWKS has no list of keys")
        keys = {
            jwk["kid"]: jwk
            for jwk in found
            if isinstance(jwk, dict) and isinstance(jwk.get("kid"), str)
        }
        lifetime = _lifetime(min(max_age, jwks.max_age))
        return _Cached(keys, now + lifetime, now)


def jwks_fetcher(local_mode: bool) -> SafeFetcher:
    return SafeFetcher(local_mode=local_mode, max_bytes=MAX_JWKS_BYTES)
