"""Managing a workspace's trust policies: owner only, at most TRUST_POLICY_LIMIT, each valid."""

from __future__ import annotations

from typing import Any

from chalicelib import errors, ids
from chalicelib.access.principal import Principal
from chalicelib.access.scopes import DATA_PLANE_SCOPES, ordered
from chalicelib.clock import Clock
from chalicelib.events import model as events
from chalicelib.events.log import EventLog
from chalicelib.workloads.model import (
    InvalidPolicy,
    TrustPolicy,
    check_audience,
    check_claims,
    check_issuer,
    check_lifetime,
    check_subject,
)
from chalicelib.workloads.store import LimitReached, TrustPolicyStore
from chalicelib.workspaces.model import Workspace
from chalicelib.workspaces.store import WorkspaceStore

SCOPES_RULE = (
    "scopes must be a non-empty subset of the workspace-key scopes: "
    + ", ".join(DATA_PLANE_SCOPES)
    + "."
)


class TrustPolicyService:
    def __init__(
        self,
        policies: TrustPolicyStore,
        workspaces: WorkspaceStore,
        events: EventLog,
        clock: Clock,
        local_mode: bool,
    ):
        self._policies = policies
        self._workspaces = workspaces
        self._events = events
        self._clock = clock
        self._local_mode = local_mode

    def owned(self, principal: Principal, workspace_id: str) -> Workspace:
        """The workspace, if the caller owns it: a member gets 403 `owner_required`, anyone
        else 404 (whether a workspace exists is not theirs to learn)."""
        if not ids.is_workspace_id(workspace_id):
            raise errors.NOT_FOUND.error("No such workspace.")
        if not self._workspaces.is_member(workspace_id, principal.user_id):
            raise errors.NOT_FOUND.error("No such workspace.")
        workspace = self._workspaces.get(workspace_id)
        if workspace is None:
            raise errors.NOT_FOUND.error("No such workspace.")
        if workspace.owner_id != principal.user_id:
            raise errors.OWNER_REQUIRED.error("Only the workspace owner manages trust policies.")
        return workspace

    def create(self, principal: Principal, workspace: Workspace, body: Any) -> TrustPolicy:
        """`body`: the request's fields (`api/trust_policies_models.NewTrustPolicy`), checked
        here."""
        try:
            issuer = check_issuer(body.issuer, self._local_mode)
            subject = check_subject(body.subject)
            claims = check_claims(body.claims)
            lifetime = check_lifetime(body.max_lifetime_seconds)
            audience = check_audience(body.audience)
        except InvalidPolicy as invalid:
            raise errors.INVALID_TRUST_POLICY.error(str(invalid)) from None
        scopes = body.scopes
        if (
            not scopes
            or len(set(scopes)) != len(scopes)
            or not set(scopes) <= set(DATA_PLANE_SCOPES)
        ):
            raise errors.INVALID_SCOPE.error(SCOPES_RULE)
        now = self._clock.now()
        policy = TrustPolicy(
            id=ids.new_trust_policy_id(now),
            workspace_id=workspace.id,
            name=body.name,
            issuer=issuer,
            audience=audience,
            subject=subject,
            claims=claims,
            scopes=tuple(ordered(scopes)),
            max_lifetime_seconds=lifetime,
            created_at=now,
            created_by=principal.user_id,
        )
        event = self._events.by(
            principal,
            events.TRUST_POLICY_CREATED,
            workspace.owner_id,
            workspace_id=workspace.id,
            data={
                "policyId": policy.id,
                "name": policy.name,
                "issuer": issuer,
                "subject": subject,
                "scopes": list(policy.scopes),
            },
        )
        try:
            self._policies.create(policy, [self._events.member(event)])
        except LimitReached as full:
            raise errors.LIMIT_REACHED.error(
                f"At most {full.limit} trust policies per workspace (TRUST_POLICY_LIMIT): "
                "delete one first."
            ) from None
        self._events.published(event)
        return policy

    def list(self, workspace: Workspace) -> list[TrustPolicy]:
        return self._policies.list(workspace.id)

    def get(self, workspace: Workspace, policy_id: str) -> TrustPolicy:
        policy = (
            self._policies.get(workspace.id, policy_id)
            if ids.is_trust_policy_id(policy_id)
            else None
        )
        if policy is None:
            raise errors.NOT_FOUND.error("No trust policy with this id in this workspace.")
        return policy

    def delete(self, principal: Principal, workspace: Workspace, policy_id: str) -> None:
        policy = self.get(workspace, policy_id)
        event = self._events.by(
            principal,
            events.TRUST_POLICY_DELETED,
            workspace.owner_id,
            workspace_id=workspace.id,
            data={"policyId": policy.id, "name": policy.name},
        )
        if not self._policies.delete(workspace.id, policy.id, [self._events.member(event)]):
            raise errors.NOT_FOUND.error("No trust policy with this id in this workspace.")
        self._events.published(event)
