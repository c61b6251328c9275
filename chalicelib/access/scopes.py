"""Scopes per category (README, "API keys"), the one place that says which key may do what."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

DATA_PLANE_SCOPES: tuple[str, ...] = ("memory", "entities", "reasoning", "ontology", "skills")
WORKSPACE_ADMIN = "workspace:admin"
ALL_SCOPES: tuple[str, ...] = (*DATA_PLANE_SCOPES, WORKSPACE_ADMIN)

WORKSPACE = "workspace"
ADMIN = "admin"
CATEGORIES = (WORKSPACE, ADMIN)

SCOPES_BY_CATEGORY: dict[str, tuple[str, ...]] = {
    WORKSPACE: DATA_PLANE_SCOPES,
    ADMIN: ALL_SCOPES,
}

# The data-plane authorizer: the first path segment after /v1/ names the scope it needs.
SCOPE_BY_PATH_SEGMENT: dict[str, str] = {
    **{scope: scope for scope in DATA_PLANE_SCOPES},
    "workspaces": WORKSPACE_ADMIN,
}


# The memory service's MCP endpoint needs this scope at its gateway; its tools check the rest
# (the authorizer's context carries every scope the caller holds).
MCP_SCOPE = "memory"


def ordered(scopes: Iterable[str]) -> list[str]:
    """Scopes in their canonical order, so that answers are stable."""
    wanted = set(scopes)
    return [scope for scope in ALL_SCOPES if scope in wanted]


# What a workspace's trust policy or service client may grant: the workspace-key scopes.
WORKSPACE_SCOPES_RULE = (
    "scopes must be a non-empty subset of the workspace-key scopes: "
    + ", ".join(DATA_PLANE_SCOPES)
    + "."
)


def workspace_scopes(scopes: Sequence[str]) -> tuple[str, ...] | None:
    """`scopes` in their canonical order, when a non-empty subset of the workspace-key scopes, each
    named once; None otherwise (WORKSPACE_SCOPES_RULE)."""
    if not scopes or len(set(scopes)) != len(scopes) or not set(scopes) <= set(DATA_PLANE_SCOPES):
        return None
    return tuple(ordered(scopes))
