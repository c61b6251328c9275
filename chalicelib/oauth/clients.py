"""OAuth clients: Client ID Metadata Documents first, Dynamic Client Registration as fallback.

A `client_id` that is an https URL names its own metadata document, fetched SSRF-safely
(`fetch.py`) and used only if its `client_id` is exactly that URL. Any other `client_id` is a
`cli_…` we issued at `POST /v1/oauth/register` (RFC 7591). Every client is public (no secret:
`token_endpoint_auth_method` `none`) and must use PKCE.

Items (see `items.py`):
  OAUTHCLIENT#<clientId>  CLIENT   a registered client: its metadata, createdAt, ttl
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Protocol
from urllib.parse import urlsplit

from chalicelib import ids, items
from chalicelib.clock import epoch, parse_rfc3339, rfc3339
from chalicelib.errors import INVALID_REDIRECT_URI as _REDIRECT
from chalicelib.fetch import FetchRefused
from chalicelib.hosts import ADDRESS_RULE, names_an_address
from chalicelib.strict_parsing import is_label_text, is_printable
from chalicelib.table import (
    TTL_ATTRIBUTE,
    Attribute,
    Shape,
    get_consistent,
    put,
    to_item,
    update,
    write,
)

REGISTERED_PREFIX = "cli_"
# A registered client nobody authorizes with is forgotten; each authorization extends it.
REGISTRATION_LIFETIME = timedelta(days=180)
MAX_REDIRECT_URIS = 10
MAX_URI_LENGTH = 2000
MAX_NAME_LENGTH = 100
# Schemes that would run or read something in the browser instead of returning to an app.
_FORBIDDEN_SCHEMES = {"javascript", "data", "file", "vbscript", "about", "blob", "ftp", "ws", "wss"}
_SECRET_AUTH_METHODS = {"client_secret_basic", "client_secret_post", "client_secret_jwt"}
REFRESH_TOKEN = "refresh_token"
DEFAULT_GRANT_TYPES = ("authorization_code",)  # RFC 7591 §2: when a client names none


class ClientRejected(Exception):
    """The client cannot be used. `description` is safe to show on the error page."""

    def __init__(self, description: str):
        super().__init__(description)
        self.description = description


class InvalidClientMetadata(Exception):
    """RFC 7591 §3.2.2 `invalid_client_metadata` / `invalid_redirect_uri`."""

    def __init__(self, error: str, description: str):
        super().__init__(description)
        self.error = error
        self.description = description


@dataclass(frozen=True)
class Client:
    client_id: str
    redirect_uris: tuple[str, ...]
    client_name: str | None = None
    metadata_document: bool = False  # True: a Client ID Metadata Document
    grant_types: tuple[str, ...] = DEFAULT_GRANT_TYPES
    # RFC 9449 §5.2: its token requests must come with a DPoP proof (bound tokens only).
    dpop_bound_access_tokens: bool = False

    def redirect_allowed(self, redirect_uri: str) -> bool:
        return any(matches_redirect(r, redirect_uri) for r in self.redirect_uris)

    @property
    def may_refresh(self) -> bool:
        """Whether it gets refresh tokens: only if its `grant_types` say so (RFC 7591 §2)."""
        return REFRESH_TOKEN in self.grant_types


# A loopback http redirect: its scheme and host, then its port, as written. Read on the raw
# string, not with urlsplit: a browser reads `http://evil.example\@127.0.0.1/` as a URL of
# evil.example (a backslash ends the host), urlsplit as one of 127.0.0.1.
_LOOPBACK_REDIRECT = re.compile(
    r"(http://(?:127\.0\.0\.1|\[::1\]|localhost))(?::[0-9]*)?(?=[/?#]|\Z)", re.IGNORECASE
)


def is_loopback_http(uri: str) -> bool:
    return _LOOPBACK_REDIRECT.match(uri) is not None


def matches_redirect(registered: str, requested: str) -> bool:
    """Exact string match; for a loopback http redirect the port may differ (RFC 8252 §7.3:
    a native app picks a free port for each authorization), and nothing else."""
    if registered == requested:
        return True
    a, b = _LOOPBACK_REDIRECT.match(registered), _LOOPBACK_REDIRECT.match(requested)
    if a is None or b is None or "#" in requested:
        return False
    return (a.group(1).lower(), registered[a.end() :]) == (b.group(1).lower(), requested[b.end() :])


def check_redirect_uri(uri: Any) -> str:
    """A redirect URI a client may register, else InvalidClientMetadata."""
    if not isinstance(uri, str) or not 0 < len(uri) <= MAX_URI_LENGTH or not is_printable(uri):
        raise InvalidClientMetadata(_REDIRECT.code, "Each redirect URI must be a URL.")
    try:
        parts = urlsplit(uri)
        parts.port  # noqa: B018 - raises ValueError on a bad port
    except ValueError:
        raise InvalidClientMetadata(
            _REDIRECT.code, "A redirect URI is not valid."
        ) from None
    scheme = parts.scheme.lower()
    if not scheme or scheme in _FORBIDDEN_SCHEMES or " " in uri:
        raise InvalidClientMetadata(_REDIRECT.code, "A redirect URI is not allowed.")
    if parts.fragment or "#" in uri:
        raise InvalidClientMetadata(
            _REDIRECT.code, "A redirect URI must not have a fragment."
        )
    if scheme == "https" and not parts.hostname:
        raise InvalidClientMetadata(_REDIRECT.code, "An https redirect URI needs a host.")
    if scheme == "http" and not is_loopback_http(uri):
        # RFC 8252 §8.3 and OAuth 2.1: plain http only back to the user's own machine.
        raise InvalidClientMetadata(
            _REDIRECT.code, "http redirect URIs must be loopback (127.0.0.1 or [::1])."
        )
    if not is_loopback_http(uri) and names_an_address(uri):
        # The one address a redirect may name is a native app's loopback (RFC 8252 §7.3).
        raise InvalidClientMetadata(
            _REDIRECT.code,
            f"A redirect URI {ADDRESS_RULE}; only a loopback http redirect "
            "(http://127.0.0.1 or http://[::1]) may name an address.",
        )
    return uri


def check_redirect_uris(value: Any) -> tuple[str, ...]:
    if not isinstance(value, list) or not 0 < len(value) <= MAX_REDIRECT_URIS:
        raise InvalidClientMetadata(
            _REDIRECT.code, f"redirect_uris must list 1 to {MAX_REDIRECT_URIS} URIs."
        )
    return tuple(check_redirect_uri(uri) for uri in value)


def client_name(value: Any) -> str | None:
    """A name to show on the consent page, or None. Nothing verifies it: it is shown as
    the client's claim, next to the host it redirects to. The label rule of key labels and
    workspace names (`is_label_text`): a joined emoji is a name's."""
    if not isinstance(value, str):
        return None
    name = value.strip()
    if not 0 < len(name) <= MAX_NAME_LENGTH or not is_label_text(name):
        return None
    return name


