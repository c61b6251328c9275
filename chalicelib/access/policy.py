"""Who may manage keys and workspaces (spec §5.3 rules 4–5; decisions.md)."""

from __future__ import annotations

from chalicelib.access.principal import Principal, Refusal
from chalicelib.access.scopes import ADMIN, WORKSPACE_ADMIN
from chalicelib.errors import ServiceError, forbidden


def require_manager(principal: Principal) -> None:
    """A user token, or an admin key holding `workspace:admin`; a workspace key never."""
    if principal.credential == "user_token":
        return
    if principal.category == ADMIN and WORKSPACE_ADMIN in principal.scopes:
        return
    raise forbidden(
        "insufficient_scope",
        "Managing keys and workspaces needs a user token or an admin key with workspace:admin.",
    )


def refused(refusal: Refusal) -> ServiceError:
    """A resolution refusal (resolution.py holds each one once) as the error to raise."""
    return ServiceError(refusal.status, refusal.code, refusal.detail)
