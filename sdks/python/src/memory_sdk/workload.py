"""Workload identity federation: a credential for CI jobs and pods, with no stored secret.

The workload's platform gives it an OIDC token: a file (Kubernetes' projected service-account
token, GitLab's `id_tokens`, any platform: MEMORY_OIDC_TOKEN_FILE) or GitHub Actions' token
endpoint (ACTIONS_ID_TOKEN_REQUEST_URL and ACTIONS_ID_TOKEN_REQUEST_TOKEN, asked for the
audience MEMORY_OIDC_AUDIENCE). `WorkloadIdentity` exchanges it at `/v1/auth/exchange`
(RFC 8693, subject_token_type jwt) for a short-lived token of MEMORY_WORKSPACE_ID, and
exchanges again (with a fresh platform token) before that one expires.

    identity = WorkloadIdentity.from_env()
    token = await identity.token()   # "Authorization: Bearer <token>" on data-plane calls
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Callable, Mapping
from pathlib import Path

import httpx

from memory_sdk.errors import UnexpectedResponseError, issued_token

TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"
JWT_TYPE = "urn:ietf:params:oauth:token-type:jwt"
EXCHANGE_PATH = "/v1/auth/exchange"
DEFAULT_ENDPOINT = "https://api.memory.example"
REFRESH_MARGIN = 60.0  # seconds before expiry when the token is exchanged again


class WorkloadIdentityError(Exception):
    """The workload identity is not configured, or the exchange was refused. The message
    holds the service's `error` and `error_description`, never a token."""


class WorkloadIdentity:
    def __init__(
        self,
        *,
        endpoint: str,
        workspace_id: str,
        token_file: str | None = None,
        request_url: str | None = None,
        request_token: str | None = None,
        audience: str | None = None,
        scope: str | None = None,
        http_transport: httpx.AsyncBaseTransport | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if not workspace_id:
            raise WorkloadIdentityError("Set MEMORY_WORKSPACE_ID (the workspace to act in).")
        if token_file is None and not (request_url and request_token):
            raise WorkloadIdentityError(
                "Set MEMORY_OIDC_TOKEN_FILE, or run in GitHub Actions with "
                "`permissions: id-token: write` (ACTIONS_ID_TOKEN_REQUEST_URL/_TOKEN)."
            )
        self._endpoint = endpoint.rstrip("/")
        self._workspace_id = workspace_id
        self._token_file = token_file
        self._request_url = request_url
        self._request_token = request_token
        self._audience = audience
        self._scope = scope
        self._transport = http_transport
        self._clock = clock
        self._token: str | None = None
        self._expires_at = 0.0
        self._lock = asyncio.Lock()

    def __repr__(self) -> str:
        source = "file" if self._token_file else "github-actions"
        return f"WorkloadIdentity(workspace_id={self._workspace_id!r}, source={source!r})"

    @classmethod
    def from_env(
        cls,
        environ: Mapping[str, str] | None = None,
        http_transport: httpx.AsyncBaseTransport | None = None,
    ) -> WorkloadIdentity:
        env = os.environ if environ is None else environ
        return cls(
            endpoint=env.get("MEMORY_ENDPOINT", DEFAULT_ENDPOINT),
            workspace_id=env.get("MEMORY_WORKSPACE_ID", ""),
            token_file=env.get("MEMORY_OIDC_TOKEN_FILE") or None,
            request_url=env.get("ACTIONS_ID_TOKEN_REQUEST_URL") or None,
            request_token=env.get("ACTIONS_ID_TOKEN_REQUEST_TOKEN") or None,
            audience=env.get("MEMORY_OIDC_AUDIENCE") or None,
            http_transport=http_transport,
        )

    async def token(self) -> str:
        """A workload token of the workspace, exchanged again when it is near its end."""
        async with self._lock:
            if self._token is None or self._clock() >= self._expires_at - REFRESH_MARGIN:
                await self._exchange()
            assert self._token is not None
            return self._token

    async def _subject_token(self, http: httpx.AsyncClient) -> str:
        if self._token_file is not None:
            # Read each time: Kubernetes rotates a projected token in place.
            text = await asyncio.to_thread(Path(self._token_file).read_text, encoding="utf-8")
            return text.strip()
        assert self._request_url is not None and self._request_token is not None
        url = httpx.URL(self._request_url)  # it carries api-version: add to its query
        if self._audience:
            url = url.copy_merge_params({"audience": self._audience})
        answer = await http.get(
            url,
            headers={"Authorization": f"Bearer {self._request_token}"},
        )
        if answer.status_code != 200:
            raise WorkloadIdentityError(
                f"GitHub Actions' token endpoint answered {answer.status_code}."
            )
        value = answer.json().get("value")
        if not isinstance(value, str):
            raise UnexpectedResponseError("GET", "ACTIONS_ID_TOKEN_REQUEST_URL")
        return value

    async def _exchange(self) -> None:
        async with httpx.AsyncClient(transport=self._transport, timeout=30) as http:
            form = {
                "grant_type": TOKEN_EXCHANGE,
                "subject_token": await self._subject_token(http),
                "subject_token_type": JWT_TYPE,
                "workspace_id": self._workspace_id,
            }
            if self._scope:
                form["scope"] = self._scope
            started = self._clock()
            answer = await http.post(self._endpoint + EXCHANGE_PATH, data=form)
        token, expires_in = issued_token(
            answer, EXCHANGE_PATH, WorkloadIdentityError, "The exchange"
        )
        self._token = token
        self._expires_at = started + expires_in
