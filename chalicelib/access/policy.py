"""Who may manage keys and workspaces (resolution rules 4–5, docs/architecture.md)."""

from __future__ import annotations

from chalicelib.access.principal import Principal
from chalicelib.access.scopes import ADMIN, WORKSPACE_ADMIN
from chalicelib.errors import INSUFFICIENT_SCOPE


def require_manager(principal: Principal) -> None:
    """A user token, or an admin key holding `workspace:admin`; a workspace key never."""
    if principal.credential == "user_token":
        return
    if principal.category == ADMIN and WORKSPACE_ADMIN in principal.scopes:
        return
    raise INSUFFICIENT_SCOPE.error(
        "Managing keys and workspaces needs a user token or an admin key with workspace:admin."
    )
