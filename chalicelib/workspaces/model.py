"""A workspace and a membership in it."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from chalicelib.clock import rfc3339


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
