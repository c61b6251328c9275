"""The identity headers, `Authorization`, `X-Workspace-Id` and `DPoP`, and the caller's
origin, read in one place for the routes (`api/edge.py`) and the data-plane authorizer
(`decisions/authorizer.py`).

Both read the API Gateway event. Names match without regard to case, and every copy counts:
API Gateway keeps each copy of a repeated header in `multiValueHeaders` (`headers` holds only
one of them). A header sent twice is ambiguous (a downstream reader might take the other copy
than the one checked), so both refuse it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

from chalicelib.access.principal import Origin

AUTHORIZATION = "authorization"
WORKSPACE = "x-workspace-id"
DPOP = "dpop"  # RFC 9449: the proof that comes with a credential bound to a key pair
# As much of a user agent as a request's origin keeps (audit events record it): the header
# is the caller's to make as long as API Gateway lets it.
USER_AGENT_LIMIT = 512


class Sent(NamedTuple):
    """One identity header: its value when sent once, and how many copies came."""

    value: str | None = None
    copies: int = 0


class IdentityHeaders(NamedTuple):
    authorization: Sent
    workspace: Sent
    dpop: Sent = Sent()

    def proof(self) -> str | None:
        """The DPoP proof, when exactly one came (RFC 9449 §4.3: more than one is refused)."""
        return self.dpop.value if self.dpop.copies == 1 else None


def identity_headers(event: Mapping[str, Any]) -> IdentityHeaders:
    found: dict[str, list[str]] = {AUTHORIZATION: [], WORKSPACE: [], DPOP: []}
    multi = event.get("multiValueHeaders")
    if multi:
        for name, copies in multi.items():
            if name.lower() in found:
                found[name.lower()].extend(copies or ())
    else:
        for name, value in (event.get("headers") or {}).items():
            if name.lower() in found:
                found[name.lower()].append(value)

    def sent(copies: list[str]) -> Sent:
        return Sent(copies[0] if len(copies) == 1 else None, len(copies))

    return IdentityHeaders(sent(found[AUTHORIZATION]), sent(found[WORKSPACE]), sent(found[DPOP]))


def origin(event: Mapping[str, Any]) -> Origin:
    """The caller's address and user agent as API Gateway saw them
    (`requestContext.identity`, never a header the caller writes for the address): what a
    key's allow-list is checked against and an audit event records. The user agent falls back
    to its header (the local server names no identity), and is cut to USER_AGENT_LIMIT."""
    seen = (event.get("requestContext") or {}).get("identity") or {}
    source_ip, user_agent = seen.get("sourceIp"), seen.get("userAgent")
    if not isinstance(user_agent, str) or not user_agent:
        headers = event.get("headers") or {}
        user_agent = next(
            (value for name, value in headers.items() if name.lower() == "user-agent"), None
        )
    return Origin(
        source_ip if isinstance(source_ip, str) else None,
        user_agent[:USER_AGENT_LIMIT] if isinstance(user_agent, str) else None,
    )
