"""MCP_RESOURCES, LOGIN_PROVIDER and MCP_REGISTRATION_LIMIT: what we issue MCP tokens for,
where people sign in, and how many clients one address may register in an hour.

Standard library only: the data-plane authorizer reads the resources on its cold start.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

if TYPE_CHECKING:
    from chalicelib.config import TrustedIssuer

PROTECTED_RESOURCE_WELL_KNOWN = "/.well-known/oauth-protected-resource"
DEFAULT_REGISTRATION_LIMIT = 20  # per source address per hour
MAX_REGISTRATION_LIMIT = 100_000
_LOGIN_FIELDS = {"issuer", "clientId"}
_LOGIN_OPTIONAL = {"authorizationEndpoint", "tokenEndpoint"}


@dataclass(frozen=True)
class McpResource:
    """A protected resource (an MCP endpoint) whose tokens this service issues."""

    uri: str  # canonical: compared exactly with `resource` and used as the tokens' `aud`
    path: str  # the URI's path: requests under it are requests to this resource

    @property
    def metadata_url(self) -> str:
        """Its Protected Resource Metadata URL (RFC 9728 §3.1: well-known, then the path)."""
        parts = urlsplit(self.uri)
        return f"{parts.scheme}://{parts.netloc}{PROTECTED_RESOURCE_WELL_KNOWN}{self.path}"

    def covers(self, path: str) -> bool:
        return path == self.path or path.startswith(self.path.rstrip("/") + "/")


@dataclass(frozen=True)
class LoginProvider:
    """The OpenID Connect provider whose sign-in an MCP authorization goes through."""

    issuer: str
    client_id: str
    # Read from the provider's discovery document unless configured.
    authorization_endpoint: str | None = None
    token_endpoint: str | None = None


def parse_mcp_resources(text: str, local_mode: bool) -> tuple[McpResource, ...]:
    """MCP_RESOURCES: a JSON list of canonical resource URIs. ValueError if bad."""
    if not text.strip():
        return ()
    try:
        entries = json.loads(text)
    except ValueError:
        raise ValueError("MCP_RESOURCES is not valid JSON") from None
    if not isinstance(entries, list):
        raise ValueError("MCP_RESOURCES must be a JSON list of URLs")
    from chalicelib.config import check_url  # config imports this module: not at the top

    resources: list[McpResource] = []
    for position, entry in enumerate(entries):
        where = f"MCP_RESOURCES[{position}]"
        uri = check_url(entry, where, local_mode)
        parts = urlsplit(uri)
        if parts.query:
            raise ValueError(f"{where} must not have a query (RFC 8707 §2)")
        if parts.path in ("", "/") or parts.path != parts.path.strip() or "//" in parts.path:
            raise ValueError(f"{where} must have a path, such as https://memory.example.com/mcp")
        if not uri.startswith(parts.scheme + "://") or parts.netloc != parts.netloc.lower():
            raise ValueError(f"{where} must be canonical: lower-case scheme and host")
        if uri.endswith("/"):
            raise ValueError(f"{where} must not end with a slash")
        resource = McpResource(uri, parts.path)
        # The authorizer tells resources apart by their paths alone.
        if any(r.covers(resource.path) or resource.covers(r.path) for r in resources):
            raise ValueError(f"{where} overlaps the path of another resource")
        resources.append(resource)
    return tuple(resources)


def parse_login_provider(
    text: str, local_mode: bool, trusted_issuers: tuple[TrustedIssuer, ...]
) -> LoginProvider | None:
    """LOGIN_PROVIDER: {"issuer", "clientId"[, "authorizationEndpoint", "tokenEndpoint"]}.

    The provider must be one of TRUSTED_ISSUERS with `clientId` as its audience, so that the
    ID token it returns is verified exactly like an exchanged one.
    """
    from chalicelib.config import check_url  # config imports this module: not at the top

    if not text.strip():
        return None
    try:
        entry: Any = json.loads(text)
    except ValueError:
        raise ValueError("LOGIN_PROVIDER is not valid JSON") from None
    if not isinstance(entry, dict) or not _LOGIN_FIELDS <= set(entry) <= (
        _LOGIN_FIELDS | _LOGIN_OPTIONAL
    ):
        raise ValueError(
            "LOGIN_PROVIDER must have the fields issuer and clientId"
            " (and optionally authorizationEndpoint, tokenEndpoint)"
        )
    issuer, client_id = entry["issuer"], entry["clientId"]
    if not isinstance(client_id, str) or not client_id.strip():
        raise ValueError("LOGIN_PROVIDER.clientId must be a non-empty string")
    trusted = {t.issuer: t for t in trusted_issuers}.get(issuer)
    if trusted is None or trusted.audience != client_id:
        raise ValueError(
            "LOGIN_PROVIDER must name an issuer of TRUSTED_ISSUERS whose audience is its clientId"
        )
    endpoints = {
        name: check_url(entry[name], f"LOGIN_PROVIDER.{name}", local_mode)
        for name in _LOGIN_OPTIONAL
        if name in entry
    }
    return LoginProvider(
        issuer,
        client_id,
        authorization_endpoint=endpoints.get("authorizationEndpoint"),
        token_endpoint=endpoints.get("tokenEndpoint"),
    )


def parse_registration_limit(text: str) -> int:
    """MCP_REGISTRATION_LIMIT: registrations per source address per hour. ValueError if bad.

    Clients behind one NAT (an office, a carrier) share an address, hence a stage setting."""
    if not text.strip():
        return DEFAULT_REGISTRATION_LIMIT
    value = text.strip()
    if not value.isascii() or not value.isdigit() or not 1 <= int(value) <= MAX_REGISTRATION_LIMIT:
        raise ValueError(
            f"MCP_REGISTRATION_LIMIT must be a whole number from 1 to {MAX_REGISTRATION_LIMIT}"
        )
    return int(value)


def canonical_resource(uri: str) -> str:
    """`uri` with its scheme and host in lower case, as MCP_RESOURCES holds them (both are
    case-insensitive, RFC 3986 §6.2.2.1); the rest exactly as sent."""
    scheme, separator, rest = uri.partition("://")
    if not separator:
        return uri
    host, slash, path = rest.partition("/")
    return f"{scheme.lower()}://{host.lower()}{slash}{path}"


def resource_for_path(path: str | None, resources: tuple[McpResource, ...]) -> McpResource | None:
    if not path:
        return None
    for resource in resources:
        if resource.covers(path):
            return resource
    return None
