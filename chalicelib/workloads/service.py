"""Managing a workspace's trust policies: owner only, at most TRUST_POLICY_LIMIT, each valid."""

from __future__ import annotations

from typing import Any

from chalicelib import errors, ids
from chalicelib.access.principal import Principal
from chalicelib.access.scopes import WORKSPACE_SCOPES_RULE, workspace_scopes
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


class TrustPolicyService:
    def __init__(
        self,
        policies: TrustPolicyStore,
        events: EventLog,
        clock: Clock,
        local_mode: bool,
    ):
        self._policies = policies
        self._events = events
        self._clock = clock
        self._local_mode = local_mode

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
        scopes = workspace_scopes(body.scopes)
        if scopes is None:
            raise errors.INVALID_SCOPE.error(WORKSPACE_SCOPES_RULE)
        now = self._clock.now()
        policy = TrustPolicy(
            id=ids.new_trust_policy_id(now),
            workspace_id=workspace.id,
            name=body.name,
            issuer=issuer,
            audience=audience,
            subject=subject,
            claims=claims,
            scopes=scopes,
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
