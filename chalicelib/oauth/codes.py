"""Authorization codes: 60 seconds, single use, bound to client, redirect URI, PKCE challenge,
resource, user, workspace and scope. Stored only as the SHA-256 of the code.

A used code is kept (until its TTL, an hour) with the grant it issued, so that presenting it
again revokes that grant (RFC 6749 §4.1.2): whoever replays a code gets nothing, and what the
first redemption obtained stops working.

Items (see `items.py`):
  OAUTHCODE#<sha256>  CODE   clientId, redirectUri, codeChallenge, resource, scope, userId,
                             workspaceId, expiresAt, usedAt, grantId, ttl
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from chalicelib import items
from chalicelib.clock import epoch, parse_rfc3339, rfc3339
from chalicelib.hashing import hash_secret
from chalicelib.table import (
    EXISTS,
    TTL_ATTRIBUTE,
    Attribute,
    Shape,
    get_consistent,
    put_if_absent,
    to_item,
    update,
    write_once,
)

CODE_LIFETIME = timedelta(seconds=60)
KEPT_FOR_REUSE_DETECTION = timedelta(hours=1)
MAX_CODE_LENGTH = 64


def _present(value: Any) -> bool:
    return True


@dataclass(frozen=True)
class AuthorizationCode:
    digest: str
    client_id: str
    redirect_uri: str
    code_challenge: str
    resource: str
    scope: str
    user_id: str
    workspace_id: str
    expires_at: int  # epoch seconds
    used: bool = False
    grant_id: str | None = None
    issued_at: datetime | None = None

    def __repr__(self) -> str:
        return f"AuthorizationCode(client_id={self.client_id!r}, used={self.used!r})"


CODE_SHAPE = Shape(
    AuthorizationCode,
    [
        Attribute("clientId", "client_id"),
        Attribute("redirectUri", "redirect_uri"),
        Attribute("codeChallenge", "code_challenge"),
        Attribute("resource"),
        Attribute("scope"),
        Attribute("userId", "user_id"),
        Attribute("workspaceId", "workspace_id"),
        Attribute("issuedAt", "issued_at", rfc3339, parse_rfc3339),
        Attribute("expiresAt", "expires_at", read=int),
        # Set by `consume` and `spend`, never by the code's own write.
        Attribute("usedAt", "used", read=_present, written=False, missing=False),
        Attribute("grantId", "grant_id", written=False),
    ],
)


class CodeStore:
    def __init__(self, client: Any, table_name: str):
        self._client = client
        self._table = table_name

    def new(
        self,
        *,
        client_id: str,
        redirect_uri: str,
        code_challenge: str,
        resource: str,
        scope: str,
        user_id: str,
        workspace_id: str,
        now: datetime,
    ) -> tuple[str, dict[str, Any]]:
        """(the code, returned once; the write that stores its hash)."""
        code = secrets.token_urlsafe(32)
        digest = hash_secret(code)
        issued = AuthorizationCode(
            digest=digest,
            client_id=client_id,
            redirect_uri=redirect_uri,
            code_challenge=code_challenge,
            resource=resource,
            scope=scope,
            user_id=user_id,
            workspace_id=workspace_id,
            expires_at=epoch(now + CODE_LIFETIME),
            issued_at=now,
        )
        item = to_item(
            {**CODE_SHAPE.values(issued), TTL_ATTRIBUTE: epoch(now + KEPT_FOR_REUSE_DETECTION)}
        )
        item.update(items.oauth_code(digest))
        return code, put_if_absent(self._table, item)

    def find(self, code: str) -> AuthorizationCode | None:
        """The stored code (used or not, expired or not), or None."""
        if not code or len(code) > MAX_CODE_LENGTH:
            return None
        digest = hash_secret(code)
        values = get_consistent(self._client, self._table, items.oauth_code(digest))
        if values is None:
            return None
        return CODE_SHAPE.record(values, digest=digest)

    def consume(self, code: AuthorizationCode, grant_id: str, now: datetime) -> dict[str, Any]:
        """The write marking the code used by `grant_id` (a grant's commit point): of two
        redemptions at once, exactly one passes this condition."""
        return update(
            self._table,
            items.oauth_code(code.digest),
            "SET #usedAt = :now, #grantId = :grant",
            f"{EXISTS} AND attribute_not_exists(#usedAt)",
            {"now": rfc3339(now) or "", "grant": grant_id},
        )

    def spend(self, code: AuthorizationCode, now: datetime) -> None:
        """Marks a code used without issuing anything (a failed redemption): a code is
        presented once, right or wrong."""
        spent = update(
            self._table,
            items.oauth_code(code.digest),
            "SET #usedAt = if_not_exists(#usedAt, :now)",
            EXISTS,
            {"now": rfc3339(now) or ""},
        )
        write_once(self._client, spent)  # False: the code is gone already
