"""Settings from the environment (every variable is listed in the README's Configuration).

Every variable is parsed here, once, when the container starts: the issuers the exchange
trusts, the MCP resources this service issues tokens for (MCP_RESOURCES), where people sign
in (LOGIN_PROVIDER, DASHBOARD_LOGIN), how many clients one address may register in an hour.
Standard library only: the data-plane authorizer reads the MCP resources on its cold start.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any, NamedTuple
from urllib.parse import urlsplit

from chalicelib.records import Record

GITHUB_SECRET_SCANNING_KEYS = "https://api.github.com/meta/public_keys/secret_scanning"

PROTECTED_RESOURCE_WELL_KNOWN = "/.well-known/oauth-protected-resource"
DEFAULT_REGISTRATION_LIMIT = 20  # per source address per hour
MAX_REGISTRATION_LIMIT = 100_000
# Maximum counts per stage (409 limit_reached beyond): variable -> default.
KEY_LIMIT = "KEY_LIMIT"  # non-revoked keys per user
WORKSPACE_LIMIT = "WORKSPACE_LIMIT"  # workspaces owned per user
MEMBER_LIMIT = "MEMBER_LIMIT"  # members per workspace
TRUST_POLICY_LIMIT = "TRUST_POLICY_LIMIT"  # trust policies per workspace
DEFAULT_LIMITS = {
    KEY_LIMIT: 1_000,
    WORKSPACE_LIMIT: 100,
    MEMBER_LIMIT: 1_000,
    TRUST_POLICY_LIMIT: 20,
}
MAX_STAGE_LIMIT = 1_000_000
# How often a container writes a key's usage counts (and lastUsedAt): 5 minutes, which bounds
# the write budget; LOCAL_MODE may shorten it so that counts show within seconds.
DEFAULT_USAGE_FLUSH_SECONDS = 300
_LOGIN_FIELDS = frozenset({"issuer", "clientId"})
_LOGIN_ENDPOINTS = frozenset({"authorizationEndpoint", "tokenEndpoint"})


class ConfigurationError(Exception):
    pass


_LOOPBACK_HOSTS = {"127.0.0.1", "localhost", "::1"}
_ISSUER_FIELDS = {"issuer", "audience", "jwksUri"}


class TrustedIssuer(NamedTuple):
    issuer: str  # compared exactly with the token's `iss` (no normalisation: OIDC says so)
    audience: str  # the client id our dashboard has at that issuer
    jwks_uri: str


def check_url(value: Any, name: str, local_mode: bool) -> str:
    if not isinstance(value, str) or not value.strip() or value != value.strip():
        raise ValueError(f"{name} must be a non-empty URL without surrounding spaces")
    parts = urlsplit(value)
    if parts.scheme == "http":
        # Plain HTTP only for a development issuer on this machine, and only in local mode:
        # that is what keeps `local/idp.py` from ever being trusted by a deployed service.
        if not local_mode or parts.hostname not in _LOOPBACK_HOSTS:
            raise ValueError(f"{name} must use https (http only for loopback in LOCAL_MODE)")
    elif parts.scheme != "https":
        raise ValueError(f"{name} must use https")
    if not parts.hostname or parts.fragment or parts.username or parts.password:
        raise ValueError(f"{name} must be an absolute URL without fragment or credentials")
    return value


def parse_trusted_issuers(text: str, local_mode: bool) -> tuple[TrustedIssuer, ...]:
    """TRUSTED_ISSUERS: a JSON list of {"issuer", "audience", "jwksUri"}. ValueError if bad."""
    if not text.strip():
        return ()
    try:
        entries = json.loads(text)
    except ValueError:
        raise ValueError("TRUSTED_ISSUERS is not valid JSON") from None
    if not isinstance(entries, list):
        raise ValueError("TRUSTED_ISSUERS must be a JSON list")
    issuers: dict[str, TrustedIssuer] = {}
    for position, entry in enumerate(entries):
        where = f"TRUSTED_ISSUERS[{position}]"
        if not isinstance(entry, dict) or set(entry) != _ISSUER_FIELDS:
            raise ValueError(f"{where} must have exactly the fields issuer, audience, jwksUri")
        issuer = check_url(entry["issuer"], f"{where}.issuer", local_mode)
        if urlsplit(issuer).query:
            raise ValueError(f"{where}.issuer must not have a query (OIDC Discovery §3)")
        audience = entry["audience"]
        if not isinstance(audience, str) or not audience.strip():
            raise ValueError(f"{where}.audience must be a non-empty string")
        jwks_uri = check_url(entry["jwksUri"], f"{where}.jwksUri", local_mode)
        if issuer in issuers:
            raise ValueError(f"{where}.issuer is listed twice")
        issuers[issuer] = TrustedIssuer(issuer, audience, jwks_uri)
    return tuple(issuers.values())


class EnterpriseIdp(NamedTuple):
    """An enterprise identity provider whose ID-JAGs the JWT bearer grant accepts."""

    issuer: str
    jwks_uri: str


_IDP_FIELDS = {"issuer", "jwksUri"}


def parse_enterprise_idps(text: str, local_mode: bool) -> tuple[EnterpriseIdp, ...]:
    """ENTERPRISE_IDPS: a JSON list of {"issuer", "jwksUri"}. ValueError if bad."""
    if not text.strip():
        return ()
    try:
        entries = json.loads(text)
    except ValueError:
        raise ValueError("ENTERPRISE_IDPS is not valid JSON") from None
    if not isinstance(entries, list):
        raise ValueError("ENTERPRISE_IDPS must be a JSON list")
    idps: dict[str, EnterpriseIdp] = {}
    for position, entry in enumerate(entries):
        where = f"ENTERPRISE_IDPS[{position}]"
        if not isinstance(entry, dict) or set(entry) != _IDP_FIELDS:
            raise ValueError(f"{where} must have exactly the fields issuer, jwksUri")
        issuer = check_url(entry["issuer"], f"{where}.issuer", local_mode)
        jwks_uri = check_url(entry["jwksUri"], f"{where}.jwksUri", local_mode)
        if issuer in idps:
            raise ValueError(f"{where}.issuer is listed twice")
        idps[issuer] = EnterpriseIdp(issuer, jwks_uri)
    return tuple(idps.values())


class McpResource(NamedTuple):
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


class LoginProvider(NamedTuple):
    """An OpenID Connect provider people sign in at: an MCP authorization's (LOGIN_PROVIDER)
    or the dashboard's (DASHBOARD_LOGIN)."""

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
    text: str,
    local_mode: bool,
    trusted_issuers: Iterable[TrustedIssuer],
    name: str = "LOGIN_PROVIDER",
    endpoints: frozenset[str] = _LOGIN_ENDPOINTS,
) -> LoginProvider | None:
    """A login provider: `{"issuer", "clientId"}` and optionally some of `endpoints`; None when
    unset. LOGIN_PROVIDER (an MCP authorization's sign-in) and DASHBOARD_LOGIN (the
    dashboard's, `name`) are both read by this one parser.

    The provider must be one of TRUSTED_ISSUERS with `clientId` as its audience, so that the
    ID token it returns is verified exactly like an exchanged one (the exchange's list decides
    which issuers are acceptable; a provider can only pick one of them). ValueError if bad.
    """
    if not text.strip():
        return None
    try:
        entry: Any = json.loads(text)
    except ValueError:
        raise ValueError(f"{name} is not valid JSON") from None
    if not isinstance(entry, dict) or not _LOGIN_FIELDS <= set(entry) <= _LOGIN_FIELDS | endpoints:
        optional = ", ".join(f'"{field}"' for field in sorted(endpoints))
        raise ValueError(
            f'{name} must be a JSON object {{"issuer", "clientId"}} (and optionally {optional})'
        )
    issuer, client_id = entry["issuer"], entry["clientId"]
    if not isinstance(client_id, str) or not client_id.strip():
        raise ValueError(f"{name}.clientId must be a non-empty string")
    if not any(t.issuer == issuer and t.audience == client_id for t in trusted_issuers):
        raise ValueError(
            f"{name} names an issuer and client id that TRUSTED_ISSUERS does not trust "
            "(it needs an entry with that issuer and the client id as its audience)"
        )
    urls = {
        field: check_url(entry[field], f"{name}.{field}", local_mode)
        for field in sorted(endpoints & set(entry))
    }
    return LoginProvider(
        issuer,
        client_id,
        authorization_endpoint=urls.get("authorizationEndpoint"),
        token_endpoint=urls.get("tokenEndpoint"),
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


def parse_whole_number(name: str, text: str, default: int, highest: int) -> int:
    """A whole number from 1 to `highest`, `default` when unset. ValueError if bad."""
    if not text.strip():
        return default
    value = text.strip()
    if not value.isascii() or not value.isdigit() or not 1 <= int(value) <= highest:
        raise ValueError(f"{name} must be a whole number from 1 to {highest}")
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


class Settings(Record):
    table_name: str
    encryption_key_id: str
    signing_key_id: str
    previous_signing_key_id: str | None
    issuer: str
    region: str
    # The KMS HMAC key that derives each refresh token's successor (REFRESH_TOKEN_KEY_ID).
    refresh_token_key_id: str
    # OpenID Connect issuers whose ID tokens the exchange accepts (TRUSTED_ISSUERS).
    trusted_issuers: tuple[TrustedIssuer, ...] = ()
    # LOCAL_MODE=1 (set by local/stack.py) allows http:// loopback issuers such as the
    # development IdP. Ignored inside AWS Lambda, so a deployed stage can never turn it on.
    local_mode: bool = False
    # Web origins whose pages may call the API from a browser (ALLOWED_ORIGINS, exact).
    allowed_origins: tuple[str, ...] = ()
    # The MCP resources this service issues tokens for (MCP_RESOURCES), and the OpenID
    # Connect provider people sign in at during an MCP authorization (LOGIN_PROVIDER).
    mcp_resources: tuple[McpResource, ...] = ()
    # Enterprise IdPs whose ID-JAGs the JWT bearer grant accepts (ENTERPRISE_IDPS).
    enterprise_idps: tuple[EnterpriseIdp, ...] = ()
    login_provider: LoginProvider | None = None
    # Client registrations per source address per hour (MCP_REGISTRATION_LIMIT).
    registration_limit: int = DEFAULT_REGISTRATION_LIMIT
    # DASHBOARD_LOGIN as written: parsed by chalicelib/dashboard/sign_in.py when the dashboard
    # is asked for, so that a mistake in it cannot stop the API or the authorizer.
    dashboard_login: str = ""
    # The stage's EventBridge bus for audit events (EVENT_BUS_NAME); None: stored only.
    event_bus_name: str | None = None
    # Where GitHub publishes its secret-scanning signing keys (SECRET_SCANNING_KEYS_URL).
    secret_scanning_keys_url: str = GITHUB_SECRET_SCANNING_KEYS
    # Maximum counts (KEY_LIMIT, WORKSPACE_LIMIT, MEMBER_LIMIT, TRUST_POLICY_LIMIT).
    key_limit: int = DEFAULT_LIMITS[KEY_LIMIT]
    workspace_limit: int = DEFAULT_LIMITS[WORKSPACE_LIMIT]
    member_limit: int = DEFAULT_LIMITS[MEMBER_LIMIT]
    trust_policy_limit: int = DEFAULT_LIMITS[TRUST_POLICY_LIMIT]
    # Seconds between a container's usage writes per key (USAGE_FLUSH_SECONDS, local mode
    # only; a deployed stage always uses the default).
    usage_flush_seconds: int = DEFAULT_USAGE_FLUSH_SECONDS

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Settings:
        """The settings, or ConfigurationError listing every problem at once (one a line)."""
        env = os.environ if environ is None else environ
        problems: list[str] = []

        def required(name: str) -> str:
            value = env.get(name, "").strip()
            if not value:
                problems.append(f"environment variable {name} is not set")
            return value

        def parsed[T](parse: Callable[[], T], default: T) -> T:
            # Each variable on its own: one bad value must not hide the next one's problem.
            try:
                return parse()
            except ValueError as error:
                problems.append(str(error))
                return default

        local_mode = env.get("LOCAL_MODE", "").strip() == "1" and not env.get(
            "AWS_LAMBDA_FUNCTION_NAME"
        )
        trusted_issuers: tuple[TrustedIssuer, ...] = parsed(
            lambda: parse_trusted_issuers(env.get("TRUSTED_ISSUERS", ""), local_mode), ()
        )
        # Held to a list with a problem, LOGIN_PROVIDER would only add a misleading one.
        login_text = env.get("LOGIN_PROVIDER", "") if not problems else ""
        login_provider: LoginProvider | None = parsed(
            lambda: parse_login_provider(login_text, local_mode, trusted_issuers), None
        )
        allowed_origins: tuple[str, ...] = parsed(
            lambda: parse_allowed_origins(env.get("ALLOWED_ORIGINS", "")), ()
        )
        mcp_resources: tuple[McpResource, ...] = parsed(
            lambda: parse_mcp_resources(env.get("MCP_RESOURCES", ""), local_mode), ()
        )
        enterprise_idps: tuple[EnterpriseIdp, ...] = parsed(
            lambda: parse_enterprise_idps(env.get("ENTERPRISE_IDPS", ""), local_mode), ()
        )
        registration_limit = parsed(
            lambda: parse_registration_limit(env.get("MCP_REGISTRATION_LIMIT", "")),
            DEFAULT_REGISTRATION_LIMIT,
        )
        limits = {
            name: parsed(
                lambda name=name, default=default: parse_whole_number(  # type: ignore[misc]
                    name, env.get(name, ""), default, MAX_STAGE_LIMIT
                ),
                default,
            )
            for name, default in DEFAULT_LIMITS.items()
        }
        flush_seconds = DEFAULT_USAGE_FLUSH_SECONDS
        if local_mode:
            flush_seconds = parsed(
                lambda: parse_whole_number(
                    "USAGE_FLUSH_SECONDS",
                    env.get("USAGE_FLUSH_SECONDS", ""),
                    DEFAULT_USAGE_FLUSH_SECONDS,
                    DEFAULT_USAGE_FLUSH_SECONDS,
                ),
                DEFAULT_USAGE_FLUSH_SECONDS,
            )
        keys_url = env.get("SECRET_SCANNING_KEYS_URL", "").strip() or GITHUB_SECRET_SCANNING_KEYS
        parsed(lambda: check_url(keys_url, "SECRET_SCANNING_KEYS_URL", local_mode), keys_url)
        settings = cls(
            table_name=required("AUTH_TABLE"),
            encryption_key_id=required("KEY_ENCRYPTION_KEY_ID"),
            signing_key_id=required("TOKEN_SIGNING_KEY_ID"),
            previous_signing_key_id=env.get("TOKEN_PREVIOUS_SIGNING_KEY_ID", "").strip() or None,
            issuer=required("TOKEN_ISSUER").rstrip("/"),
            region=env.get("AWS_REGION") or env.get("AWS_DEFAULT_REGION") or "us-east-1",
            refresh_token_key_id=required("REFRESH_TOKEN_KEY_ID"),
            trusted_issuers=trusted_issuers,
            local_mode=local_mode,
            allowed_origins=allowed_origins,
            mcp_resources=mcp_resources,
            enterprise_idps=enterprise_idps,
            login_provider=login_provider,
            registration_limit=registration_limit,
            dashboard_login=env.get("DASHBOARD_LOGIN", "").strip(),
            event_bus_name=env.get("EVENT_BUS_NAME", "").strip() or None,
            secret_scanning_keys_url=keys_url,
            key_limit=limits[KEY_LIMIT],
            workspace_limit=limits[WORKSPACE_LIMIT],
            member_limit=limits[MEMBER_LIMIT],
            trust_policy_limit=limits[TRUST_POLICY_LIMIT],
            usage_flush_seconds=flush_seconds,
        )
        if problems:
            raise ConfigurationError("\n".join(problems))
        return settings

    @property
    def signing_key_ids(self) -> list[str]:
        return [k for k in (self.signing_key_id, self.previous_signing_key_id) if k]


# An origin as browsers serialize it in the `Origin` header (RFC 6454 §6.2): lowercase scheme
# and host, a port only when it is not the scheme's default, nothing after the authority.
_ORIGIN = re.compile(r"^(https?)://([a-z0-9.-]+|\[[0-9a-f:.]+\])(?::([0-9]{1,5}))?$")
_DEFAULT_PORTS = {"http": "80", "https": "443"}
_LOOPBACK_ORIGIN_HOSTS = ("localhost", "127.0.0.1", "[::1]")  # as written in an origin


def parse_allowed_origins(text: str) -> tuple[str, ...]:
    """ALLOWED_ORIGINS: a JSON list of exact origins (default none). ValueError if bad.

    Compared byte for byte with the request's `Origin`, so each must be written the way
    browsers send it; no wildcards, no paths. `http` only for a page on the caller's own
    machine (loopback), where nothing crosses the network.
    """
    if not text.strip():
        return ()
    try:
        values = json.loads(text)
    except ValueError:
        raise ValueError("ALLOWED_ORIGINS must be a JSON list of origins") from None
    if not isinstance(values, list):
        raise ValueError("ALLOWED_ORIGINS must be a JSON list of origins")
    origins = []
    for value in values:
        match = _ORIGIN.fullmatch(value) if isinstance(value, str) else None
        if match is None:
            raise ValueError(
                f"ALLOWED_ORIGINS: {str(value)[:100]!r} is not an origin such as "
                "'https://app.example.com' (lowercase, no path, no trailing slash)"
            )
        scheme, host, port = match.groups()
        if port is not None and (port == _DEFAULT_PORTS[scheme] or port.startswith("0")):
            raise ValueError(f"ALLOWED_ORIGINS: write {value!r} without the default port")
        if scheme == "http" and host not in _LOOPBACK_ORIGIN_HOSTS and not host.startswith("127."):
            raise ValueError(f"ALLOWED_ORIGINS: {value!r} must use https (http only for loopback)")
        origins.append(value)
    return tuple(dict.fromkeys(origins))