def looks_like_metadata_url(client_id: str) -> bool:
    return client_id.startswith(("https://", "http://"))


def check_metadata_document(url: str, document: Any) -> Client:
    """A fetched Client ID Metadata Document as a client, else ClientRejected."""
    if not isinstance(document, dict):
        raise ClientRejected("Its metadata document is not a JSON object.")
    if document.get("client_id") != url:
        raise ClientRejected("Its metadata document names another client_id than its URL.")
    if "client_secret" in document or "client_secret_expires_at" in document:
        raise ClientRejected("Its metadata document must not contain a client secret.")
    method = document.get("token_endpoint_auth_method", "none")
    if method in _SECRET_AUTH_METHODS or method not in ("none",):
        raise ClientRejected("Its metadata document must use token_endpoint_auth_method none.")
    try:
        redirect_uris = check_redirect_uris(document.get("redirect_uris"))
    except InvalidClientMetadata as invalid:
        raise ClientRejected(
            f"Its metadata document is not usable: {invalid.description}"
        ) from None
    grant_types = document.get("grant_types", list(DEFAULT_GRANT_TYPES))
    if not isinstance(grant_types, list) or not all(isinstance(g, str) for g in grant_types):
        raise ClientRejected("Its metadata document's grant_types is not a list of names.")
    dpop_bound = document.get("dpop_bound_access_tokens", False)
    if not isinstance(dpop_bound, bool):
        raise ClientRejected("Its metadata document's dpop_bound_access_tokens is not a boolean.")
    # Required by the MCP revision of 2026-07-28: the consent page names the application.
    # (One it cannot show safely, a bidirectional override say, it shows as no name.)
    name = document.get("client_name")
    if not isinstance(name, str) or not name.strip():
        raise ClientRejected("Its metadata document has no client_name, which is required.")
    return Client(url, redirect_uris, client_name(name), True, tuple(grant_types), dpop_bound)


def check_metadata_url(client_id: str) -> None:
    """The shape rules of a client_id URL (no I/O); ClientRejected if broken."""
    try:
        parts = urlsplit(client_id)
    except ValueError:
        raise ClientRejected("The client_id is not a valid URL.") from None
    if not is_loopback_http(client_id) and names_an_address(client_id):
        # Loopback http is the local stack's (the fetcher refuses http in any other mode).
        raise ClientRejected(f"A client_id URL {ADDRESS_RULE}.")
    if parts.path in ("", "/"):
        raise ClientRejected("A client_id URL must have a path.")
    if any(segment in (".", "..") for segment in parts.path.split("/")):
        raise ClientRejected("A client_id URL must not have dot segments.")


