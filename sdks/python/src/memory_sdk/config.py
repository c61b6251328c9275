"""Client configuration: the environment, with explicit arguments first.

| Variable            | Setting            |
|---------------------|--------------------|
| MEMORY_API_KEY      | `api_key`          |
| MEMORY_ENDPOINT     | `endpoint`         |
| MEMORY_WORKSPACE_ID | `workspace_id`     |
| NAM_BACKEND         | `backend`          |
| NAM_SVC__<NAME>     | `svc.<name>`       |
| GRAPHDB_PASSWORD    | `BoltSettings.graphdb_password`, read only for the `bolt` backend |

An empty variable counts as unset. An invalid value raises `ConfigurationError` naming the
variable (or the argument, when the value came from one), never echoing the value.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    SecretStr,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic_settings import BaseSettings, SettingsConfigDict, SettingsError

from memory_sdk import retry
from memory_sdk.errors import ConfigurationError

# The hosted service's base URL: the production stage's token issuer (.chalice/config.json).
DEFAULT_ENDPOINT = "https://auth.memory.example.com"

Backend = Literal["bolt", "svc"]

KEY_PREFIXES = ("svc_", "legacy_")
# The service refuses any other X-Workspace-Id shape without a lookup; so do we, earlier.
_WORKSPACE_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
_HEADER_NAME = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")
# Headers the client itself owns; an override would silently change who is calling.
_RESERVED_HEADERS = {"authorization", "x-workspace-id", "host", "content-length"}

# Where each setting comes from in the environment, for error messages.
ENVIRONMENT_VARIABLES = {
    "api_key": "MEMORY_API_KEY",
    "endpoint": "MEMORY_ENDPOINT",
    "workspace_id": "MEMORY_WORKSPACE_ID",
    "backend": "NAM_BACKEND",
    "svc": "NAM_SVC",
    "graphdb_password": "GRAPHDB_PASSWORD",
}


class SvcOptions(BaseModel):
    """The hosted client's transport settings, overridable with `NAM_SVC__<NAME>`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    timeout: float = Field(default=10.0, gt=0, le=300, description="seconds per attempt")
    # The defaults are the retry policy's budget (memory_sdk.retry), shared with the TS SDK.
    retries: int = Field(
        default=retry.DEFAULT_RETRIES,
        ge=0,
        le=retry.MAX_RETRIES,
        description="re-sends after the first try",
    )
    backoff: float = Field(
        default=retry.BACKOFF_BASE, ge=0, le=60, description="first retry delay, doubling"
    )
    backoff_max: float = Field(
        default=retry.BACKOFF_CAP, ge=0, le=300, description="cap of one retry delay"
    )
    retry_after_max: float = Field(
        default=retry.RETRY_AFTER_MAX,
        ge=0,
        le=3600,
        description="a longer Retry-After is raised, not waited",
    )
    headers: dict[str, str] = Field(default_factory=dict, description="extra request headers")

    @field_validator("headers")
    @classmethod
    def _plain_headers(cls, headers: dict[str, str]) -> dict[str, str]:
        for name, value in headers.items():
            if not _HEADER_NAME.match(name):
                raise ValueError(f"{name[:64]!r} is not a valid header name")
            if name.lower() in _RESERVED_HEADERS:
                raise ValueError(f"{name} is set by the client itself and cannot be overridden")
            if any(ch in value for ch in "\r\n\0"):
                raise ValueError(f"the value of {name} contains a line break")
        return headers


class ClientSettings(BaseSettings):
    """Everything the client needs to know, resolved once at construction."""

    model_config = SettingsConfigDict(
        env_prefix="NAM_",
        env_nested_delimiter="__",
        env_ignore_empty=True,
        validate_by_name=True,
        validate_by_alias=True,
        extra="forbid",
    )

    api_key: SecretStr | None = Field(default=None, validation_alias="MEMORY_API_KEY")
    endpoint: str = Field(default=DEFAULT_ENDPOINT, validation_alias="MEMORY_ENDPOINT")
    workspace_id: str | None = Field(default=None, validation_alias="MEMORY_WORKSPACE_ID")
    # None only until validation ends: then "svc" when an API key is set, else "bolt".
    backend: Backend | None = None
    svc: SvcOptions = Field(default_factory=SvcOptions)
    _backend_defaulted: bool = PrivateAttr(default=False)

    @field_validator("api_key")
    @classmethod
    def _key_shape(cls, value: SecretStr | None) -> SecretStr | None:
        if value is None:
            return None
        text = value.get_secret_value()
        if not text.startswith(KEY_PREFIXES) or len(text) < 12 or any(c.isspace() for c in text):
            raise ValueError("must be an API key (svc_… or legacy_…) without spaces")
        return value

    @field_validator("endpoint")
    @classmethod
    def _endpoint_url(cls, value: str) -> str:
        return endpoint_url(value)

    @field_validator("workspace_id")
    @classmethod
    def _workspace_shape(cls, value: str | None) -> str | None:
        if value is not None and not _WORKSPACE_ID.match(value):
            raise ValueError("must be a workspace id such as ws_… (letters, digits, _ and -)")
        return value

    @field_validator("backend", mode="before")
    @classmethod
    def _backend_case(cls, value: Any) -> Any:
        return value.strip().lower() if isinstance(value, str) else value

    @model_validator(mode="after")
    def _default_backend(self) -> ClientSettings:
        if self.backend is None:
            # MEMORY_API_KEY set and NAM_BACKEND unspecified means hosted.
            self.backend = "svc" if self.api_key is not None else "bolt"
            self._backend_defaulted = True
        return self

    @property
    def backend_defaulted(self) -> bool:
        """True when neither NAM_BACKEND nor an argument chose the backend."""
        return self._backend_defaulted


