"""`/v1/auth/exchange`, `/v1/auth/refresh` and `/v1/auth/revoke` (sign-out): the token
endpoints (RFC 6749 §5 answers).

Each takes JSON or an OAuth form body and answers the OAuth field names with
`Cache-Control: no-store`. Every refusal here is an RFC 6749 error body, including a failed
dependency (503 `temporarily_unavailable`): an OAuth client reads one error shape.
"""

from __future__ import annotations

from chalice import Response
from pydantic import BaseModel

from chalicelib import errors
from chalicelib.access.headers import origin
from chalicelib.api import edge, oauth_models, sessions_models
from chalicelib.api.grants.endpoint import TOKEN_HEADERS, token_endpoint
from chalicelib.api.grants.registry import EXCHANGE_PATH, REFRESH_PATH
from chalicelib.api.operations import (
    FORM,
    OAUTH_TOO_LARGE,
    Answer,
    Operations,
    oauth_errors,
    token_request,
)
from chalicelib.runtime import services

blueprint = Operations(__name__)

REVOKE_PATH = "/v1/auth/revoke"
ANSWERS = (
    Answer(
        200,
        "A user token (one hour) and a refresh token (30 days, single use).",
        sessions_models.TokenPairBody,
        headers={"Cache-Control": "CacheControlNoStore"},
    ),
    Answer(
        400,
        "The token request was refused (RFC 6749 §5.2).",
        problems=(
            errors.OAUTH_INVALID_REQUEST,
            errors.UNSUPPORTED_GRANT_TYPE,
            errors.INVALID_TARGET,
            errors.INVALID_GRANT,
            errors.OAUTH_INVALID_SCOPE,
        ),
        oauth=True,
    ),
    OAUTH_TOO_LARGE,
    Answer(415, "Send JSON or an OAuth form.", problems=(errors.UNSUPPORTED_MEDIA_TYPE,)),
    Answer(
        503,
        "DynamoDB, KMS or the issuer's JWKS failed: nothing was issued, retry later.",
        problems=(errors.TEMPORARILY_UNAVAILABLE,),
        oauth=True,
    ),
)
EXCHANGE_ANSWERS = (
    Answer(
        200,
        "A login's user token (one hour) and refresh token (30 days, single use); or a"
        " delegated token (60 to 3600 seconds, bound to one workspace, no refresh token).",
        sessions_models.ExchangeAnswer,
        headers={"Cache-Control": "CacheControlNoStore"},
    ),
    Answer(
        400,
        "The token request was refused (RFC 6749 §5.2, RFC 8693 §2.2.2).",
        problems=(
            errors.OAUTH_INVALID_REQUEST,
            errors.UNSUPPORTED_GRANT_TYPE,
            errors.INVALID_TARGET,
            errors.INVALID_GRANT,
            errors.OAUTH_INVALID_SCOPE,
        ),
        oauth=True,
    ),
    Answer(
        401,
        "A delegation's subject_token is not a working credential (the description names"
        " the data-plane code: invalid_credentials, expired_credentials, revoked_credentials).",
        problems=(errors.INVALID_SUBJECT_TOKEN,),
        oauth=True,
    ),
    Answer(
        403,
        "A delegation's subject_token may not act in that workspace (workspace_mismatch,"
        " not_a_member, ip_not_allowed).",
        problems=(errors.SUBJECT_NOT_ALLOWED,),
        oauth=True,
    ),
    *ANSWERS[1:],
)


EXCHANGE_BODY: dict[str, type[BaseModel]] = {
    edge.JSON: sessions_models.ExchangeRequest,
    FORM: sessions_models.TokenExchangeForm,
}
REFRESH_BODY: dict[str, type[BaseModel]] = {
    edge.JSON: sessions_models.RefreshRequest,
    FORM: sessions_models.RefreshForm,
}


# Served by the token exchange grants (`grants/token_exchange.py`) and the login refresh
# grant (`grants/refresh.py`); a JSON request without grant_type names the endpoint's.
token_endpoint(
    blueprint,
    EXCHANGE_PATH,
    EXCHANGE_BODY,
    sessions_models.TOKEN_EXCHANGE_GRANT,
    name="exchange",
    summary="Trade an ID token for a user token, or a credential for a delegated token",
    tag="Login",
    answers=EXCHANGE_ANSWERS,
)
token_endpoint(
    blueprint,
    REFRESH_PATH,
    REFRESH_BODY,
    sessions_models.REFRESH_GRANT,
    name="refresh",
    summary="Trade a refresh token for a new pair",
    tag="Login",
    answers=ANSWERS,
)


REVOKE_BODY: dict[str, type[BaseModel]] = {
    edge.JSON: sessions_models.RevokeRequest,
    FORM: oauth_models.RevocationForm,
}


@blueprint.public(
    "POST",
    REVOKE_PATH,
    content_types=[edge.JSON, FORM],
    name="revoke",
    summary="Sign out: revoke a login refresh token and every successor (RFC 7009)",
    tag="Login",
    answers=(
        Answer(
            200,
            "Revoked, or nothing to revoke (an unknown, expired or already revoked token is"
            " answered the same).",
        ),
        Answer(
            400,
            "The request is malformed (no token).",
            problems=(errors.OAUTH_INVALID_REQUEST,),
            oauth=True,
        ),
        *ANSWERS[2:],
    ),
    body=REVOKE_BODY,
)
def revoke() -> Response:
    request = blueprint.current_request
    with oauth_errors():
        _, parameters = token_request(request, REVOKE_BODY)
        services().session_service.revoke(parameters.token, origin(request.to_original_event()))
    return Response(body="", status_code=200, headers=dict(TOKEN_HEADERS))
