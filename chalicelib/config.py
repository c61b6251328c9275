"""Settings from the environment (every variable is listed in the README's Configuration)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

from chalicelib.login.openid import TrustedIssuer, parse_trusted_issuers
from chalicelib.scanning.public_fetch import FetchRefused, check_url

GITHUB_SECRET_SCANNING_KEYS = "https://api.github.com/meta/public_keys/secret_scanning"


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
    # The stage's EventBridge bus for audit events (EVENT_BUS_NAME); None: stored only.
    event_bus_name: str | None = None
    # Where GitHub publishes its secret-scanning signing keys (SECRET_SCANNING_KEYS_URL).
    secret_scanning_keys_url: str = GITHUB_SECRET_SCANNING_KEYS

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
        except ValueError as error:
            raise ConfigurationError(str(error)) from None

        keys_url = env.get("SECRET_SCANNING_KEYS_URL", "").strip() or GITHUB_SECRET_SCANNING_KEYS
        try:
            check_url(keys_url, local_mode)
        except FetchRefused as refused:
            raise ConfigurationError(f"SECRET_SCANNING_KEYS_URL: {refused}") from None

        return cls(
            table_name=required("AUTH_TABLE"),
            encryption_key_id=required("KEY_ENCRYPTION_KEY_ID"),
            signing_key_id=required("TOKEN_SIGNING_KEY_ID"),
            previous_signing_key_id=env.get("TOKEN_PREVIOUS_SIGNING_KEY_ID", "").strip() or None,
            issuer=required("TOKEN_ISSUER").rstrip("/"),
            region=env.get("AWS_REGION") or env.get("AWS_DEFAULT_REGION") or "us-east-1",
            trusted_issuers=trusted_issuers,
            local_mode=local_mode,
            event_bus_name=env.get("EVENT_BUS_NAME", "").strip() or None,
            secret_scanning_keys_url=keys_url,
        )

    @property
    def signing_key_ids(self) -> list[str]:
        return [k for k in (self.signing_key_id, self.previous_signing_key_id) if k]
