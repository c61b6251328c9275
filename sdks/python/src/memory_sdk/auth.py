"""`client.auth`: API keys, their audit events, the token flow, sign-ins and whoami.

`AuthClient` talks to the hosted (`svc`) backend. On the self-hosted (`bolt`) backend the
client hands out `UnsupportedAuth` instead, a sentinel whose every use raises
`NotSupportedError`.
"""

from __future__ import annotations

import builtins
import enum
import math
from collections.abc import AsyncIterator, Sequence
from typing import Any, Literal, NoReturn, TypeVar
from urllib.parse import quote

import httpx
from pydantic import BaseModel, SecretStr, ValidationError

from memory_sdk import retry
from memory_sdk.config import ClientSettings
from memory_sdk.errors import NotSupportedError, UnexpectedResponseError
from memory_sdk.models import (
    ApiKey,
    AuditEvent,
    DelegatedToken,
    EventPage,
    EventType,
    KeyCategory,
    KeyStatus,
    KeyUsage,
    Principal,
    SessionList,
    TokenPair,
    UserSession,
)
from memory_sdk.transport import Call, Transport

KEYS = "/v1/auth/api-keys"
EVENTS = "/v1/auth/events"
SESSIONS = "/v1/auth/sessions"
PAGE_SIZE = 100  # the service's maximum `limit`


class Unchanged(enum.Enum):
    """The default of `update_api_key(allowed_cidrs=...)`: leave the allow-list as it is
    (None is a value there: it removes the list)."""

    UNCHANGED = "UNCHANGED"


UNCHANGED = Unchanged.UNCHANGED

Model = TypeVar("Model", bound=BaseModel)


class Credentials:
    """The bearer credential the client sends: a user token, once there is one, else the key."""

    def __init__(
        self,
        api_key: SecretStr | None,
        access_token: SecretStr | None = None,
        refresh_token: SecretStr | None = None,
        delegated: bool = False,
    ) -> None:
        self._api_key = api_key
        self._access_token = access_token
        self._refresh_token = refresh_token
        self.delegated = delegated  # the access token is a delegated token: never refreshed

    def __repr__(self) -> str:
        return f"Credentials(kind={self.kind!r})"

    @property
    def kind(self) -> str | None:
        if self._access_token is not None:
            return "delegated" if self.delegated else "user_token"
        return "api_key" if self._api_key is not None else None

    def bearer(self) -> str | None:
        secret = self._access_token or self._api_key
        return secret.get_secret_value() if secret is not None else None

    @property
    def refresh_token(self) -> SecretStr | None:
        return self._refresh_token

    def forget_refresh_token(self) -> None:
        self._refresh_token = None

    def use(self, tokens: TokenPair) -> None:
        self._access_token = tokens.access_token
        self._refresh_token = tokens.refresh_token


class SessionsClient:
    """`client.auth.sessions`: the caller's sign-ins. A user token only: an API key or a
    delegated token is refused (`PermissionDeniedError`). All methods are async."""

    def __init__(self, transport: Transport) -> None:
        self._transport = transport

    def __repr__(self) -> str:
        return "SessionsClient()"

    async def list(self) -> builtins.list[UserSession]:
        """The caller's live sign-ins, newest first; `current` marks this client's own."""
        # No X-Workspace-Id: a sign-in belongs to the person, not to a workspace.
        response = await self._transport.send(Call("GET", SESSIONS, default_workspace=False))
        return builtins.list(_parse(SessionList, response).sessions)

    async def revoke(self, session_id: str) -> None:
        """End one sign-in of the caller: its access and refresh tokens are refused from their
        next request. Another person's, an unknown or an already ended one: `NotFoundError`
        (so a re-send after a lost answer may raise it; the sign-in has ended all the same).
        Ending this client's own sign-in (`current`) ends this client's session too."""
        await self._transport.send(
            Call("DELETE", _session_path(session_id), default_workspace=False)
        )


