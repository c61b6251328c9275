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
    from chalicelib.keys.service import KeyService
    from chalicelib.keys.vault import KeyVault
    from chalicelib.login.access_tokens import SigningKeys, TokenSigner, TokenVerifier
    from chalicelib.login.openid import IdTokenVerifier
    from chalicelib.login.refresh import RefreshTokenStore
    from chalicelib.login.service import LoginService
    from chalicelib.login.users import UserStore
    from chalicelib.workspaces.service import WorkspaceService


def aws_client(service: str, region: str) -> Any:
    import boto3
    from botocore.config import Config

    # Fail fast and let the caller answer 503: an authorizer has about 29 s in all, and a
    # user waiting on a hung dependency is worse than a clear retryable error.
    config = Config(
        retries={"mode": "standard", "max_attempts": 3},
        connect_timeout=2,
        read_timeout=3,
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
        return Resolver(self.keys, self.workspaces, self.clock, self.verify_user_token)

    def verify_user_token(self, token: str) -> dict[str, Any]:
        """The verifier (and with it the KMS client and PyJWT) is built for the first JWT."""
        return self.verifier.verify(token)

    @cached_property
    def key_service(self) -> KeyService:
        from chalicelib.keys.service import KeyService

        return KeyService(self.keys, self.workspaces, self.vault, self.clock)

    @cached_property
    def workspace_service(self) -> WorkspaceService:
        from chalicelib.workspaces.service import WorkspaceService

        return WorkspaceService(self.workspaces, self.clock, self.users)

    @cached_property
    def id_tokens(self) -> IdTokenVerifier:
        from chalicelib.login.openid import IdTokenVerifier

        return IdTokenVerifier(self.settings.trusted_issuers)

    @cached_property
    def users(self) -> UserStore:
        from chalicelib.login.users import UserStore

        return UserStore(self.dynamodb, self.settings.table_name)

    @cached_property
    def refresh_tokens(self) -> RefreshTokenStore:
        from chalicelib.login.refresh import RefreshTokenStore

        return RefreshTokenStore(self.dynamodb, self.settings.table_name)

    @cached_property
    def login_service(self) -> LoginService:
        from chalicelib.login.service import LoginService

        return LoginService(
            self.id_tokens, self.users, self.refresh_tokens, self.signer, self.clock
        )


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