class BoltSettings(BaseSettings):
    """The self-hosted backend's secret; the hosted backend never reads it."""

    model_config = SettingsConfigDict(
        env_ignore_empty=True, validate_by_name=True, validate_by_alias=True, extra="forbid"
    )

    graphdb_password: SecretStr | None = Field(default=None, validation_alias="GRAPHDB_PASSWORD")


def endpoint_url(value: str) -> str:
    """An absolute http(s) base URL without a trailing slash; plain http only on loopback."""
    from urllib.parse import urlsplit

    parts = urlsplit(value.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError("must be an absolute http(s) URL such as https://host")
    if parts.username or parts.password or parts.query or parts.fragment:
        raise ValueError("must not carry credentials, a query or a fragment")
    if parts.scheme == "http" and not is_loopback(parts.hostname):
        # A bearer credential over plain HTTP is readable by anyone on the path.
        raise ValueError(plain_http_refusal(parts.scheme, parts.hostname))
    return value.strip().rstrip("/")


def plain_http_refusal(scheme: str, host: str) -> str:
    """Why an endpoint is refused: its scheme and host only (userinfo is refused before)."""
    return (
        f"uses scheme {scheme} with host {host}: plain http is allowed only for a loopback "
        "host (localhost, 127.0.0.0/8, ::1); use https"
    )


def is_loopback(host: str) -> bool:
    """localhost, 127.0.0.0/8 or ::1 (`host` as urlsplit gives it: lowercase, no brackets)."""
    if host == "localhost":
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    if address.version == 6:
        return address == ipaddress.IPv6Address("::1")
    return address.is_loopback


def load_settings(
    *,
    api_key: str | SecretStr | None = None,
    endpoint: str | None = None,
    workspace_id: str | None = None,
    backend: str | None = None,
    svc: SvcOptions | Mapping[str, Any] | None = None,
    has_user_token: bool = False,
) -> ClientSettings:
    """The settings: each argument that is not None wins over its environment variable.

    `svc` is merged field by field with `NAM_SVC__*`: `svc={"timeout": 3}` keeps an
    environment `NAM_SVC__RETRIES`. `has_user_token` (the client was given a user token)
    makes the default backend `svc`, as an API key does: a user token exists only there.
    """
    explicit: dict[str, Any] = {
        name: value
        for name, value in (
            ("api_key", api_key),
            ("endpoint", endpoint),
            ("workspace_id", workspace_id),
            ("backend", backend),
        )
        if value is not None
    }
    if svc is not None:
        explicit["svc"] = (
            svc.model_dump(exclude_unset=True) if isinstance(svc, SvcOptions) else dict(svc)
        )
    try:
        settings = ClientSettings(**explicit)
    except ValidationError as error:
        problems = _problems(error, explicit)
    except SettingsError as error:
        problems = [_unparsable(error)]
    else:
        if has_user_token and settings.backend_defaulted:
            settings.backend = "svc"
        return settings
    # Raised outside the `except` so that no traceback chains to pydantic's error, whose
    # text includes the rejected input (which may be a key).
    raise ConfigurationError(problems)


def load_bolt_settings(graphdb_password: str | SecretStr | None = None) -> BoltSettings:
    explicit: dict[str, Any] = {}
    if graphdb_password is not None:
        explicit["graphdb_password"] = graphdb_password
    try:
        return BoltSettings(**explicit)
    except ValidationError as error:
        problems = _problems(error, explicit)
    except SettingsError as error:
        problems = [_unparsable(error)]
    raise ConfigurationError(problems)


def _problems(error: ValidationError, explicit: Mapping[str, Any]) -> list[tuple[str, str]]:
    problems = []
    for item in error.errors(include_input=False, include_url=False):
        message = str(item["msg"]).removeprefix("Value error, ")
        problems.append((_setting_name(item["loc"], explicit), message))
    return problems


def _unparsable(error: SettingsError) -> tuple[str, str]:
    """A variable that should hold JSON (NAM_SVC, NAM_SVC__HEADERS) and does not."""
    match = re.search(r'field "(\w+)"', str(error))
    field = match.group(1) if match else "configuration"
    variable = ENVIRONMENT_VARIABLES.get(field, field)
    if variable == "NAM_SVC":
        variable = "NAM_SVC or NAM_SVC__HEADERS"
    return variable, "is not valid JSON (a nested setting takes a JSON object)"


def _setting_name(loc: tuple[int | str, ...], explicit: Mapping[str, Any]) -> str:
    """The environment variable (or argument) a validation error location refers to."""
    if not loc:
        return "configuration"
    head = str(loc[0])
    field = next(
        (name for name, variable in ENVIRONMENT_VARIABLES.items() if head in (name, variable)),
        head,
    )
    rest = [str(part) for part in loc[1:]]
    if field == "svc":
        given = explicit.get("svc")
        if isinstance(given, Mapping) and (not rest or rest[0] in given):
            return "argument svc" + "".join(f".{part}" for part in rest)
        return "NAM_SVC" + "".join(f"__{part.upper()}" for part in rest)
    if field in explicit:
        return f"argument {field}"
    return ENVIRONMENT_VARIABLES.get(field, head)
