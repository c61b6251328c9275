"""`MemoryClient`: configuration, the backend, and `client.auth`."""

from __future__ import annotations

from collections.abc import Mapping
from types import TracebackType
from typing import Any, Generic, Literal, Self, overload

import httpx
from pydantic import SecretStr
from typing_extensions import TypeVar

from memory_sdk.auth import AuthClient, Credentials, UnsupportedAuth
from memory_sdk.config import (
    Backend,
    BoltSettings,
    ClientSettings,
    SvcOptions,
    load_bolt_settings,
    load_settings,
)
from memory_sdk.dpop import DpopKey
from memory_sdk.transport import Transport

# The backend as far as a type checker can tell: a literal `backend=` argument fixes it, so
# that `MemoryClient(backend="bolt").auth` is typed `UnsupportedAuth`, whose methods never
# return. Otherwise (the environment decides) it is `Backend`, and `auth` an `AuthClient`.
BackendT = TypeVar("BackendT", bound=Backend, covariant=True, default=Backend)


class _AuthAttribute:
    """`MemoryClient.auth`: `UnsupportedAuth` for a client typed as bolt, else `AuthClient`."""

    @overload
    def __get__(self, client: None, owner: type[Any]) -> Self: ...
    @overload
    def __get__(
        self, client: MemoryClient[Literal["bolt"]], owner: type[Any]
    ) -> UnsupportedAuth: ...
    @overload
    def __get__(self, client: MemoryClient[Any], owner: type[Any]) -> AuthClient: ...
    def __get__(self, client: MemoryClient[Any] | None, owner: type[Any]) -> Self | AuthClient:
        if client is None:
            return self
        return client._auth


