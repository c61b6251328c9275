"""Whether an MCP grant is still in force: the read the authorizer makes per MCP token.

A grant is a refresh-token family (chalicelib/sessions/refresh.py) bound to a client, a resource
and a workspace; its access tokens name it in `sid`. Revoking the family (the user, a reused
code, a reused refresh token) refuses its access tokens on the very next request.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from chalicelib import items
from chalicelib.clock import epoch
from chalicelib.sessions.refresh import GRANT_CLIENT
from chalicelib.table import TTL_ATTRIBUTE, get_consistent


class GrantReader:
    def __init__(self, client: Any, table_name: str):
        self._client = client
        self._table = table_name

    def is_active(self, grant_id: str, now: datetime) -> bool:
        """One strongly consistent read; DependencyUnavailable if DynamoDB fails."""
        family = get_consistent(self._client, self._table, items.refresh_family(grant_id))
        if family is None or GRANT_CLIENT not in family or family.get("revokedAt"):
            return False
        # DynamoDB deletes expired items lazily: a family past its TTL is gone.
        return int(family.get(TTL_ATTRIBUTE, 0)) > epoch(now)
