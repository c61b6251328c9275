"""HTTP to the hosted service: one request, retried when that is safe, errors typed.

What is retried, and how long to wait, is the policy in `memory_sdk.retry`. The budget comes
from `svc.retries`, `svc.backoff`, `svc.backoff_max` and `svc.retry_after_max`, whose defaults
are the policy's.
"""

from __future__ import annotations

import asyncio
import email.utils
import logging
import random
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import httpx

from memory_sdk import retry
from memory_sdk.config import ClientSettings
from memory_sdk.dpop import DpopKey
from memory_sdk.errors import (
    ApiError,
    DelegatedTokenExpiredError,
    MemorySDKError,
    NetworkError,
    RequestTimeoutError,
    error_class,
)

logger = logging.getLogger("memory_sdk")

USER_AGENT = "memory-sdk-python/0.1.0"
ACCEPT = "application/json, application/problem+json"

# Failures raised before any byte of the request was written: always safe to re-send.
_NOT_SENT = (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout)


@dataclass(frozen=True)
class Call:
    """One API call, as the auth methods describe it."""

    method: str
    path: str
    # Bodies can hold tokens (exchange, refresh): kept out of the repr, so out of tracebacks.
    json: Mapping[str, Any] | None = field(default=None, repr=False)
    params: Mapping[str, str] | None = None
    workspace_id: str | None = None
    # False: no X-Workspace-Id unless `workspace_id` names one (not the configured one).
    default_workspace: bool = True
    authenticated: bool = True
    oauth: bool = False  # errors are RFC 6749 bodies, not problem+json
    headers: Mapping[str, str] = field(default_factory=dict, repr=False)
    # Sent as Idempotency-Key: the service answers every send of it with the first result,
    # so the call is safe to repeat (memory_sdk.retry).
    idempotency_key: str | None = field(default=None, repr=False)
    # Seconds from the first send during which a POST without a key may still be repeated
    # (the service takes it again for a while: a refresh); None: it never is.
    repeatable_within: float | None = None

    def repeatable(self, elapsed: float) -> bool:
        """Whether the service takes this call again, `elapsed` seconds after it was sent."""
        if self.idempotency_key is not None:
            return True
        return self.repeatable_within is not None and elapsed < self.repeatable_within


@dataclass(frozen=True)
class _Failure:
    error: MemorySDKError
    status: int | None = None  # None: no answer
    sent: bool = True  # False: the request certainly never left this process
    retry_after: float | None = None


