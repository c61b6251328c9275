"""Typed results of `client.auth` (decisions.md "API keys", "Request resolution", tokens).

Secrets are `pydantic.SecretStr`: their repr, str and JSON dump are masked, and the
plaintext comes out only through `.get_secret_value()`.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr
from pydantic.alias_generators import to_camel

KeyCategory = Literal["workspace", "admin"]
KeyStatus = Literal["active", "revoked", "expired"]
CredentialKind = Literal["user_token", "api_key"]


class _Resource(BaseModel):
    """A camelCase resource of the service; unknown fields are ignored for forward compat."""

    model_config = ConfigDict(
        alias_generator=to_camel, validate_by_name=True, frozen=True, extra="ignore"
    )


class ApiKey(_Resource):
    """An API key's metadata; `key` (the plaintext) only after create, reveal and rotate."""

    id: str
    label: str
    category: KeyCategory
    workspace_id: str | None = None
    scopes: tuple[str, ...] = ()
    status: KeyStatus
    hint: str | None = None
    created_at: datetime
    expires_at: datetime
    revoked_at: datetime | None = None
    replaced_by: str | None = None
    revealable: bool = False
    key: SecretStr | None = None


class Principal(_Resource):
    """Who the service resolved the caller to (`GET /v1/auth/whoami`)."""

    user_id: str
    credential: CredentialKind
    key_id: str | None = None
    category: KeyCategory | None = None
    workspace_id: str | None = None
    scopes: tuple[str, ...] = ()


class TokenPair(BaseModel):
    """An access token and its refresh token (RFC 6749 field names, as on the wire)."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    access_token: SecretStr
    token_type: str = "Bearer"
    expires_in: int
    refresh_token: SecretStr | None = None
    received_at: datetime = Field(default_factory=lambda: datetime.now(UTC))

    @property
    def expires_at(self) -> datetime:
        """When the access token expires, by this machine's clock."""
        return self.received_at + timedelta(seconds=self.expires_in)
