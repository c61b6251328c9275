"""The JWT bearer grant (RFC 7523 §2.1), two profiles told apart by the assertion's `typ`:
a workload's JWT (judged by the workspace's trust policies exactly as RFC 8693's form, its
`jti` single use) and an enterprise IdP's ID-JAG (`typ` oauth-id-jag+jwt: `id_jag.py`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from chalicelib import errors
from chalicelib.api import oauth_models
from chalicelib.api.grants.registry import Grant, Issued, TokenRequest, register
from chalicelib.api.grants.token_exchange import workload_token
from chalicelib.api.operations import FORM
from chalicelib.runtime import services


def assertion_type(assertion: Any) -> str | None:
    """The assertion's JOSE header `typ` (unverified: only to choose the profile)."""
    import jwt

    try:
        typ = jwt.get_unverified_header(str(assertion)).get("typ")
    except jwt.PyJWTError:
        return None
    return typ if isinstance(typ, str) else None


def is_id_jag(parameters: Mapping[str, Any]) -> bool:
    return (assertion_type(parameters.get("assertion")) or "").lower() == oauth_models.ID_JAG_TYPE


@register
class IdJagBearer(Grant):
    """Enterprise-managed authorization: an ID-JAG for an MCP access token (`id_jag.py`)."""

    grant_type = oauth_models.JWT_BEARER_GRANT
    models = {FORM: oauth_models.JwtBearerForm}

    @classmethod
    def takes(cls, parameters: Mapping[str, Any]) -> bool:
        return is_id_jag(parameters)

    def validate(self, request: TokenRequest) -> Any:
        from chalicelib.api.grants import id_jag

        return id_jag.judged(request.parsed)

    def issue(self, request: TokenRequest, valid: Any) -> Issued:
        from chalicelib.api.grants import id_jag

        return id_jag.issue(valid)


@register
class WorkloadBearer(Grant):
    """A workload's JWT for a workload token of `workspace_id` (the MCP workload identity
    proposal's shape): the trust policies judge it as RFC 8693's form; its `jti` is spent."""

    grant_type = oauth_models.JWT_BEARER_GRANT
    models = {FORM: oauth_models.JwtBearerForm}

    @classmethod
    def takes(cls, parameters: Mapping[str, Any]) -> bool:
        return not is_id_jag(parameters)

    def validate(self, request: TokenRequest) -> None:
        resource = request.parsed.resource
        issuer = services().settings.issuer
        if resource is not None and resource.rstrip("/") != issuer:
            raise errors.INVALID_TARGET.oauth_error(f"The only resource served here is {issuer}.")

    def issue(self, request: TokenRequest, valid: None) -> Issued:
        parsed = request.parsed
        return workload_token(parsed.assertion, parsed.workspace_id, parsed.scope, single_use=True)
