"""Typed results of `client.auth`: API keys, principals, sign-ins, tokens and audit events.

Secrets are `pydantic.SecretStr`: their repr, str and JSON dump are masked, and the
plaintext comes out only through `.get_secret_value()`.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr
from pydantic.alias_generators import to_camel

KeyCategory = Literal["workspace", "admin"]
KeyStatus = Literal["active", "revoked", "expired"]
CredentialKind = Literal["user_token", "api_key", "delegated", "workload", "service_client"]
ActorCredential = Literal["user_token", "api_key"]  # who may change something (events)
# The event types the service records today. `AuditEvent.type` stays a plain string, so that
# a type added later parses too.
EventType = Literal[
    "key.created",
    "key.revealed",
    "key.rotated",
    "key.revoked",
    "key.updated",
    "key.expiring",
    "key.expired",
    "key.leaked",
    "key.quota_exceeded",
    "workspace.created",
    "member.added",
    "member.removed",
    "trust_policy.created",
    "trust_policy.deleted",
    "workload.exchanged",
    "grant.created",
    "grant.revoked",
    "session.revoked",
    "webhook.created",
    "webhook.updated",
    "webhook.secret_rotated",
    "webhook.deleted",
    "webhook.disabled",
    "service_client.created",
    "service_client.deleted",
    "service_client.token_issued",
]


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
    # The last successful authentication with the key, to 5 minutes (None: never used).
    last_used_at: datetime | None = None
    # The networks the key is accepted from; None: any address.
    allowed_cidrs: tuple[str, ...] | None = None
    # The daily quota (requests per UTC day, then 429 quota_exceeded); None: none.
    requests_per_day: int | None = None
    # The RFC 7638 thumbprint of the key pair it is bound to (DPoP); None: a bearer key.
    dpop_jkt: str | None = None
    key: SecretStr | None = None


class UsageBucket(_Resource):
    """One UTC hour or day of a key's usage: when it starts, how many requests it counted."""

    start: datetime
    requests: int


class KeyUsage(_Resource):
    """A key's counted requests by hour or day (`GET /v1/auth/api-keys/{id}/usage`).

    `complete` is False while a bucket may still receive counts (the service writes them
    within one usage window, 5 minutes, and a bucket is final one window after its end)."""

    key_id: str
    granularity: Literal["hour", "day"]
    buckets: tuple[UsageBucket, ...]
    complete: bool


class Principal(_Resource):
    """Who the service resolved the caller to (`GET /v1/auth/whoami`)."""

    user_id: str
    credential: CredentialKind
    key_id: str | None = None
    category: KeyCategory | None = None
    workspace_id: str | None = None
    scopes: tuple[str, ...] = ()
    # For a user token: the person's verified email and name (None when unknown, and for a key).
    email: str | None = None
    name: str | None = None
    act: dict[str, Any] | None = None  # a delegated token's holders (RFC 8693), newest first


class UserSession(_Resource):
    """One live sign-in of the caller (`GET /v1/auth/sessions`): a login, in the dashboard or
    with an SDK, with every token refreshed from it. Ending it (`client.auth.sessions.revoke`)
    refuses its access and refresh tokens from their next request. It never holds a token."""

    id: str
    created_at: datetime
    # The last time its refresh token was used (None: never refreshed since the login).
    last_refreshed_at: datetime | None = None
    # When it ends by itself, unless refreshed again before.
    expires_at: datetime
    # The User-Agent (cut at 200 characters) and the address the service recorded for it.
    user_agent: str | None = None
    ip_address: str | None = None
    # True for the sign-in of the token that made this call.
    current: bool = False


class SessionList(_Resource):
    """The answer of `GET /v1/auth/sessions`: the caller's live sign-ins, newest first."""

    sessions: tuple[UserSession, ...]


class UserActor(_Resource):
    """An event's actor that is a caller: the user, and the admin key it used (or None),
    with the person's verified email and name when the service knows them."""

    user_id: str
    credential: ActorCredential
    key_id: str | None = None
    email: str | None = None
    name: str | None = None


class SystemActor(_Resource):
    """An event's actor that is the service itself: `expiry`, `github-secret-scanning`,
    `credential-revocation`, `webhooks`."""

    system: str


class AuditEvent(_Resource):
    """One recorded change (`GET /v1/auth/events`). It never holds a secret."""

    id: str
    type: str
    occurred_at: datetime
    actor: UserActor | SystemActor
    key_id: str | None = None
    workspace_id: str | None = None
    source_ip: str | None = None
    user_agent: str | None = None
    data: dict[str, Any] = {}


class EventPage(_Resource):
    """One page of audit events, newest first; `next_cursor` is None on the last page."""

    events: tuple[AuditEvent, ...]
    next_cursor: str | None = None


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


class DelegatedToken(BaseModel):
    """A delegated token (`client.auth.delegate`): bound to one workspace, with at most the
    scopes of the credential it came from, and no refresh token."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    access_token: SecretStr
    token_type: str = "Bearer"
    expires_in: int
    scope: str
    issued_token_type: str = "urn:ietf:params:oauth:token-type:access_token"
    received_at: datetime = Field(default_factory=lambda: datetime.now(UTC))

    @property
    def scopes(self) -> tuple[str, ...]:
        return tuple(self.scope.split())

    @property
    def expires_at(self) -> datetime:
        """When it expires, by this machine's clock."""
        return self.received_at + timedelta(seconds=self.expires_in)
