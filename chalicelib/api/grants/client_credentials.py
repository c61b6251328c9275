"""The client credentials grant (RFC 6749 §4.4) of a service client, which authenticates
with a `private_key_jwt` assertion (RFC 7523 §2.2): no secret is stored or sent. The
assertion, the scope, the resource and the lifetime are judged by the domain's grant
(`service_clients/grant.py`); a refused assertion is 401 `invalid_client`."""

from __future__ import annotations

from typing import Any

from chalicelib.api import oauth_models
from chalicelib.api.grants.registry import Grant, Issued, TokenRequest, register
from chalicelib.api.operations import FORM
from chalicelib.runtime import services


@register
class ClientCredentials(Grant):
    grant_type = oauth_models.CLIENT_CREDENTIALS_GRANT
    models = {FORM: oauth_models.ClientCredentialsForm}

    def validate(self, request: TokenRequest) -> Any:
        return services().client_credentials_grant.validate(request.parameters)

    def issue(self, request: TokenRequest, valid: Any) -> Issued:
        return Issued(services().client_credentials_grant.issue(valid))
