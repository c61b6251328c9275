"""The refresh token grant (RFC 6749 §6): an MCP grant's at `POST /v1/oauth/token`, a
sign-in's at `/v1/auth/refresh`. Each refresh token is single use and rotated."""

from __future__ import annotations

from typing import Any

from chalicelib import errors
from chalicelib.api import edge, oauth_models, sessions_models
from chalicelib.api.grants.registry import REFRESH_PATH, Grant, Issued, TokenRequest, register
from chalicelib.api.operations import FORM
from chalicelib.runtime import services
from chalicelib.sessions.refresh import RefreshRejected
from chalicelib.sessions.service import TokenPair


@register
class McpRefresh(Grant):
    """An MCP client's refresh: its grant's resource, scope narrowed at most."""

    grant_type = sessions_models.REFRESH_GRANT
    models = {FORM: oauth_models.TokenForm}

    def issue(self, request: TokenRequest, valid: Any) -> Issued:
        return Issued(services().oauth_service.refresh(dict(request.parameters)).body())


@register
class LoginRefresh(Grant):
    """A sign-in's refresh: a new user token and refresh token of the same sign-in."""

    grant_type = sessions_models.REFRESH_GRANT
    endpoints = frozenset({REFRESH_PATH})
    models = {edge.JSON: sessions_models.RefreshRequest, FORM: sessions_models.RefreshForm}

    def issue(self, request: TokenRequest, valid: Any) -> Issued:
        try:
            pair = services().session_service.refresh(request.parsed.refresh_token)
        except RefreshRejected as rejected:
            raise errors.INVALID_GRANT.oauth_error(rejected.description) from None
        return token_pair(pair)


def token_pair(pair: TokenPair, issued_token_type: bool = False) -> Issued:
    """A sign-in's answer: a user token and its refresh token."""
    body = sessions_models.TokenPairBody(
        access_token=pair.access.token,
        token_type="Bearer",
        expires_in=pair.access.expires_in,
        refresh_token=pair.refresh_token,
        issued_token_type=sessions_models.ACCESS_TOKEN_TYPE if issued_token_type else None,
    )
    return Issued(body.model_dump(exclude_none=True), user_id=pair.user_id)
