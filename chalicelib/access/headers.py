"""The identity headers, `Authorization`, `X-Workspace-Id` and `DPoP`, read in one place for the
routes (`api/edge.authenticate`) and the data-plane authorizer (`decisions/authorizer.py`).

Both read the API Gateway event. Names match without regard to case, and every copy counts:
API Gateway keeps each copy of a repeated header in `multiValueHeaders` (`headers` holds only
one of them). A header sent twice is ambiguous (a downstream reader might take the other copy
than the one checked), so both refuse it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

AUTHORIZATION = "authorization"
WORKSPACE = "x-workspace-id"
DPOP = "dpop"  # RFC 9449: the proof that comes with a credential bound to a key pair


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