class MemoryClient(Generic[BackendT]):
    """The memory service's client. Use it as an async context manager.

    Every argument left as None comes from the environment: `api_key` from
    MEMORY_API_KEY, `endpoint` from MEMORY_ENDPOINT, `workspace_id` from MEMORY_WORKSPACE_ID,
    `backend` from NAM_BACKEND, `svc` merged over NAM_SVC__*, `graphdb_password` from
    GRAPHDB_PASSWORD (read for the `bolt` backend only). `access_token` is a user token
    (from `auth.exchange`, or the dashboard); when given, it is sent instead of the key.
    `dpop`: sign a DPoP proof for every request (RFC 9449) with a new key pair (True) or the
    given `DpopKey` (a key-bound API key's pair); the credential is then sent as
    `Authorization: DPoP`, and sign-ins get tokens bound to the pair.

        async with MemoryClient() as client:
            keys = await client.auth.list_api_keys()
    """

    @overload
    def __init__(
        self: MemoryClient[Literal["bolt"]],
        *,
        api_key: str | SecretStr | None = None,
        endpoint: str | None = None,
        workspace_id: str | None = None,
        backend: Literal["bolt"],
        svc: SvcOptions | Mapping[str, Any] | None = None,
        access_token: str | SecretStr | None = None,
        graphdb_password: str | SecretStr | None = None,
        http_transport: httpx.AsyncBaseTransport | None = None,
        dpop: bool | DpopKey = False,
    ) -> None: ...
    @overload
    def __init__(
        self: MemoryClient[Literal["svc"]],
        *,
        api_key: str | SecretStr | None = None,
        endpoint: str | None = None,
        workspace_id: str | None = None,
        backend: Literal["svc"],
        svc: SvcOptions | Mapping[str, Any] | None = None,
        access_token: str | SecretStr | None = None,
        graphdb_password: str | SecretStr | None = None,
        http_transport: httpx.AsyncBaseTransport | None = None,
        dpop: bool | DpopKey = False,
    ) -> None: ...
    @overload
    def __init__(
        self: MemoryClient[Backend],
        *,
        api_key: str | SecretStr | None = None,
        endpoint: str | None = None,
        workspace_id: str | None = None,
        backend: Backend | None = None,
        svc: SvcOptions | Mapping[str, Any] | None = None,
        access_token: str | SecretStr | None = None,
        graphdb_password: str | SecretStr | None = None,
        http_transport: httpx.AsyncBaseTransport | None = None,
        dpop: bool | DpopKey = False,
    ) -> None: ...
    def __init__(
        self,
        *,
        api_key: str | SecretStr | None = None,
        endpoint: str | None = None,
        workspace_id: str | None = None,
        backend: Backend | None = None,
        svc: SvcOptions | Mapping[str, Any] | None = None,
        access_token: str | SecretStr | None = None,
        graphdb_password: str | SecretStr | None = None,
        http_transport: httpx.AsyncBaseTransport | None = None,
        dpop: bool | DpopKey = False,
    ) -> None:
        self.settings: ClientSettings = load_settings(
            api_key=api_key,
            endpoint=endpoint,
            workspace_id=workspace_id,
            backend=backend,
            svc=svc,
            has_user_token=access_token is not None,
        )
        self.bolt: BoltSettings | None = None
        self._transport: Transport | None = None
        if self.settings.backend == "bolt":
            self.bolt = load_bolt_settings(graphdb_password)
            self._auth: AuthClient = UnsupportedAuth(_bolt_reason(self.settings))
            return
        credentials = Credentials(
            self.settings.api_key,
            access_token=SecretStr(access_token) if isinstance(access_token, str) else access_token,
        )
        # dpop=True: a new P-256 pair, kept in this client only; a DpopKey: that pair (the one
        # a key-bound API key was created with). Sign-ins made with it get bound tokens.
        key = DpopKey.generate() if dpop is True else (dpop or None)
        self._transport = Transport(
            self.settings, credentials.bearer, http_transport=http_transport, dpop=key
        )
        self._auth = AuthClient(self._transport, self.settings, credentials)

    @classmethod
    def from_delegated_token(
        cls,
        token: str | SecretStr,
        *,
        endpoint: str | None = None,
        http_transport: httpx.AsyncBaseTransport | None = None,
    ) -> MemoryClient[Any]:
        """A client that sends a delegated token (`client.auth.delegate`), e.g. in an agent
        handed one. Its workspace and scopes are the token's. It never refreshes: once the
        token expires, every call raises `DelegatedTokenExpiredError`, which says so."""
        client: MemoryClient[Any] = cls(
            access_token=token, endpoint=endpoint, backend="svc", http_transport=http_transport
        )
        assert client._transport is not None
        client._transport.delegated = True
        client._auth._credentials.delegated = True
        return client

    @property
    def dpop_key(self) -> DpopKey | None:
        """The key pair this client signs DPoP proofs with, if any."""
        return self._transport.dpop if self._transport is not None else None

    @property
    def backend(self) -> Backend:
        return "svc" if self.settings.backend == "svc" else "bolt"

    @property
    def workspace_id(self) -> str | None:
        """The configured workspace, sent as X-Workspace-Id."""
        return self.settings.workspace_id

    auth = _AuthAttribute()
    """API keys, tokens and whoami; on the `bolt` backend, a sentinel that raises."""

    def __repr__(self) -> str:
        return (
            f"MemoryClient(backend={self.backend!r}, endpoint={self.settings.endpoint!r}, "
            f"workspace_id={self.settings.workspace_id!r})"
        )

    async def aclose(self) -> None:
        if self._transport is not None:
            await self._transport.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.aclose()


def _bolt_reason(settings: ClientSettings) -> str:
    why = (
        "no MEMORY_API_KEY is set, so the backend defaulted to bolt"
        if settings.backend_defaulted
        else "the backend is bolt (NAM_BACKEND or backend=)"
    )
    return (
        "client.auth is not supported on the self-hosted bolt backend, which authenticates "
        f"to its own graph database with GRAPHDB_PASSWORD and has no API keys ({why}). "
        "To manage API keys, use the hosted backend: set MEMORY_API_KEY to an svc_ key "
        "(leaving NAM_BACKEND unset), or set NAM_BACKEND=svc."
    )
