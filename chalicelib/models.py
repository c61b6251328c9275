"""The domain's records: an API key, a workspace, and the resolved caller (a principal)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Literal

from chalicelib.clock import rfc3339

KEY_LIFETIME = timedelta(days=90)  # spec §8: static keys expire about 90 days after creation
REVOKED_RETENTION = timedelta(days=30)  # spec §8: revoked keys stay on the blocklist 30 days

KeyStatus = Literal["active", "revoked", "expired"]
CredentialKind = Literal["user_token", "api_key"]


@dataclass(frozen=True)
class ApiKey:
    id: str
    owner_id: str
    label: str
    category: str
    workspace_id: str | None
    scopes: tuple[str, ...]
    key_hash: str
    created_at: datetime
    expires_at: datetime
    hint: str | None = None
    revealable: bool = False
    revoked_at: datetime | None = None
    replaced_by: str | None = None
    # When the record counts as deleted (DynamoDB TTL deletes lazily; the code does not wait).
    retain_until: datetime | None = None

    def status(self, now: datetime) -> KeyStatus:
        if self.revoked_at is not None:
            return "revoked"
        if now >= self.expires_at:
            return "expired"
        return "active"

    def gone(self, now: datetime) -> bool:
        return self.retain_until is not None and now >= self.retain_until

    def revoked(self, now: datetime, replaced_by: str | None = None) -> ApiKey:
        return replace(
            self, revoked_at=now, replaced_by=replaced_by, retain_until=now + REVOKED_RETENTION
        )

    def resource(self, now: datetime, plaintext: str | None = None) -> dict[str, object]:
        """The public representation (decisions.md "API keys"); `key` only when given."""
        body: dict[str, object] = {
            "id": self.id,
            "label": self.label,
            "category": self.category,
            "workspaceId": self.workspace_id,
            "scopes": list(self.scopes),
            "status": self.status(now),
            "hint": self.hint,
            "createdAt": rfc3339(self.created_at),
            "expiresAt": rfc3339(self.expires_at),
            "revokedAt": rfc3339(self.revoked_at),
            "replacedBy": self.replaced_by,
            "revealable": self.revealable,
        }
        if plaintext is not None:
            body["key"] = plaintext
        return body

    def __repr__(self) -> str:  # the hash is not a secret, but it has no business in logs
        return f"ApiKey(id={self.id!r}, owner_id={self.owner_id!r}, category={self.category!r})"


@dataclass(frozen=True)
class Workspace:
    id: str
    name: str
    owner_id: str
    created_at: datetime
    role: str = "member"

    def resource(self) -> dict[str, object]:
        return {
            "id": self.id,
            "name": self.name,
            "ownerId": self.owner_id,
            "createdAt": rfc3339(self.created_at),
        }


@dataclass(frozen=True)
class Member:
    workspace_id: str
    user_id: str
    role: str
    added_at: datetime

    def resource(self) -> dict[str, object]:
        return {
            "workspaceId": self.workspace_id,
            "userId": self.user_id,
            "role": self.role,
            "addedAt": rfc3339(self.added_at),
        }


@dataclass(frozen=True)
class Principal:
    """Who is calling, by which credential, for which workspace, with which scopes."""

    user_id: str
    credential: CredentialKind
    scopes: frozenset[str]
    workspace_id: str | None = None
    key_id: str | None = None
    category: str | None = None

    def resource(self) -> dict[str, object]:
        from chalicelib.scopes import ordered

        return {
            "userId": self.user_id,
            "credential": self.credential,
            "keyId": self.key_id,
            "category": self.category,
            "workspaceId": self.workspace_id,
            "scopes": ordered(self.scopes),
        }


@dataclass(frozen=True)
class Refusal:
    """Why a request was not resolved to a principal: a result, not an exception."""

    status: int  # 401 or 403
    code: str
    detail: str
