"""A workspace, a membership in it, and who a member is."""

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
class Person:
    """What a user's last sign-in said of them: a verified email and a name, when known."""

    user_id: str
    email: str | None = None
    name: str | None = None


@dataclass(frozen=True)
class Member:
    workspace_id: str
    user_id: str
    role: str
    added_at: datetime
    email: str | None = None
    name: str | None = None
