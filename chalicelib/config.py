"""Settings from the environment (every variable is listed in the README's Configuration)."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass

from chalicelib.login.openid import TrustedIssuer, parse_trusted_issuers


class ConfigurationError(Exception):
    pass


@dataclass(frozen=True)
class Settings:
    table_name: str
    encryption_key_id: str
    signing_key_id: str
    previous_signing_key_id: str | None
    issuer: str
    region: str
    # OpenID Connect issuers whose ID tokens the exchange accepts (TRUSTED_ISSUERS).
    trusted_issuers: tuple[TrustedIssuer, ...] = ()
    # LOCAL_MODE=1 (set by local/stack.py) allows http:// loopback issuers such as the
    # development IdP. Ignored inside AWS Lambda, so a deployed stage can never turn it on.
    local_mode: bool = False
    # Web origins whose pages may call the API from a browser (ALLOWED_ORIGINS, exact).
    allowed_origins: tuple[str, ...] = ()

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Settings:
        env = os.environ if environ is None else environ

        def required(name: str) -> str:
            value = env.get(name, "").strip()
            if not value:
                raise ConfigurationError(f"environment variable {name} is not set")
            return value

        local_mode = env.get("LOCAL_MODE", "").strip() == "1" and not env.get(
            "AWS_LAMBDA_FUNCTION_NAME"
        )
        try:
            trusted_issuers = parse_trusted_issuers(env.get("TRUSTED_ISSUERS", ""), local_mode)
            allowed_origins = parse_allowed_origins(env.get("ALLOWED_ORIGINS", ""))
        except ValueError as error:
            raise ConfigurationError(str(error)) from None

        return cls(
            table_name=required("AUTH_TABLE"),
            encryption_key_id=required("KEY_ENCRYPTION_KEY_ID"),
            signing_key_id=required("TOKEN_SIGNING_KEY_ID"),
            previous_signing_key_id=env.get("TOKEN_PREVIOUS_SIGNING_KEY_ID", "").strip() or None,
            issuer=required("TOKEN_ISSUER").rstrip("/"),
            region=env.get("AWS_REGION") or env.get("AWS_DEFAULT_REGION") or "us-east-1",
            trusted_issuers=trusted_issuers,
            local_mode=local_mode,
            allowed_origins=allowed_origins,
        )

    @property
    def signing_key_ids(self) -> list[str]:
        return [k for k in (self.signing_key_id, self.previous_signing_key_id) if k]


# An origin as browsers serialize it in the `Origin` header (RFC 6454 §6.2): lowercase scheme
# and host, a port only when it is not the scheme's default, nothing after the authority.
_ORIGIN = re.compile(r"^(https?)://([a-z0-9.-]+|\[[0-9a-f:.]+\])(?::([0-9]{1,5}))?$")
_DEFAULT_PORTS = {"http": "80", "https": "443"}
_LOOPBACK_HOSTS = ("localhost", "127.0.0.1", "[::1]")


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
        match = _ORIGIN.match(value) if isinstance(value, str) else None
        if match is None:
            raise ValueError(
                f"ALLOWED_ORIGINS: {str(value)[:100]!r} is not an origin such as "
                "'https://app.example.com' (lowercase, no path, no trailing slash)"
            )
        scheme, host, port = match.groups()
        if port is not None and (port == _DEFAULT_PORTS[scheme] or port.startswith("0")):
            raise ValueError(f"ALLOWED_ORIGINS: write {value!r} without the default port")
        if scheme == "http" and host not in _LOOPBACK_HOSTS and not host.startswith("127."):
            raise ValueError(f"ALLOWED_ORIGINS: {value!r} must use https (http only for loopback)")
        origins.append(value)
    return tuple(dict.fromkeys(origins))
