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
from chalicelib.clock import epoch, rfc3339
from chalicelib.hashing import hash_secret
from chalicelib.table import (
    EXISTS,
    TTL_ATTRIBUTE,
    get_consistent,
    put_if_absent,
    to_item,
    update,
    write_once,
)

CODE_LIFETIME = timedelta(seconds=60)
KEPT_FOR_REUSE_DETECTION = timedelta(hours=1)
MAX_CODE_LENGTH = 64


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

    def __repr__(self) -> str:
        return f"AuthorizationCode(client_id={self.client_id!r}, used={self.used!r})"


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
        item = to_item(
            {
                "clientId": client_id,
                "redirectUri": redirect_uri,
                "codeChallenge": code_challenge,
                "resource": resource,
                "scope": scope,
                "userId": user_id,
                "workspaceId": workspace_id,
                "issuedAt": rfc3339(now),
                "expiresAt": epoch(now + CODE_LIFETIME),
                TTL_ATTRIBUTE: epoch(now + KEPT_FOR_REUSE_DETECTION),
            }
        )
        item.update(items.oauth_code(hash_secret(code)))
        return code, put_if_absent(self._table, item)

    def find(self, code: str) -> AuthorizationCode | None:
        """The stored code (used or not, expired or not), or None."""
        if not code or len(code) > MAX_CODE_LENGTH:
            return None
        digest = hash_secret(code)
        values = get_consistent(self._client, self._table, items.oauth_code(digest))
        if values is None:
            return None
        return AuthorizationCode(
            digest=digest,
            client_id=values["clientId"],
            redirect_uri=values["redirectUri"],
            code_challenge=values["codeChallenge"],
            resource=values["resource"],
            scope=values["scope"],
            user_id=values["userId"],
            workspace_id=values["workspaceId"],
            expires_at=int(values["expiresAt"]),
            used="usedAt" in values,
            grant_id=values.get("grantId"),
        )

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
