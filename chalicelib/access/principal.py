"""The resolved caller (a principal), and a refusal: the two results of request resolution."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from chalicelib.access.scopes import ordered

CredentialKind = Literal["user_token", "api_key"]


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

    status: int  # 401, 403, or 400 for a malformed X-Workspace-Id
    code: str
    detail: str
