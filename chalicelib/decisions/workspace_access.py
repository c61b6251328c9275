"""Access to the workspace a management route names in its path (`/v1/workspaces/{id}/…`):
one rule, with one answer for every such route.

A workspace id that names no workspace (malformed or not) and a workspace the caller is not
a member of get the same 404 `not_found`: whether a workspace exists is not a non-member's to
learn. A member who is not the owner, on an owner-only action, gets 403 `owner_required`.

The data plane, and a key created with a `workspaceId`, answer a non-member 403
`not_a_member` instead (`resolution.py`): there the caller names a workspace to act in, as
its own, and is told why it may not.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from chalicelib import errors, ids
from chalicelib.access.principal import Principal, Refusal
from chalicelib.errors import Problem
from chalicelib.workspaces.model import Workspace

NO_SUCH_WORKSPACE = Refusal(errors.NOT_FOUND, "No such workspace.")


class KnowsMembers(Protocol):
    """The two reads the rule takes (`workspaces/store.py`'s `WorkspaceStore`)."""

    def is_member(self, workspace_id: str, user_id: str) -> bool: ...

    def get(self, workspace_id: str) -> Workspace | None: ...


@dataclass(frozen=True)
class WorkspaceAccess:
    """What an operation on a workspace needs of its caller: to be a member (`MEMBERS`), or
    its owner (`owner_only`, with the detail of the 403 saying what only the owner does)."""

    owner_only: bool = False
    detail: str | None = None

    @property
    def problems(self) -> tuple[Problem, ...]:
        """The refusals it may answer (the operation's OpenAPI entry lists them)."""
        if self.owner_only:
            return (errors.NOT_FOUND, errors.OWNER_REQUIRED)
        return (errors.NOT_FOUND,)


MEMBERS = WorkspaceAccess()


def owner_only(detail: str) -> WorkspaceAccess:
    return WorkspaceAccess(owner_only=True, detail=detail)


def workspace_access(
    workspaces: KnowsMembers, principal: Principal, workspace_id: str, access: WorkspaceAccess
) -> Workspace | Refusal:
    """The workspace `workspace_id` names, if `principal` may act on it as `access` says; else
    the refusal (a result: only a broken dependency raises)."""
    if not ids.is_workspace_id(workspace_id):
        return NO_SUCH_WORKSPACE
    if not workspaces.is_member(workspace_id, principal.user_id):
        return NO_SUCH_WORKSPACE
    workspace = workspaces.get(workspace_id)
    if workspace is None:
        return NO_SUCH_WORKSPACE
    if access.owner_only and workspace.owner_id != principal.user_id:
        return Refusal(errors.OWNER_REQUIRED, access.detail)
    return workspace
