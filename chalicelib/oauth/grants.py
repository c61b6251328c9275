"""Whether an MCP grant is still in force, judged from its refresh family item (which the
resolver reads together with the membership, in one round trip per MCP token).

A grant is a refresh-token family (chalicelib/sessions/refresh.py) bound to a client, a resource
and a workspace; its access tokens name it in `sid`. Revoking the family (the user, a reused
code, a reused refresh token) refuses its access tokens on the very next request.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from chalicelib.clock import epoch
from chalicelib.sessions.refresh import GRANT_CLIENT
from chalicelib.table import TTL_ATTRIBUTE


def in_force(family: dict[str, Any] | None, now: datetime) -> bool:
    """The grant's family as read (None: gone) still grants access at `now`."""
    if family is None or GRANT_CLIENT not in family or family.get("revokedAt"):
        return False
    # DynamoDB deletes expired items lazily: a family past its TTL is gone.
    return int(family.get(TTL_ATTRIBUTE, 0)) > epoch(now)
