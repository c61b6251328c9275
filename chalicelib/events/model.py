"""An audit event: what happened to which key or workspace, who did it, from where."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from chalicelib.access.principal import Principal
from chalicelib.clock import rfc3339

RETENTION = timedelta(days=400)
SOURCE = "memory-auth"  # EventBridge `source` of every event we put

KEY_CREATED = "key.created"
KEY_REVEALED = "key.revealed"
KEY_ROTATED = "key.rotated"
KEY_REVOKED = "key.revoked"
KEY_UPDATED = "key.updated"
KEY_EXPIRING = "key.expiring"
KEY_EXPIRED = "key.expired"
KEY_LEAKED = "key.leaked"
KEY_QUOTA_EXCEEDED = "key.quota_exceeded"
WORKSPACE_CREATED = "workspace.created"
MEMBER_ADDED = "member.added"
MEMBER_REMOVED = "member.removed"
TRUST_POLICY_CREATED = "trust_policy.created"
TRUST_POLICY_DELETED = "trust_policy.deleted"
WORKLOAD_EXCHANGED = "workload.exchanged"
GRANT_CREATED = "grant.created"
GRANT_REVOKED = "grant.revoked"
SESSION_REVOKED = "session.revoked"
WEBHOOK_CREATED = "webhook.created"
WEBHOOK_UPDATED = "webhook.updated"
WEBHOOK_SECRET_ROTATED = "webhook.secret_rotated"
WEBHOOK_DELETED = "webhook.deleted"
WEBHOOK_DISABLED = "webhook.disabled"
SERVICE_CLIENT_CREATED = "service_client.created"
SERVICE_CLIENT_DELETED = "service_client.deleted"
SERVICE_CLIENT_TOKEN_ISSUED = "service_client.token_issued"
TYPES = (
    KEY_CREATED,
    KEY_REVEALED,
    KEY_ROTATED,
    KEY_REVOKED,
    KEY_UPDATED,
    KEY_EXPIRING,
    KEY_EXPIRED,
    KEY_LEAKED,
    KEY_QUOTA_EXCEEDED,
    WORKSPACE_CREATED,
    MEMBER_ADDED,
    MEMBER_REMOVED,
    TRUST_POLICY_CREATED,
    TRUST_POLICY_DELETED,
    WORKLOAD_EXCHANGED,
    GRANT_CREATED,
    GRANT_REVOKED,
    SESSION_REVOKED,
    WEBHOOK_CREATED,
    WEBHOOK_UPDATED,
    WEBHOOK_SECRET_ROTATED,
    WEBHOOK_DELETED,
    WEBHOOK_DISABLED,
    SERVICE_CLIENT_CREATED,
    SERVICE_CLIENT_DELETED,
    SERVICE_CLIENT_TOKEN_ISSUED,
)

# The actors that are not a caller.
EXPIRY = "expiry"
SECRET_SCANNING = "github-secret-scanning"
WORKLOAD_IDENTITY = "workload-identity"  # a workload's exchange (its sub is in the data)
SERVICE_CLIENT = "service-client"  # a service client's token (its id is in the data)
REFRESH_TOKEN_REUSE = "refresh-token-reuse"  # a reused refresh token ended its sign-in
WEBHOOKS = "webhooks"  # a subscription disabled after failing for three days
CREDENTIAL_REVOCATION = "credential-revocation"  # POST /v1/auth/credentials/revoke

Actor = dict[str, str | None]


def actor_of(principal: Principal) -> Actor:
    return {
        "userId": principal.user_id,
        "credential": principal.credential,
        "keyId": principal.key_id,
    }


def system(name: str) -> Actor:
    return {"system": name}


@dataclass(frozen=True)
class Event:
    id: str
    type: str
    occurred_at: datetime
    # The user whose log holds the event: the key's owner, or the workspace's owner.
    audience: str
    actor: Actor
    key_id: str | None = None
    workspace_id: str | None = None
    source_ip: str | None = None
    user_agent: str | None = None
    # Type-specific details. Never a secret: no plaintext, no hash, no token.
    data: Mapping[str, Any] = field(default_factory=dict)

    def gone(self, now: datetime) -> bool:
        """Older than 400 days: DynamoDB's TTL deletes lazily, so the code does not wait."""
        return now >= self.occurred_at + RETENTION

    def detail(self) -> dict[str, Any]:
        """The event as the bus carries it: the API answers the same (`api/events_models.Event`)."""
        return {
            "id": self.id,
            "type": self.type,
            "occurredAt": rfc3339(self.occurred_at),
            "actor": dict(self.actor),
            "keyId": self.key_id,
            "workspaceId": self.workspace_id,
            "sourceIp": self.source_ip,
            "userAgent": self.user_agent,
            "data": dict(self.data),
        }
