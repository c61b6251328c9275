"""A service client's published keys (its `jwksUri`), fetched SSRF-safely.

The same cache as a trust policy's issuer (workloads/issuers.py): at most one fetch per URI
per REFRESH_COOLDOWN (30 s), whatever it gave, one fetch in flight per URI, a made-up `kid`
answered from the set fetched moments ago. Only the step differs: the URI is the key set
itself, with no discovery document before it.
"""

from __future__ import annotations

from chalicelib.fetch import FetchRefused
from chalicelib.workloads.issuers import IssuerKeys, _Cached, _lifetime


class ClientKeys(IssuerKeys):
    def _fetched(self, issuer: str, now: float) -> _Cached:
        jwks = self._fetcher.fetch_json(issuer)  # `issuer` is the client's jwksUri here
        found = jwks.body.get("keys") if isinstance(jwks.body, dict) else None
        if not isinstance(found, list):
            raise FetchRefused("its JWKS has no list of keys")
        keys = {
            jwk["kid"]: jwk
            for jwk in found
            if isinstance(jwk, dict) and isinstance(jwk.get("kid"), str)
        }
        return _Cached(keys, now + _lifetime(jwks.max_age), now)