class AuthClient:
    """API-key management and the token flow on the hosted backend. All methods are async."""

    def __init__(
        self, transport: Transport, settings: ClientSettings, credentials: Credentials
    ) -> None:
        self._transport = transport
        self._settings = settings
        self._credentials = credentials
        self._sessions = SessionsClient(transport)

    @property
    def sessions(self) -> SessionsClient:
        """The caller's sign-ins: `list()` and `revoke(session_id)`."""
        return self._sessions

    def __repr__(self) -> str:
        return (
            f"AuthClient(endpoint={self._settings.endpoint!r}, "
            f"credential={self._credentials.kind!r})"
        )

    # -- API keys --------------------------------------------------------------------------

    async def create_api_key(
        self,
        label: str,
        scopes: Sequence[str] | None = None,
        workspace_id: str | None = None,
        *,
        category: KeyCategory | None = None,
        idempotency_key: str | None = None,
        expires_in_days: int | None = None,
        allowed_cidrs: Sequence[str] | None = None,
        requests_per_day: int | None = None,
        dpop_jkt: str | None = None,
    ) -> ApiKey:
        """Create a key; its plaintext is in `.key`, returned this once (and by reveal).

        Without `category` nothing is sent for it, as the service documents: it makes
        an `admin` key and refuses a `workspace_id` (`BadRequestError`,
        code `workspace_id_not_allowed`). With `category="workspace"` the key is bound to
        `workspace_id`, or to the client's configured workspace when that is None.
        `expires_in_days` (1 to 90, the service's default 90) is its lifetime, which its
        rotations keep; `allowed_cidrs` (1 to 20 IPv4/IPv6 networks) the only addresses it is
        accepted from (default any); `requests_per_day` (1 to 10,000,000) a daily quota, past
        which the key is refused until UTC midnight (`RateLimitError`, code
        `quota_exceeded`); `dpop_jkt` (a `DpopKey`'s `thumbprint`) binds the key to that key
        pair: it then works only from a client made with `dpop=` that pair. Each is sent only
        when given.

        Sent with an Idempotency-Key (a new random one unless `idempotency_key` is given: pass
        your own to make a retry of your own, later, safe too), so it is retried like a read
        (`memory_sdk.retry`): however often it is sent, one key is created and its answer
        returned. Another call with the same key but other arguments is refused
        (`BadRequestError`, status 422, code `idempotency_key_reused`).
        """
        body: dict[str, Any] = {"label": label}
        if category is not None:
            body["category"] = category
            if category == "workspace" and workspace_id is None:
                workspace_id = self._settings.workspace_id
        if workspace_id is not None:
            body["workspaceId"] = workspace_id
        if scopes is not None:
            body["scopes"] = list(scopes)
        if expires_in_days is not None:
            body["expiresInDays"] = expires_in_days
        if allowed_cidrs is not None:
            body["allowedCidrs"] = list(allowed_cidrs)
        if requests_per_day is not None:
            body["requestsPerDay"] = requests_per_day
        if dpop_jkt is not None:
            body["dpopJkt"] = dpop_jkt
        key = idempotency_key or retry.new_idempotency_key()
        response = await self._transport.send(Call("POST", KEYS, json=body, idempotency_key=key))
        return _parse(ApiKey, response)

    async def list_api_keys(
        self,
        workspace_id: str | None = None,
        *,
        status: KeyStatus | None = None,
        all_workspaces: bool = False,
        query: str | None = None,
    ) -> list[ApiKey]:
        """The caller's own keys, newest first, without plaintexts (every page is fetched).

        By default the list is filtered to one workspace, this argument or else the client's
        configured `workspace_id`: only the keys bound to it (so no admin keys). With
        neither, or with `all_workspaces=True`, every key of the caller is listed. With
        `query`, only the keys whose label contains it, searched by the service (`q`:
        without regard to case; at most 100 characters).
        """
        keys = self.iter_api_keys(
            workspace_id, status=status, all_workspaces=all_workspaces, query=query
        )
        return [key async for key in keys]

    async def iter_api_keys(
        self,
        workspace_id: str | None = None,
        *,
        status: KeyStatus | None = None,
        all_workspaces: bool = False,
        query: str | None = None,
    ) -> AsyncIterator[ApiKey]:
        """`list_api_keys`, one page at a time (a search's page may be empty while more
        follow: the service reads a bounded number of keys per request)."""
        if all_workspaces and workspace_id is not None:
            raise ValueError("pass either workspace_id or all_workspaces=True, not both")
        params = {"limit": str(PAGE_SIZE)}
        if status is not None:
            params["status"] = status
        if query:
            params["q"] = query
        while True:
            response = await self._transport.send(
                Call(
                    "GET",
                    KEYS,
                    params=params,
                    workspace_id=workspace_id,
                    default_workspace=not all_workspaces,
                )
            )
            body = response.json()
            if not isinstance(body, dict) or not isinstance(body.get("keys"), list):
                raise UnexpectedResponseError("GET", KEYS)
            for item in body["keys"]:
                yield _validate(ApiKey, item, "GET", KEYS)
            cursor = body.get("nextCursor")
            if not isinstance(cursor, str) or not cursor:
                return
            params = {**params, "cursor": cursor}

    async def get_api_key(self, key_id: str) -> ApiKey:
        """One key's metadata, without its plaintext."""
        response = await self._transport.send(Call("GET", _key_path(key_id)))
        return _parse(ApiKey, response)

    async def reveal_api_key(self, key_id: str, workspace_id: str | None = None) -> ApiKey:
        """The key with its plaintext in `.key`. 410 (`GoneError`) for a revoked key."""
        response = await self._transport.send(
            Call("GET", _key_path(key_id, "reveal"), workspace_id=workspace_id)
        )
        return _parse(ApiKey, response)

    async def rotate_api_key(
        self,
        key_id: str,
        *,
        grace_period_seconds: int | None = None,
        idempotency_key: str | None = None,
    ) -> ApiKey:
        """The successor key (plaintext in `.key`), with the same label, scopes, lifetime and
        allow-list. The old key is revoked in the same step, or, with `grace_period_seconds`
        (0 to 604800, 7 days), keeps working that long: its `replaced_by` names the successor
        at once. A key that is not active or already has a successor: `ConflictError`.

        Sent with an Idempotency-Key, as `create_api_key`: a retry after a lost answer gets
        the same successor instead of a 409, so the new key's plaintext is never lost.
        """
        body = (
            None if grace_period_seconds is None else {"gracePeriodSeconds": grace_period_seconds}
        )
        key = idempotency_key or retry.new_idempotency_key()
        response = await self._transport.send(
            Call("POST", _key_path(key_id, "rotate"), json=body, idempotency_key=key)
        )
        return _parse(ApiKey, response)

    async def update_api_key(
        self,
        key_id: str,
        *,
        label: str | None = None,
        allowed_cidrs: Sequence[str] | Literal[Unchanged.UNCHANGED] | None = UNCHANGED,
        requests_per_day: int | Literal[Unchanged.UNCHANGED] | None = UNCHANGED,
    ) -> ApiKey:
        """Rename a key and/or set its allow-list (`allowed_cidrs=None` removes it: any
        address again) and/or its daily quota (`requests_per_day=None` removes it); only
        what is given changes. Effective on the key's next request.
        A revoked key cannot be changed: `ConflictError`.

        Not re-sent once it may have reached the service (a PATCH, see `memory_sdk.retry`).
        """
        body: dict[str, Any] = {}
        if label is not None:
            body["label"] = label
        if allowed_cidrs is not UNCHANGED:
            body["allowedCidrs"] = None if allowed_cidrs is None else list(allowed_cidrs)
        if requests_per_day is not UNCHANGED:
            body["requestsPerDay"] = requests_per_day
        response = await self._transport.send(Call("PATCH", _key_path(key_id), json=body))
        return _parse(ApiKey, response)

    async def usage(
        self,
        key_id: str,
        *,
        granularity: Literal["hour", "day"] = "day",
        start: str | None = None,
        end: str | None = None,
    ) -> KeyUsage:
        """A key's counted requests per UTC hour or day, every bucket of the range (zeros
        included). Default: the last 7 days by day; `start` and `end` are RFC 3339 times
        (`2026-11-21T00:00:00Z`), rounded to the granularity; at most 31 days by hour, 400
        by day. Counts arrive within one usage window (5 minutes) of the requests."""
        params: dict[str, str] = {"granularity": granularity}
        if start is not None:
            params["from"] = start
        if end is not None:
            params["to"] = end
        response = await self._transport.send(
            Call("GET", _key_path(key_id, "usage"), params=params)
        )
        return _parse(KeyUsage, response)

    async def revoke_api_key(self, key_id: str) -> None:
        """Revoke the key, effective on the next request. Revoking twice is not an error."""
        await self._transport.send(Call("DELETE", _key_path(key_id)))

    # -- audit events ------------------------------------------------------------------------

    async def list_events(
        self,
        *,
        type: EventType | str | None = None,
        key_id: str | None = None,
        workspace_id: str | None = None,
        limit: int | None = None,
        cursor: str | None = None,
    ) -> EventPage:
        """One page of audit events, newest first: the caller's own keys' events and those
        of the workspaces it owns. Filters: an event `type`, a `key_id`, a `workspace_id`
        (only then is X-Workspace-Id sent: the configured workspace does not filter events).
        Pass the page's `next_cursor` as `cursor` for the next one.
        """
        params: dict[str, str] = {}
        if limit is not None:
            params["limit"] = str(limit)
        if cursor is not None:
            params["cursor"] = cursor
        if type is not None:
            params["type"] = type
        if key_id is not None:
            params["keyId"] = key_id
        response = await self._transport.send(
            Call("GET", EVENTS, params=params, workspace_id=workspace_id, default_workspace=False)
        )
        return _parse(EventPage, response)

    async def iter_events(
        self,
        *,
        type: EventType | str | None = None,
        key_id: str | None = None,
        workspace_id: str | None = None,
    ) -> AsyncIterator[AuditEvent]:
        """Every matching event, newest first, fetched a page at a time as it is consumed."""
        cursor: str | None = None
        while True:
            page = await self.list_events(
                type=type,
                key_id=key_id,
                workspace_id=workspace_id,
                limit=PAGE_SIZE,
                cursor=cursor,
            )
            for event in page.events:
                yield event
            if not page.next_cursor:
                return
            cursor = page.next_cursor

    # -- who is calling, and user tokens ---------------------------------------------------

    async def whoami(self) -> Principal:
        """The principal the service resolves this client's credential and workspace to."""
        response = await self._transport.send(Call("GET", "/v1/auth/whoami"))
        return _parse(Principal, response)

    async def exchange(self, id_token: str | SecretStr) -> TokenPair:
        """Exchange an identity provider's ID token for a user token and refresh token.

        The client then sends the new user token instead of its API key. Retried like a read:
        the same ID token always signs the same user in.
        """
        return await self._token_call(
            "/v1/auth/exchange", {"id_token": _plain(id_token)}, math.inf
        )

    async def refresh_access_token(self, refresh_token: str | SecretStr | None = None) -> TokenPair:
        """A new token pair for `refresh_token` (default: the one this client holds).

        Refresh tokens are single use, but the service answers the same token presented
        again within 60 s of its use (while its successor is unused) with the same
        successor: so a refresh whose answer was lost is retried, within
        `memory_sdk.retry.REFRESH_RETRY_WINDOW` of its first send. Later, a second use would
        revoke the token's whole family, and it is not re-sent.
        """
        token = refresh_token if refresh_token is not None else self._credentials.refresh_token
        if token is None and self._credentials.delegated:
            raise NotSupportedError(
                "This client runs on a delegated token, which cannot be refreshed: mint a new "
                "one (client.auth.delegate) from the credential it came from."
            )
        if token is None:
            raise ValueError("no refresh token: call exchange() first, or pass refresh_token")
        return await self._token_call(
            "/v1/auth/refresh", {"refresh_token": _plain(token)}, retry.REFRESH_RETRY_WINDOW
        )

    async def delegate(
        self,
        *,
        workspace_id: str | None = None,
        scopes: Sequence[str] | None = None,
        expires_in: int | None = None,
        actor: str | None = None,
        subject: str | SecretStr | None = None,
    ) -> DelegatedToken:
        """A token for a browser or an agent: bound to one workspace, with at most the
        scopes of `subject` (default: this client's own credential), for `expires_in`
        seconds (60 to 3600, default 900; never longer than `subject` lives). `actor` labels who
        will hold it. It cannot manage keys or workspaces, has no refresh token, and stops
        working on the next request once the key it comes from is revoked.

        `workspace_id` defaults to the client's workspace (a workspace key's own is implied).
        """
        token = subject if subject is not None else self._credentials.bearer()
        if token is None:
            raise ValueError("no credential to delegate: pass subject, or configure a key")
        body: dict[str, Any] = {
            "subject_token": _plain(token),
            "subject_token_type": "urn:ietf:params:oauth:token-type:access_token",
        }
        workspace = workspace_id or self._settings.workspace_id
        if workspace is not None:
            body["workspace_id"] = workspace
        if scopes is not None:
            body["scope"] = " ".join(scopes)
        if expires_in is not None:
            body["expires_in"] = expires_in
        if actor is not None:
            body["actor"] = actor
        response = await self._transport.send(
            Call("POST", "/v1/auth/exchange", json=body, authenticated=False, oauth=True)
        )
        return _parse(DelegatedToken, response)

    async def sign_out_everywhere(self) -> None:
        """End every sign-in of the caller, this client's own included (`DELETE
        /v1/auth/sessions`): every access and refresh token of them is refused from its next
        request, so this client must sign in again (`exchange`). A user token only.

        Re-sent like any DELETE when its answer is lost; the re-send then meets the ended
        sign-in and raises `AuthenticationError` (`revoked_credentials`): every sign-in has
        ended all the same."""
        await self._transport.send(Call("DELETE", SESSIONS, default_workspace=False))
        self._credentials.forget_refresh_token()

    async def revoke(self, refresh_token: str | SecretStr | None = None) -> None:
        """Sign out: revokes `refresh_token` (default: the one this client holds) and every
        successor, and the sign-in they belong to: its access tokens too are refused from
        their next request. Always succeeds for an unknown or already revoked token."""
        token = refresh_token if refresh_token is not None else self._credentials.refresh_token
        if token is None:
            return
        await self._transport.send(
            Call(
                "POST",
                "/v1/auth/revoke",
                json={"token": _plain(token)},
                authenticated=False,
                oauth=True,
                repeatable_within=math.inf,  # revoking twice is the same as once
            )
        )
        if refresh_token is None or _plain(refresh_token) == _plain(token):
            self._credentials.forget_refresh_token()

    async def _token_call(
        self, path: str, body: dict[str, str], repeatable_within: float
    ) -> TokenPair:
        response = await self._transport.send(
            Call(
                "POST",
                path,
                json=body,
                authenticated=False,
                oauth=True,
                repeatable_within=repeatable_within,
            )
        )
        tokens = _parse(TokenPair, response)
        self._credentials.use(tokens)
        return tokens


