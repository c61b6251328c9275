"""DASHBOARD_LOGIN: the OpenID Connect provider the dashboard signs people in at.

A JSON object `{"issuer", "clientId"}` (and `"tokenEndpoint"` when the provider's token
endpoint is not on the issuer's origin), read by the configuration's one login-provider
parser: the issuer must be trusted at `/v1/auth/exchange` (an entry of TRUSTED_ISSUERS with
the client id as its audience), where the dashboard's ID tokens go. Checked when the
dashboard is asked for, where the mismatch can be named, rather than after a person has
already signed in at the provider, and so that a mistake here cannot stop the API.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import urlsplit

from chalicelib.config import TrustedIssuer, parse_login_provider

_ENDPOINTS = frozenset({"tokenEndpoint"})


@dataclass(frozen=True)
class DashboardLogin:
    issuer: str
    client_id: str
    token_endpoint: str | None = None

    def connect_origins(self) -> tuple[str, ...]:
        """The origins the page fetches from at sign-in (discovery, token endpoint)."""
        origins = [url_origin(self.issuer)]
        if self.token_endpoint is not None and url_origin(self.token_endpoint) not in origins:
            origins.append(url_origin(self.token_endpoint))
        return tuple(origins)

    def resource(self) -> dict[str, str]:
        body = {"issuer": self.issuer, "clientId": self.client_id}
        if self.token_endpoint is not None:
            body["tokenEndpoint"] = self.token_endpoint
        return body


def url_origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def parse_dashboard_login(
    text: str, trusted: Iterable[TrustedIssuer], local_mode: bool
) -> DashboardLogin | None:
    """The configured provider, None when unset (no sign-in), or ValueError naming the fault."""
    provider = parse_login_provider(text, local_mode, trusted, "DASHBOARD_LOGIN", _ENDPOINTS)
    if provider is None:
        return None
    # One rule the dashboard adds to the shared parser's (kept as it was): the page posts to
    # its token endpoint exactly as configured, which takes no query.
    if provider.token_endpoint is not None and urlsplit(provider.token_endpoint).query:
        raise ValueError("DASHBOARD_LOGIN.tokenEndpoint must not have a query or a fragment")
    return DashboardLogin(provider.issuer, provider.client_id, provider.token_endpoint)
