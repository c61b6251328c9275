"""A workspace and a membership in it."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime


@dataclass(frozen=True)
class Workspace:
    id: str
    name: str
    owner_id: str
    created_at: datetime
    role: str = "member"


@dataclass(frozen=True)
class Member:
    workspace_id: str
    user_id: str
    role: str
    added_at: datetime