class UnsupportedAuth(AuthClient):
    """`client.auth` on the `bolt` backend: every attribute access raises NotSupportedError.

    For type checkers, every method is declared as never returning (`NoReturn`), so code
    after a call on a client typed as bolt (`MemoryClient(backend="bolt")`) is unreachable.
    At run time the attribute access itself raises, before any of them is reached.
    """

    def __init__(self, reason: str) -> None:  # no AuthClient state, on purpose
        object.__setattr__(self, "_reason", reason)

    def __getattribute__(self, name: str) -> Any:
        if name.startswith("__") and name.endswith("__"):
            return object.__getattribute__(self, name)
        raise NotSupportedError(object.__getattribute__(self, "_reason"))

    def __repr__(self) -> str:
        return "UnsupportedAuth(backend='bolt')"

    def _unsupported(self) -> NoReturn:
        raise NotSupportedError(object.__getattribute__(self, "_reason"))

    def create_api_key(self, *args: object, **kwargs: object) -> NoReturn:
        self._unsupported()

    def list_api_keys(self, *args: object, **kwargs: object) -> NoReturn:
        self._unsupported()

    def iter_api_keys(self, *args: object, **kwargs: object) -> NoReturn:
        self._unsupported()

    def get_api_key(self, *args: object, **kwargs: object) -> NoReturn:
        self._unsupported()

    def reveal_api_key(self, *args: object, **kwargs: object) -> NoReturn:
        self._unsupported()

    def rotate_api_key(self, *args: object, **kwargs: object) -> NoReturn:
        self._unsupported()

    def update_api_key(self, *args: object, **kwargs: object) -> NoReturn:
        self._unsupported()

    def usage(self, *args: object, **kwargs: object) -> NoReturn:
        self._unsupported()

    def list_events(self, *args: object, **kwargs: object) -> NoReturn:
        self._unsupported()

    def iter_events(self, *args: object, **kwargs: object) -> NoReturn:
        self._unsupported()

    def revoke_api_key(self, *args: object, **kwargs: object) -> NoReturn:
        self._unsupported()

    def delegate(self, *args: object, **kwargs: object) -> NoReturn:
        self._unsupported()

    def revoke(self, *args: object, **kwargs: object) -> NoReturn:
        self._unsupported()

    def sign_out_everywhere(self, *args: object, **kwargs: object) -> NoReturn:
        self._unsupported()

    @property
    def sessions(self) -> NoReturn:
        self._unsupported()

    def whoami(self, *args: object, **kwargs: object) -> NoReturn:
        self._unsupported()

    def exchange(self, *args: object, **kwargs: object) -> NoReturn:
        self._unsupported()

    def refresh_access_token(self, *args: object, **kwargs: object) -> NoReturn:
        self._unsupported()


