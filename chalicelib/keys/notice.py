"""A key with an expiry notice due, as the sparse index `ExpiryNotices` projects it.

Apart from keys/store.py so that the authorizer, which imports the store, does not build it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from chalicelib.clock import parse_rfc3339
from chalicelib.keys.model import NOTICE_AT, ApiKey


@dataclass(frozen=True)
class Notice:
    """A key with an expiry notice due, as the notice index projects it."""

    key_id: str
    owner_id: str
    workspace_id: str | None
    label: str
    hint: str | None
    expires_at: datetime
    notice_at: datetime | None

    @classmethod
    def from_values(cls, values: dict[str, Any]) -> Notice:
        expires = parse_rfc3339(values["expiresAt"])
        assert expires is not None
        return cls(
            key_id=values["keyId"],
            owner_id=values["ownerId"],
            workspace_id=values.get("workspaceId"),
            label=values["label"],
            hint=values.get("hint"),
            expires_at=expires,
            notice_at=parse_rfc3339(values.get(NOTICE_AT)),
        )

    @classmethod
    def of(cls, api_key: ApiKey) -> Notice:
        return cls(
            api_key.id, api_key.owner_id, api_key.workspace_id, api_key.label, api_key.hint,
            api_key.expires_at, api_key.notice_at,
        )

    @property
    def warning(self) -> bool:
        """True while the notice due is the 7-day warning, not the expiry itself."""
        return self.notice_at is not None and self.notice_at < self.expires_at
