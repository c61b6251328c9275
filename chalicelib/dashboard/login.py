"""DASHBOARD_LOGIN: which OpenID Connect provider the dashboard signs people in with.

A JSON object `{"issuer", "clientId"}` (and `"tokenEndpoint"` when the provider's token
endpoint is not on the issuer's origin). The dashboard's ID tokens are exchanged at
`/v1/auth/exchange`, so the issuer must also be trusted there: an entry of TRUSTED_ISSUERS
with that issuer and the client id as its audience. Checked here, where the mismatch can be
named, rather than after a person has already signed in at the provider.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import urlsplit

from chalicelib.config import TrustedIssuer

_FIELDS = {"issuer", "clientId"}
_OPTIONAL_FIELDS = {"tokenEndpoint"}
_LOOPBACK_HOSTS = {"127.0.0.1", "localhost", "::1"}


@dataclass(frozen=True)
class DashboardLogin:
    issuer: str
    client_id: str
    token_endpoint: str | None = None

    def connect_origins(self) -> tuple[str, ...]:
        """The origins the page fetches from at sign-in (discovery, token endpoint)."""
        origins = [origin(self.issuer)]
        if self.token_endpoint is not None and origin(self.token_endpoint) not in origins:
            origins.append(origin(self.token_endpoint))
        return tuple(origins)

    def resource(self) -> dict[str, str]:
        body = {"issuer": self.issuer, "clientId": self.client_id}
        if self.token_endpoint is not None:
            body["tokenEndpoint"] = self.token_endpoint
        return body


def origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def _endpoint(value: object, local_mode: bool) -> str:
    if not isinstance(value, str) or value != value.strip():
        raise ValueError("DASHBOARD_LOGIN.tokenEndpoint must be a URL")
    parts = urlsplit(value)
    plain_loopback = parts.scheme == "http" and local_mode and parts.hostname in _LOOPBACK_HOSTS
    if not (parts.scheme == "https" or plain_loopback) or not parts.hostname:
        raise ValueError(
            "DASHBOARD_LOGIN.tokenEndpoint must use https (http only for loopback in LOCAL_MODE)"
        )
    if parts.query or parts.fragment:
        raise ValueError("DASHBOARD_LOGIN.tokenEndpoint must not have a query or a fragment")
    return value


def parse_dashboard_login(
    text: str, trusted: Iterable[TrustedIssuer], local_mode: bool
) -> DashboardLogin | None:
    """The configured provider, None when unset (no sign-in), or ValueError naming the fault."""
    if not text.strip():
        return None
    try:
        entry = json.loads(text)
    except ValueError:
        raise ValueError("DASHBOARD_LOGIN is not valid JSON") from None
    if not isinstance(entry, dict) or not _FIELDS <= set(entry) <= _FIELDS | _OPTIONAL_FIELDS:
        raise ValueError(
            'DASHBOARD_LOGIN must be a JSON object {"issuer", "clientId"} '
            '(and optionally "tokenEndpoint")'
        )
    issuer, client_id = entry["issuer"], entry["clientId"]
    if not isinstance(client_id, str) or not client_id.strip():
        raise ValueError("DASHBOARD_LOGIN.clientId must be a non-empty string")
    # The exchange's own list decides which issuers are acceptable (https, or a loopback
    # development issuer in local mode); the dashboard can only pick one of them.
    if not any(t.issuer == issuer and t.audience == client_id for t in trusted):
        raise ValueError(
            "DASHBOARD_LOGIN names an issuer and client id that TRUSTED_ISSUERS does not trust "
            "(it needs an entry with that issuer and the client id as its audience)"
        )
    token_endpoint = entry.get("tokenEndpoint")
    return DashboardLogin(
        issuer=issuer,
        client_id=client_id,
        token_endpoint=None if token_endpoint is None else _endpoint(token_endpoint, local_mode),
    )
