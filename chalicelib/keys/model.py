"""The API key record, its states and its lifetimes."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Literal

from chalicelib import ids
from chalicelib.clock import rfc3339

# The lifetimes of a key, here only: everything else asks the record.
KEY_LIFETIME = timedelta(days=90)  # static keys expire about 90 days after creation
REVOKED_RETENTION = timedelta(days=30)  # revoked keys stay on the blocklist 30 days

KeyStatus = Literal["active", "revoked", "expired"]


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

    @classmethod
    def new(
        cls,
        owner_id: str,
        label: str,
        category: str,
        workspace_id: str | None,
        scopes: tuple[str, ...],
        key_hash: str,
        hint: str | None,
        created_at: datetime,
        revealable: bool,
    ) -> ApiKey:
        """A key created at `created_at`: its id sorts by that time, and it expires
        KEY_LIFETIME later."""
        return cls(
            id=ids.new_key_id(created_at),
            owner_id=owner_id,
            label=label,
            category=category,
            workspace_id=workspace_id,
            scopes=scopes,
            key_hash=key_hash,
            hint=hint,
            created_at=created_at,
            expires_at=created_at + KEY_LIFETIME,
            revealable=revealable,
        )

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
            # Hints stored before they were ASCII carry a one-character ellipsis.
            "hint": self.hint.replace("\u2026", "...") if self.hint else self.hint,
            "createdAt": rfc3339(self.created_at),
            "expiresAt": rfc3339(self.expires_at),
            "revokedAt": rfc3339(self.revoked_at),
            "replacedBy": self.replaced_by,
            # A revoked key can never be revealed again (410), whatever its ciphertext.
            "revealable": self.revealable and self.revoked_at is None,
        }
        if plaintext is not None:
            body["key"] = plaintext
        return body

    def __repr__(self) -> str:  # the hash is not a secret, but it has no business in logs
        return f"ApiKey(id={self.id!r}, owner_id={self.owner_id!r}, category={self.category!r})"
