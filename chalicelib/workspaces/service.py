"""Workspaces and membership (decisions.md "Workspaces and membership")."""

from __future__ import annotations

from typing import Protocol

from chalicelib import errors, ids
from chalicelib.access.policy import require_manager
from chalicelib.access.principal import Principal
from chalicelib.clock import Clock
from chalicelib.workspaces.model import Member, Workspace
from chalicelib.workspaces.store import WorkspaceStore


class KnowsUsers(Protocol):
    def exists(self, user_id: str) -> bool: ...


class WorkspaceService:
    def __init__(self, workspaces: WorkspaceStore, clock: Clock, users: KnowsUsers):
        self._workspaces = workspaces
        self._clock = clock
        self._users = users

    def create(self, principal: Principal, name: str) -> Workspace:
        require_manager(principal)
        now = self._clock.now()
        workspace = Workspace(ids.new_workspace_id(now), name, principal.user_id, now)
        self._workspaces.create(workspace)
        return workspace

    def list_mine(self, principal: Principal) -> list[Workspace]:
        require_manager(principal)
        return self._workspaces.list_for_user(principal.user_id)

    def _workspace_of_member(self, principal: Principal, workspace_id: str) -> Workspace:
        require_manager(principal)
        if not ids.is_workspace_id(workspace_id):
            raise errors.INVALID_WORKSPACE_ID.error("A workspace id is ws_ and 26 characters.")
        if not self._workspaces.is_member(workspace_id, principal.user_id):
            raise errors.NOT_A_MEMBER.error()
        workspace = self._workspaces.get(workspace_id)
        if workspace is None:
            raise errors.NOT_A_MEMBER.error()
        return workspace

    def _owned_workspace(self, principal: Principal, workspace_id: str) -> Workspace:
        workspace = self._workspace_of_member(principal, workspace_id)
        if workspace.owner_id != principal.user_id:
            raise errors.OWNER_REQUIRED.error()
        return workspace

    def members(self, principal: Principal, workspace_id: str) -> list[Member]:
        self._workspace_of_member(principal, workspace_id)
        return self._workspaces.members(workspace_id)

    def add_member(
        self, principal: Principal, workspace_id: str, user_id: str
    ) -> tuple[Member, bool]:
        workspace = self._owned_workspace(principal, workspace_id)
        if not ids.is_user_id(user_id):
            raise errors.INVALID_USER_ID.error()
        if not self._users.exists(user_id):
            # A member who can never sign in would only be a placeholder for a typo.
            raise errors.USER_NOT_FOUND.error()
        now = self._clock.now()
        added = self._workspaces.add_member(workspace, user_id, now)
        member = next(
            (m for m in self._workspaces.members(workspace_id) if m.user_id == user_id), None
        )
        return member or Member(workspace_id, user_id, "member", now), added

    def remove_member(self, principal: Principal, workspace_id: str, user_id: str) -> None:
        workspace = self._owned_workspace(principal, workspace_id)
        if user_id == workspace.owner_id:
            raise errors.OWNER_CANNOT_LEAVE.error()
        if not ids.is_user_id(user_id) or not self._workspaces.remove_member(workspace_id, user_id):
            raise errors.NOT_FOUND.error("This user is not a member of the workspace.")