class Transport:
    """Sends `Call`s with the client's settings and its current bearer credential."""

    def __init__(
        self,
        settings: ClientSettings,
        bearer: Callable[[], str | None],
        *,
        http_transport: httpx.AsyncBaseTransport | None = None,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        jitter: Callable[[], float] = random.random,
        clock: Callable[[], float] = time.monotonic,
        dpop: DpopKey | None = None,
    ) -> None:
        self._settings = settings
        # With a DPoP key, every request carries a proof by it, and the credential goes as
        # `Authorization: DPoP` (memory_sdk.dpop); `_nonce` is the last one the service gave.
        self.dpop = dpop
        self._nonce: str | None = None
        self._options = settings.svc
        self._bearer = bearer
        # A delegated token cannot be refreshed: its expiry is said so (DelegatedTokenExpired).
        self.delegated = False
        self._sleep = sleep
        self._jitter = jitter
        self._clock = clock
        self._http = httpx.AsyncClient(
            base_url=settings.endpoint,
            timeout=self._options.timeout,
            headers={"User-Agent": USER_AGENT, "Accept": ACCEPT, **self._options.headers},
            transport=http_transport,
            # A redirect would carry the bearer credential to wherever it points.
            follow_redirects=False,
        )

    def __repr__(self) -> str:
        return f"Transport(endpoint={self._settings.endpoint!r})"

    async def aclose(self) -> None:
        await self._http.aclose()

    async def send(self, call: Call) -> httpx.Response:
        """The successful response, or a raised `ApiError` / `NetworkError`."""
        attempt = 0
        started = self._clock()
        while True:
            outcome = await self._attempt(call, attempt)
            if isinstance(outcome, httpx.Response):
                return outcome
            delay = None
            if attempt < self._options.retries and retry.should_retry(
                call.method,
                status=outcome.status,
                sent=outcome.sent,
                repeatable=call.repeatable(self._clock() - started),
            ):
                delay = retry.retry_delay(
                    attempt,
                    outcome.retry_after,
                    base=self._options.backoff,
                    cap=self._options.backoff_max,
                    retry_after_max=self._options.retry_after_max,
                    jitter=self._jitter,
                )
            if delay is None:
                error = outcome.error
                if (
                    self.delegated
                    and isinstance(error, ApiError)
                    and error.code == "expired_credentials"
                ):
                    raise DelegatedTokenExpiredError(
                        error.status,
                        error.code,
                        "This client runs on a delegated token, which has expired and cannot "
                        "be refreshed: mint a new one (client.auth.delegate) from the "
                        "credential it came from.",
                        method=call.method,
                        path=call.path,
                    ) from error
                raise error
            logger.debug(
                "retrying %s %s in %.2f s (%s)",
                call.method,
                call.path,
                delay,
                type(outcome.error).__name__,
            )
            await self._sleep(delay)
            attempt += 1

    async def _attempt(self, call: Call, attempt: int) -> httpx.Response | _Failure:
        response = await self._send_once(call)
        if isinstance(response, httpx.Response) and self._asks_nonce(response):
            # The service wants its nonce in the proof (RFC 9449 §8): sign again, once.
            response = await self._send_once(call)
        if not isinstance(response, httpx.Response):
            return response
        logger.debug(
            "%s %s -> %d (attempt %d)", call.method, call.path, response.status_code, attempt + 1
        )
        if response.is_success:
            return response
        api = api_error(response, call)
        return _Failure(api, status=response.status_code, retry_after=api.retry_after)

    def _asks_nonce(self, response: httpx.Response) -> bool:
        nonce = response.headers.get("DPoP-Nonce")
        if self.dpop is None or nonce is None:
            return False
        self._nonce = nonce
        if response.status_code not in (400, 401):
            return False
        challenge = response.headers.get("WWW-Authenticate", "")
        try:
            error = response.json().get("error")
        except (ValueError, AttributeError):
            error = None
        return error == "use_dpop_nonce" or "use_dpop_nonce" in challenge

    async def _send_once(self, call: Call) -> httpx.Response | _Failure:
        request = self._http.build_request(
            call.method, call.path, json=call.json, params=call.params, headers=self._headers(call)
        )
        if self.dpop is not None and (call.authenticated or call.oauth):
            credential = request.headers.get("Authorization", "").removeprefix("Bearer ")
            if call.authenticated and credential:
                request.headers["Authorization"] = f"DPoP {credential}"
            request.headers["DPoP"] = self.dpop.proof(
                call.method,
                str(request.url),
                credential if call.authenticated and credential else None,
                self._nonce,
            )
        try:
            response = await self._http.send(request)
        except _NOT_SENT as error:
            logger.debug("%s %s: not sent (%s)", call.method, call.path, type(error).__name__)
            failure = _network_error(error)(
                f"cannot connect to {self._settings.endpoint} ({type(error).__name__})",
                may_have_reached=False,
            )
            failure.__cause__ = error
            return _Failure(failure, sent=False)
        except httpx.TransportError as error:
            logger.debug("%s %s: failed (%s)", call.method, call.path, type(error).__name__)
            failure = _network_error(error)(
                f"{call.method} {call.path} failed ({type(error).__name__})",
                may_have_reached=True,
            )
            failure.__cause__ = error
            return _Failure(failure)
        return response

    def _headers(self, call: Call) -> dict[str, str]:
        headers = dict(call.headers)
        if call.idempotency_key is not None:
            headers[retry.IDEMPOTENCY_HEADER] = call.idempotency_key
        if call.authenticated:
            bearer = self._bearer()
            if bearer is not None:
                headers["Authorization"] = f"Bearer {bearer}"
            workspace_id = call.workspace_id or (
                self._settings.workspace_id if call.default_workspace else None
            )
            if workspace_id is not None:
                headers["X-Workspace-Id"] = workspace_id
        return headers


def _network_error(error: httpx.TransportError) -> type[NetworkError]:
    return RequestTimeoutError if isinstance(error, httpx.TimeoutException) else NetworkError


def api_error(response: httpx.Response, call: Call) -> ApiError:
    """The typed error for a non-2xx answer, from its problem+json or OAuth body."""
    code: str | None = None
    detail = response.reason_phrase or f"HTTP {response.status_code}"
    try:
        body = response.json()
    except ValueError:
        body = None
    oauth = False
    if isinstance(body, dict):
        if isinstance(body.get("code"), str):
            code = body["code"]
            detail = str(body.get("detail") or body.get("title") or detail)
        elif call.oauth and isinstance(body.get("error"), str):
            code = body["error"]
            detail = str(body.get("error_description") or detail)
            oauth = True
    cls = error_class(response.status_code, oauth=oauth)
    return cls(
        response.status_code,
        code,
        detail,
        method=call.method,
        path=call.path,
        retry_after=retry_after_seconds(response.headers.get("Retry-After")),
    )


def retry_after_seconds(value: str | None, now: datetime | None = None) -> float | None:
    """`Retry-After` as seconds from now (delta-seconds or an HTTP date), None if unusable."""
    if value is None:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - (now or datetime.now(UTC))).total_seconds())
