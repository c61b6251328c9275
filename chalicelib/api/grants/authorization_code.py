"""The authorization code grant (RFC 6749 §4.1.3, PKCE, RFC 8707's `resource`): an MCP
client's code for an access token, and a refresh token when it registered that grant."""

from __future__ import annotations

from typing import Any

from chalicelib.api import oauth_models
from chalicelib.api.grants.registry import Grant, Issued, TokenRequest, register
from chalicelib.api.operations import FORM
from chalicelib.runtime import services


@register
class AuthorizationCode(Grant):
    grant_type = oauth_models.CODE_GRANT
    models = {FORM: oauth_models.TokenForm}

    def issue(self, request: TokenRequest, valid: Any) -> Issued:
        issued = services().oauth_service.redeem_code(dict(request.parameters))
        return Issued(issued.body())
