"""This service as an OpenID Connect client of the login provider (LOGIN_PROVIDER).

An MCP authorization signs its user in with the authorization code flow and PKCE (S256) at
the provider, with a fresh `nonce`; `login_hint` is passed on. The ID token the provider's
token endpoint returns is verified by the same verifier as an exchanged one
(`chalicelib/sessions/openid.py`), plus the nonce. The provider's endpoints come from its
discovery document unless configured. The provider is configured, never named by a client,
so it is fetched like any trusted dependency: a failure is 503, never a sign-in.

The answer at our callback must name the provider in `iss` (RFC 9207) when the discovery
document says `authorization_response_iss_parameter_supported`; an `iss` naming anyone else
is always refused. With both endpoints configured the document is not read, so an answer
without `iss` is then accepted.
"""

from __future__ import annotations

import base64
import hashlib
import json
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Any, Protocol
from urllib.parse import urlencode

from chalicelib.config import LoginProvider
from chalicelib.errors import DependencyUnavailable

TIMEOUT = 3.0  # seconds per request to the provider
DISCOVERY_LIFESPAN = 3600.0  # seconds the provider's endpoints are kept
MAX_ANSWER_BYTES = 64 * 1024
SCOPE = "openid email profile"


class SignInFailed(Exception):
    """The provider refused the sign-in or returned no usable ID token (safe to show)."""

    def __init__(self, description: str):
        super().__init__(description)
        self.description = description


class ProviderTransport(Protocol):
    def get_json(self, url: str) -> Any: ...

    def post_form(self, url: str, form: dict[str, str]) -> tuple[int, Any]: ...


class HttpTransport:
    """urllib with short timeouts; anything but an answer in JSON is DependencyUnavailable."""

    def _read(self, request: urllib.request.Request) -> tuple[int, Any]:
        try:
            with urllib.request.urlopen(request, timeout=TIMEOUT) as answer:  # noqa: S310 - configured https URL
                status, raw = answer.status, answer.read(MAX_ANSWER_BYTES + 1)
        except urllib.error.HTTPError as error:
            status, raw = error.code, error.read(MAX_ANSWER_BYTES + 1)
        except (OSError, ValueError):
            raise DependencyUnavailable("login provider") from None
        if len(raw) > MAX_ANSWER_BYTES:
            raise DependencyUnavailable("login provider")
        try:
            return status, json.loads(raw)
        except ValueError:
            raise DependencyUnavailable("login provider") from None

    def get_json(self, url: str) -> Any:
        status, body = self._read(
            urllib.request.Request(url, headers={"Accept": "application/json"})  # noqa: S310
        )
        if status != 200:
            raise DependencyUnavailable("login provider")
        return body

    def post_form(self, url: str, form: dict[str, str]) -> tuple[int, Any]:
        request = urllib.request.Request(  # noqa: S310 - the configured token endpoint
            url,
            data=urlencode(form).encode("ascii"),
            headers={
                "Content-Type": "application/x-www-form-urlencoded",
                "Accept": "application/json",
            },
            method="POST",
        )
        return self._read(request)


def s256(verifier: str) -> str:
    digest = hashlib.sha256(verifier.encode("ascii")).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


@dataclass(frozen=True)
class ProviderMetadata:
    """What this client uses of the provider's discovery document (or its configuration)."""

    authorization_endpoint: str
    token_endpoint: str
    # RFC 9207 §3: the provider puts `iss` in every answer, so an answer without it is forged.
    sends_issuer: bool = False


class LoginProviderClient:
    def __init__(self, provider: LoginProvider, redirect_uri: str, transport: ProviderTransport):
        self.provider = provider
        self.redirect_uri = redirect_uri
        self._transport = transport
        self._metadata: ProviderMetadata | None = None
        self._fetched_at = 0.0
        self._lock = threading.Lock()

    def _discover(self) -> ProviderMetadata:
        configured = (self.provider.authorization_endpoint, self.provider.token_endpoint)
        if configured[0] and configured[1]:
            return ProviderMetadata(configured[0], configured[1])
        with self._lock:
            if self._metadata and time.monotonic() - self._fetched_at < DISCOVERY_LIFESPAN:
                return self._metadata
        document = self._transport.get_json(
            self.provider.issuer.rstrip("/") + "/.well-known/openid-configuration"
        )
        if not isinstance(document, dict) or document.get("issuer") != self.provider.issuer:
            raise DependencyUnavailable("login provider")  # a document for someone else
        authorization, token = (
            configured[0] or document.get("authorization_endpoint"),
            configured[1] or document.get("token_endpoint"),
        )
        if not isinstance(authorization, str) or not isinstance(token, str):
            raise DependencyUnavailable("login provider")
        metadata = ProviderMetadata(
            authorization,
            token,
            sends_issuer=document.get("authorization_response_iss_parameter_supported") is True,
        )
        with self._lock:
            self._metadata, self._fetched_at = metadata, time.monotonic()
        return metadata

    def answered_by_provider(self, issuer: str | None) -> bool:
        """Whether an answer at our callback, with this `iss` (None: without one), may be the
        provider's (RFC 9207 §2.4): never if it names another issuer; without `iss` only if
        the provider does not say it always sends one. DependencyUnavailable if unreadable."""
        if issuer is not None:
            return issuer == self.provider.issuer
        return not self._discover().sends_issuer

    def authorization_url(
        self, state: str, nonce: str, verifier: str, login_hint: str | None = None
    ) -> str:
        endpoint = self._discover().authorization_endpoint
        parameters = {
            "response_type": "code",
            "client_id": self.provider.client_id,
            "redirect_uri": self.redirect_uri,
            "scope": SCOPE,
            "state": state,
            "nonce": nonce,
            "code_challenge": s256(verifier),
            "code_challenge_method": "S256",
        }
        if login_hint:
            parameters["login_hint"] = login_hint
        separator = "&" if "?" in endpoint else "?"
        return endpoint + separator + urlencode(parameters)

    def redeem(self, code: str, verifier: str) -> str:
        """The ID token for a code, or SignInFailed; DependencyUnavailable if unreachable."""
        endpoint = self._discover().token_endpoint
        status, body = self._transport.post_form(
            endpoint,
            {
                "grant_type": "authorization_code",
                "code": code,
                "redirect_uri": self.redirect_uri,
                "client_id": self.provider.client_id,
                "code_verifier": verifier,
            },
        )
        if status >= 500:
            raise DependencyUnavailable("login provider")
        id_token = body.get("id_token") if isinstance(body, dict) else None
        if status != 200 or not isinstance(id_token, str):
            raise SignInFailed("The login provider did not confirm the sign-in.")
        return id_token
