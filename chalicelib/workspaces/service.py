"""Workspaces and membership (decisions.md "Workspaces and membership")."""

from __future__ import annotations

import hmac

from chalicelib import errors, ids
from chalicelib.access.policy import require_manager
from chalicelib.access.principal import Principal
from chalicelib.clock import Clock
from chalicelib.errors import DependencyUnavailable
from chalicelib.idempotency import IdempotencyStore, IdempotentRequest
from chalicelib.workspaces.model import Member, Workspace
from chalicelib.workspaces.store import WorkspaceNotCreated, WorkspaceStore


def _created_maybe(idempotent: IdempotentRequest | None) -> str:
    if idempotent is not None:
        return (
            "The workspace may have been created. Retry with the same Idempotency-Key: "
            "you get it."
        )
    return (
        "The workspace may have been created: list your workspaces (GET /v1/workspaces) "
        "before creating another, or send an Idempotency-Key to make creation safe to retry."
    )


class WorkspaceService:
    def __init__(self, workspaces: WorkspaceStore, idempotency: IdempotencyStore, clock: Clock):
        self._workspaces = workspaces
        self._idempotency = idempotency
        self._clock = clock

    def create(
        self, principal: Principal, name: str, idempotent: IdempotentRequest | None = None
    ) -> tuple[Workspace, bool]:
        """The new workspace, and whether it is the answer to an earlier request with the
        same Idempotency-Key (then nothing was created)."""
        require_manager(principal)
        replayed = self._replay(idempotent)
        if replayed is not None:
            return replayed, True
        now = self._clock.now()
        workspace = Workspace(ids.new_workspace_id(now), name, principal.user_id, now)
        claim = self._idempotency.claim(idempotent, workspace.id, now) if idempotent else None
        try:
            self._workspaces.create(workspace, claim)
        except DependencyUnavailable as failure:
            raise DependencyUnavailable(failure.dependency, _created_maybe(idempotent)) from None
        except WorkspaceNotCreated:
            replayed = self._replay(idempotent)
            if replayed is None:
                raise DependencyUnavailable("DynamoDB", _created_maybe(idempotent)) from None
            return replayed, True
        return workspace, False

    def _replay(self, idempotent: IdempotentRequest | None) -> Workspace | None:
        if idempotent is None:
            return None
        record = self._idempotency.find(idempotent, self._clock.now())
        if record is None:
            return None
        if not hmac.compare_digest(record.fingerprint, idempotent.fingerprint):
            raise errors.IDEMPOTENCY_KEY_REUSED.error()
        workspace = self._workspaces.get(record.result_id)
        if workspace is None:  # the record outlived its workspace: never within 24 hours
            raise errors.NOT_FOUND.error(
                "The workspace this Idempotency-Key created no longer exists."
            )
        return workspace

    def list_mine(self, principal: Principal) -> list[Workspace]:
        require_manager(principal)
        return self._workspaces.list_for_user(principal.user_id)

    def _workspace_of_member(self, principal: Principal, workspace_id: str) -> Workspace:
        require_manager(principal)
        if not ids.is_workspace_id(workspace_id) or not self._workspaces.is_member(
            workspace_id, principal.user_id
        ):
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