@dataclass(frozen=True)
class Registration:
    """A registered client as stored (`OAUTHCLIENT#<client id>`); `expires` is its TTL."""

    client_id: str
    client_name: str | None
    redirect_uris: tuple[str, ...] | None
    application_type: str | None
    grant_types: tuple[str, ...] | None
    created_at: datetime | None
    expires: int
    dpop_bound_access_tokens: bool = False

    def client(self) -> Client:
        return Client(
            self.client_id,
            self.redirect_uris or (),
            self.client_name,
            grant_types=self.grant_types or DEFAULT_GRANT_TYPES,
            dpop_bound_access_tokens=self.dpop_bound_access_tokens,
        )


REGISTRATION_SHAPE = Shape(
    Registration,
    [
        Attribute("clientId", "client_id"),
        Attribute("clientName", "client_name"),
        Attribute("redirectUris", "redirect_uris", write=list, read=tuple),
        Attribute("applicationType", "application_type"),
        Attribute("grantTypes", "grant_types", write=list, read=tuple),
        Attribute("createdAt", "created_at", rfc3339, parse_rfc3339),
        Attribute(TTL_ATTRIBUTE, "expires", read=int, missing=0),
        Attribute(
            "dpopBoundAccessTokens",
            "dpop_bound_access_tokens",
            write=lambda bound: bound or None,  # only a bound client's item carries it
            read=bool,
            missing=False,
        ),
    ],
)


class FetchesJson(Protocol):
    def fetch_json(self, url: str) -> Any: ...

    def forget(self, url: str) -> None: ...


class ClientStore:
    def __init__(self, client: Any, table_name: str, documents: FetchesJson):
        self._client = client
        self._table = table_name
        self._documents = documents

    def find(self, client_id: str, now: datetime) -> Client:
        """The client of an authorization request, or ClientRejected (shown, never redirected)."""
        if not client_id or len(client_id) > MAX_URI_LENGTH or not is_printable(client_id):
            raise ClientRejected("The request has no valid client_id.")
        if looks_like_metadata_url(client_id):
            check_metadata_url(client_id)
            try:
                document = self._documents.fetch_json(client_id)
            except FetchRefused as refused:
                raise ClientRejected(
                    f"The client's metadata document could not be used: {refused.reason}."
                ) from None
            try:
                return check_metadata_document(client_id, document)
            except ClientRejected:
                self._documents.forget(client_id)  # never keep an unusable document
                raise
        registered = self.registered(client_id, now)
        if registered is None:
            raise ClientRejected("This client_id is not known here.")
        return registered

    def registered(self, client_id: str, now: datetime) -> Client | None:
        if not client_id.startswith(REGISTERED_PREFIX) or len(client_id) > 64:
            return None
        values = get_consistent(self._client, self._table, items.oauth_client(client_id))
        if values is None:
            return None
        registration = REGISTRATION_SHAPE.record(values, client_id=client_id)
        if registration.redirect_uris is None or registration.expires <= epoch(now):
            return None
        return registration.client()

    def register(
        self,
        now: datetime,
        *,
        redirect_uris: Sequence[str],
        application_type: str,
        grant_types: Sequence[str],
        client_name: str | None,
        dpop_bound_access_tokens: bool = False,
    ) -> dict[str, Any]:
        """RFC 7591 §3.1: the registered client's metadata, with its new `client_id`. The
        metadata as the edge validated it (`ClientMetadata` in api/oauth_models.py)."""
        client_id = REGISTERED_PREFIX + ids.ulid(now)
        registration = Registration(
            client_id,
            client_name,
            tuple(redirect_uris),
            application_type,
            tuple(grant_types),
            now,
            epoch(now + REGISTRATION_LIFETIME),
            dpop_bound_access_tokens,
        )
        item = to_item(REGISTRATION_SHAPE.values(registration))
        item.update(items.oauth_client(client_id))
        # A ULID is never reused, so a plain put cannot overwrite another client.
        write(self._client, put(self._table, item))
        answer: dict[str, Any] = {
            "client_id": client_id,
            "client_id_issued_at": epoch(now),
            "redirect_uris": list(redirect_uris),
            "token_endpoint_auth_method": "none",
            "grant_types": list(grant_types),
            "response_types": ["code"],
            "application_type": application_type,
            "dpop_bound_access_tokens": dpop_bound_access_tokens,
        }
        if client_name is not None:
            answer["client_name"] = client_name
        return answer

    def extend(self, client_id: str, now: datetime) -> dict[str, Any] | None:
        """The write keeping a registered client for another lifetime (None for
        a metadata-document client, which we do not store)."""
        if not client_id.startswith(REGISTERED_PREFIX):
            return None
        lifetime = {"ttl": epoch(now + REGISTRATION_LIFETIME)}
        return update(self._table, items.oauth_client(client_id), "SET #ttl = :ttl", None, lifetime)
