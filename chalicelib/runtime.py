"""Builds the services once per Lambda container, lazily: each piece on first use.

The authorizer's API-key path touches only DynamoDB; KMS clients, the signer and the token
verifier (and with them PyJWT and cryptography) are built when first needed.
"""

from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING, Any

from chalicelib.access.resolution import Resolver
from chalicelib.clock import Clock
from chalicelib.config import Settings
from chalicelib.keys.store import KeyStore
from chalicelib.workspaces.store import WorkspaceStore

if TYPE_CHECKING:
    from chalicelib.idempotency import IdempotencyStore
    from chalicelib.keys.service import KeyService
    from chalicelib.keys.vault import KeyVault
    from chalicelib.login.access_tokens import SigningKeys, TokenSigner, TokenVerifier
    from chalicelib.login.openid import IdTokenVerifier
    from chalicelib.login.refresh import RefreshTokenStore
    from chalicelib.login.service import LoginService
    from chalicelib.login.successors import RefreshSuccessors
    from chalicelib.login.users import UserStore
    from chalicelib.workspaces.service import WorkspaceService


# The failure budget of one AWS call: a frozen DynamoDB or KMS must turn into a 503 within
# 5 s, so that a client can retry (or give up) instead of hanging, and the authorizer
# (10 s timeout) raises well inside its own limit.
#
#   an attempt      <= CONNECT_TIMEOUT + READ_TIMEOUT = 2.0 s
#   two attempts    <= 4.0 s, plus botocore's backoff before the retry: up to 25-50 ms after
#                      a timeout, up to 1 s after throttling (whose answer itself is fast)
#   worst case      <= 5 s; a frozen dependency (accepts, never answers): 2 x 1.5 s = 3 s
#
# Why these numbers: DynamoDB and KMS answer in milliseconds inside a region (a transaction
# in tens), so 1.5 s is a stall, not a slow answer; a connection (TCP and TLS, reused across
# invocations anyway) takes milliseconds, so 0.5 s is ample. A second attempt rides out a
# single dropped connection or one throttling answer; a third would push a freeze past the
# budget. More retrying is the client's job, after a 503 that says what it may retry
# (README, "Retries"), because only the client can wait longer than one request.
# A write whose answer was lost may have been applied: every store settles that itself
# (a retry meets its own write), so botocore's retry is safe for every call made here.
CONNECT_TIMEOUT = 0.5
READ_TIMEOUT = 1.5
TOTAL_ATTEMPTS = 2

# Bookkeeping writes (a profile's last login) never fail or delay a request beyond this: one
# attempt of at most 1 s, and its failure is logged, not answered.
BOOKKEEPING_TIMEOUT = 0.5


def aws_client(
    service: str,
    region: str,
    connect_timeout: float = CONNECT_TIMEOUT,
    read_timeout: float = READ_TIMEOUT,
    attempts: int = TOTAL_ATTEMPTS,
) -> Any:
    import boto3
    from botocore.config import Config

    config = Config(
        retries={"mode": "standard", "total_max_attempts": attempts},
        connect_timeout=connect_timeout,
        read_timeout=read_timeout,
    )
    return boto3.client(service, region_name=region, config=config)


class Services:
    def __init__(self, settings: Settings | None = None, clock: Clock | None = None):
        self._settings = settings
        self.clock = clock or Clock()

    @cached_property
    def settings(self) -> Settings:
        return self._settings or Settings.from_env()

    @cached_property
    def dynamodb(self) -> Any:
        return aws_client("dynamodb", self.settings.region)

    @cached_property
    def kms(self) -> Any:
        return aws_client("kms", self.settings.region)

    @cached_property
    def bookkeeping_dynamodb(self) -> Any:
        return aws_client(
            "dynamodb", self.settings.region, BOOKKEEPING_TIMEOUT, BOOKKEEPING_TIMEOUT, attempts=1
        )

    @cached_property
    def keys(self) -> KeyStore:
        return KeyStore(self.dynamodb, self.settings.table_name)

    @cached_property
    def workspaces(self) -> WorkspaceStore:
        return WorkspaceStore(self.dynamodb, self.settings.table_name)

    @cached_property
    def vault(self) -> KeyVault:
        from chalicelib.keys.vault import KeyVault

        return KeyVault(self.kms, self.settings.encryption_key_id)

    @cached_property
    def signing_keys(self) -> SigningKeys:
        from chalicelib.login.access_tokens import SigningKeys

        return SigningKeys(self.kms, self.settings.signing_key_ids)

    @cached_property
    def signer(self) -> TokenSigner:
        from chalicelib.login.access_tokens import TokenSigner

        return TokenSigner(self.kms, self.signing_keys, self.settings.issuer, self.clock)

    @cached_property
    def verifier(self) -> TokenVerifier:
        from chalicelib.login.access_tokens import TokenVerifier

        return TokenVerifier(self.signing_keys, self.settings.issuer)

    @cached_property
    def resolver(self) -> Resolver:
        return Resolver(self.keys, self.workspaces, self.clock, _LazyVerifier(self))  # type: ignore[arg-type]

    @cached_property
    def idempotency(self) -> IdempotencyStore:
        from chalicelib.idempotency import IdempotencyStore

        return IdempotencyStore(self.dynamodb, self.settings.table_name)

    @cached_property
    def key_service(self) -> KeyService:
        from chalicelib.keys.service import KeyService

        return KeyService(self.keys, self.workspaces, self.vault, self.idempotency, self.clock)

    @cached_property
    def workspace_service(self) -> WorkspaceService:
        from chalicelib.workspaces.service import WorkspaceService

        return WorkspaceService(self.workspaces, self.idempotency, self.clock)

    @cached_property
    def id_tokens(self) -> IdTokenVerifier:
        from chalicelib.login.openid import IdTokenVerifier

        return IdTokenVerifier(self.settings.trusted_issuers)

    @cached_property
    def users(self) -> UserStore:
        from chalicelib.login.users import UserStore

        return UserStore(self.dynamodb, self.settings.table_name, self.bookkeeping_dynamodb)

    @cached_property
    def refresh_tokens(self) -> RefreshTokenStore:
        from chalicelib.login.refresh import RefreshTokenStore

        return RefreshTokenStore(self.dynamodb, self.settings.table_name)

    @cached_property
    def refresh_successors(self) -> RefreshSuccessors:
        from chalicelib.login.successors import RefreshSuccessors

        return RefreshSuccessors(self.kms, self.settings.refresh_token_key_id)

    @cached_property
    def login_service(self) -> LoginService:
        from chalicelib.login.service import LoginService

        return LoginService(
            self.id_tokens,
            self.users,
            self.refresh_tokens,
            self.refresh_successors,
            self.signer,
            self.clock,
        )


class _LazyVerifier:
    """Defers building the verifier (and importing PyJWT) until a JWT actually arrives."""

    def __init__(self, services: Services):
        self._services = services

    def verify(self, token: str) -> dict[str, Any]:
        return self._services.verifier.verify(token)


_current: Services | None = None


def services() -> Services:
    global _current
    if _current is None:
        _current = Services()
    return _current


def use(replacement: Services | None) -> None:
    """Tests and the local stack install their own services (moto, a frozen clock)."""
    global _current
    _current = replacement
