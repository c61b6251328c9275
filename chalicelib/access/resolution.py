"""Request resolution: `Authorization` + `X-Workspace-Id` to a principal, or a refusal.

Spec §5.3 rules 1–8 live here once. The service's routes and the data-plane authorizer both
call `Resolver.resolve`. One straight sequence: parse, hash, one strongly consistent read,
ordered checks, then (when a workspace is named or bound) one membership read. A bad
credential is a `Refusal` (a result); only a broken dependency raises.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from chalicelib.access.principal import Principal, Refusal
from chalicelib.access.scopes import ALL_SCOPES, WORKSPACE
from chalicelib.clock import Clock
from chalicelib.ids import is_workspace_id
from chalicelib.keys.plaintext import looks_like_key, parse_key
from chalicelib.keys.store import KeyStore
from chalicelib.workspaces.store import WorkspaceStore

if TYPE_CHECKING:  # the JWT path is imported only when a JWT arrives
    from chalicelib.login.access_tokens import TokenVerifier

# Workspace ids we could ever have issued; anything else names no workspace we know, so it
# is refused as a non-membership without a read (and never reaches DynamoDB as a key).
_WORKSPACE_HEADER = re.compile(r"^[A-Za-z0-9_-]{1,64}$")

MISSING = Refusal(401, "missing_credentials", "Send 'Authorization: Bearer <API key or token>'.")
INVALID = Refusal(401, "invalid_credentials", "The credential is not valid.")
EXPIRED = Refusal(401, "expired_credentials", "The credential has expired.")
REVOKED = Refusal(401, "revoked_credentials", "The credential has been revoked.")
# A key pasted as the whole header is the commonest first mistake: say what to send.
SCHEME_MISSING = Refusal(
    401, "invalid_credentials", "Send the key with its scheme: 'Authorization: Bearer <key>'."
)
MISMATCH = Refusal(
    403, "workspace_mismatch", "This workspace key is bound to another workspace."
)
NOT_A_MEMBER = Refusal(403, "not_a_member", "The caller is not a member of this workspace.")
# Checked once the credential is known good: a typo in X-Workspace-Id is a bad request, not a
# refusal that sends the caller looking for a membership problem.
INVALID_WORKSPACE_ID = Refusal(
    400, "invalid_workspace_id", "X-Workspace-Id must be a workspace id (ws_ and 26 characters)."
)


def bearer_token(authorization: str | None) -> str | Refusal:
    if authorization is None or not authorization.strip():
        return MISSING
    scheme, _, token = authorization.strip().partition(" ")
    token = token.strip()
    if not token and looks_like_key(scheme):
        return SCHEME_MISSING
    if scheme.lower() != "bearer" or not token or " " in token:
        return INVALID
    return token


class Resolver:
    def __init__(
        self,
        keys: KeyStore,
        workspaces: WorkspaceStore,
        clock: Clock,
        verifier: TokenVerifier | None = None,
    ):
        self._keys = keys
        self._workspaces = workspaces
        self._clock = clock
        self._verifier = verifier

    def resolve(self, authorization: str | None, workspace_id: str | None) -> Principal | Refusal:
        token = bearer_token(authorization)
        if isinstance(token, Refusal):
            return token
        if workspace_id is not None:
            workspace_id = workspace_id.strip() or None
        if looks_like_key(token):
            principal = self._resolve_key(token, workspace_id)
        else:
            principal = self._resolve_user_token(token, workspace_id)
        if isinstance(principal, Refusal):
            return principal
        return self._check_membership(principal)

    def _resolve_key(self, token: str, workspace_id: str | None) -> Principal | Refusal:
        parsed = parse_key(token)
        if parsed is None:  # checksum or shape wrong: no read needed
            return INVALID
        record = self._keys.find_by_hash(parsed.digest)
        now = self._clock.now()
        if record is None or record.gone(now):
            return INVALID
        status = record.status(now)
        if status == "revoked":  # rule 7: effective on the next request
            return REVOKED
        if status == "expired":  # rule 8
            return EXPIRED
        if workspace_id is not None and not is_workspace_id(workspace_id):
            return INVALID_WORKSPACE_ID
        if record.category == WORKSPACE:
            # Rules 1 and 2: a bound key is never retargeted.
            if workspace_id is not None and workspace_id != record.workspace_id:
                return MISMATCH
            workspace_id = record.workspace_id
        return Principal(
            user_id=record.owner_id,
            credential="api_key",
            scopes=frozenset(record.scopes),
            workspace_id=workspace_id,
            key_id=record.id,
            category=record.category,
        )

    def _resolve_user_token(self, token: str, workspace_id: str | None) -> Principal | Refusal:
        from chalicelib.login.access_tokens import TokenRejected, looks_like_jwt

        if self._verifier is None or not looks_like_jwt(token):
            return INVALID
        try:
            claims = self._verifier.verify(token)
        except TokenRejected as rejected:
            return EXPIRED if rejected.expired else INVALID
        if workspace_id is not None and not is_workspace_id(workspace_id):
            return INVALID_WORKSPACE_ID
        return Principal(
            user_id=claims["sub"],
            credential="user_token",
            scopes=frozenset(ALL_SCOPES),  # a user token carries every scope of its user
            workspace_id=workspace_id,
        )

    def _check_membership(self, principal: Principal) -> Principal | Refusal:
        """Rule 3: the caller (the key's owner) must be a member of the resolved workspace."""
        workspace_id = principal.workspace_id
        if workspace_id is None:
            return principal
        if not _WORKSPACE_HEADER.match(workspace_id):
            return NOT_A_MEMBER
        if not self._workspaces.is_member(workspace_id, principal.user_id):
            return NOT_A_MEMBER
        return principal
