"""The resolved caller (a principal), and a refusal: the two results of request resolution."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from chalicelib.access.scopes import ordered

# An `mcp_token` is an access token this service issued to an MCP client: it is resolved only
# at its own resource (the data-plane authorizer), never by this service's routes.
CredentialKind = Literal["user_token", "api_key", "mcp_token"]


@dataclass(frozen=True)
class Principal:
    """Who is calling, by which credential, for which workspace, with which scopes."""

    user_id: str
    credential: CredentialKind
    scopes: frozenset[str]
    workspace_id: str | None = None
    key_id: str | None = None
    category: str | None = None
    client_id: str | None = None  # the MCP client an mcp_token was issued to

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

    status: int  # 401 or 403
    code: str
    detail: str