def _key_path(key_id: str, action: str | None = None) -> str:
    if not isinstance(key_id, str) or not key_id:
        raise ValueError("key_id must be a non-empty string")
    # Quoted whole, so an id can never climb out of its path segment.
    path = f"{KEYS}/{quote(key_id, safe='')}"
    return f"{path}/{action}" if action else path


def _session_path(session_id: str) -> str:
    if not isinstance(session_id, str) or not session_id:
        raise ValueError("session_id must be a non-empty string")
    return f"{SESSIONS}/{quote(session_id, safe='')}"


def _plain(secret: str | SecretStr) -> str:
    return secret.get_secret_value() if isinstance(secret, SecretStr) else secret


def _parse(model: type[Model], response: httpx.Response) -> Model:
    method, path = response.request.method, response.request.url.path
    try:
        data = response.json()
    except ValueError:
        data = None
    return _validate(model, data, method, path)


def _validate(model: type[Model], data: object, method: str, path: str) -> Model:
    try:
        parsed: Model | None = model.model_validate(data)
    except ValidationError:
        parsed = None
    if parsed is None:
        # Raised outside the `except`: pydantic's message quotes the input, which may hold
        # a plaintext key, and a chained traceback would print it.
        raise UnexpectedResponseError(method, path)
    return parsed
