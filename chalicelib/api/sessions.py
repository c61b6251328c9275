"""`/v1/auth/exchange` and `/v1/auth/refresh`: the token endpoints (RFC 6749 §5 answers).

Both take JSON or an OAuth form body and answer the OAuth field names with
`Cache-Control: no-store`. Every refusal here is an RFC 6749 error body, including a failed
dependency (503 `temporarily_unavailable`): an OAuth client reads one error shape.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from urllib.parse import parse_qsl

from chalice import Response
from chalice.app import Request

from chalicelib import errors, logs, strict_parsing
from chalicelib.api import edge, models
from chalicelib.api.operations import Answer, Operations
from chalicelib.dependencies import is_dependency_failure
from chalicelib.errors import OAuthError, ServiceError
from chalicelib.runtime import services
from chalicelib.sessions.openid import IdTokenRejected
from chalicelib.sessions.refresh import RefreshRejected
from chalicelib.sessions.service import TokenPair

blueprint = Operations(__name__)

EXCHANGE_PATH = "/v1/auth/exchange"
REFRESH_PATH = "/v1/auth/refresh"
FORM = "application/x-www-form-urlencoded"
ANSWERS = (
    Answer(
        200,
        "A user token (one hour) and a refresh token (30 days, single use).",
        models.TokenPair,
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
        ),
        oauth=True,
    ),
    Answer(
        413, "The body is larger than 16 KiB.", problems=(errors.OAUTH_PAYLOAD_TOO_LARGE,),
        oauth=True,
    ),
    Answer(415, "Send JSON or an OAuth form.", problems=(errors.UNSUPPORTED_MEDIA_TYPE,)),
    Answer(
        503,
        "DynamoDB, KMS or the issuer's JWKS failed: nothing was issued, retry later.",
        problems=(errors.TEMPORARILY_UNAVAILABLE,),
        oauth=True,
    ),
)
TOKEN_EXCHANGE_GRANT = "urn:ietf:params:oauth:grant-type:token-exchange"  # RFC 8693 §2.1
REFRESH_GRANT = "refresh_token"
ID_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:id_token"
ACCESS_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:access_token"
_TOKEN_HEADERS = {"Cache-Control": "no-store", "Pragma": "no-cache"}


def invalid_request(description: str) -> OAuthError:
    return errors.OAUTH_INVALID_REQUEST.oauth_error(description)


# The service's own refusals that can reach these endpoints, and their RFC 6749 counterparts.
_AS_OAUTH = {
    errors.PAYLOAD_TOO_LARGE: errors.OAUTH_PAYLOAD_TOO_LARGE,
    errors.DEPENDENCY_UNAVAILABLE: errors.TEMPORARILY_UNAVAILABLE,
}


@contextmanager
def oauth_errors() -> Iterator[None]:
    """The service's own refusals (413, 503) in the RFC 6749 shape these endpoints answer."""
    try:
        yield
    except ServiceError as error:
        oauth = _AS_OAUTH.get(error.problem, errors.OAUTH_INVALID_REQUEST)
        raise oauth.oauth_error(error.detail) from None
    except Exception as error:
        if not is_dependency_failure(error):
            raise
        raise errors.TEMPORARILY_UNAVAILABLE.oauth_error() from None


def _media_type(request: Request) -> str:
    header = request.headers.get("content-type") or edge.JSON
    return header.split(";", 1)[0].strip().lower()


def grant_parameters(request: Request, json_fields: set[str]) -> tuple[bool, dict[str, str]]:
    """(is_form, parameters) of a token request, or invalid_request.

    A form follows RFC 6749 §3.2: unknown parameters are ignored, repeated ones refused. JSON
    follows our wire conventions: unknown fields refused. Values are non-empty strings.
    """
    if request.query_params:
        # Tokens in a URL end up in logs and browser history: refuse them outright.
        raise invalid_request("Send the parameters in the request body, not in the URL.")
    raw = edge.read_body(request)
    if _media_type(request) == FORM:
        try:
            pairs = parse_qsl(raw.decode("utf-8"), keep_blank_values=True)
        except (UnicodeDecodeError, ValueError):
            raise invalid_request("The form body is not valid.") from None
        names = [name for name, _ in pairs]
        repeated = sorted({name for name in names if names.count(name) > 1})
        if repeated:
            raise invalid_request(f"Parameter {repeated[0][:64]!r} is repeated.")
        return True, {name: value for name, value in pairs if value != ""}
    try:
        body = strict_parsing.json_value(raw) if raw.strip() else None
    except strict_parsing.MalformedJson:
        raise invalid_request("The request body is not valid JSON.") from None
    if not isinstance(body, dict):
        raise invalid_request("The request body must be a JSON object.")
    unknown = sorted(set(body) - json_fields)
    if unknown:
        raise invalid_request(f"Unknown field: {unknown[0][:64]!r}.")
    for name, value in body.items():
        if not isinstance(value, str) or not value:
            raise invalid_request(f"{name} must be a non-empty string.")
    return False, body


def required(parameters: dict[str, str], name: str) -> str:
    value = parameters.get(name)
    if value is None:
        raise invalid_request(f"{name} is required.")
    return value


def token_response(pair: TokenPair, issued_token_type: bool = False) -> Response:
    body = models.TokenPair(
        access_token=pair.access.token,
        token_type="Bearer",
        expires_in=pair.access.expires_in,
        refresh_token=pair.refresh_token,
        issued_token_type=ACCESS_TOKEN_TYPE if issued_token_type else None,
    )
    return edge.json_response(
        body.model_dump(exclude_none=True), headers=_TOKEN_HEADERS, secret=True
    )


def _check_token_exchange_form(parameters: dict[str, str]) -> str:
    """The subject token of an RFC 8693 request we can serve, else its RFC 8693 error."""
    grant_type = required(parameters, "grant_type")
    if grant_type != TOKEN_EXCHANGE_GRANT:
        raise errors.UNSUPPORTED_GRANT_TYPE.oauth_error(f"Use grant_type={TOKEN_EXCHANGE_GRANT}.")
    subject_token = required(parameters, "subject_token")
    if required(parameters, "subject_token_type") != ID_TOKEN_TYPE:
        raise invalid_request(f"subject_token_type must be {ID_TOKEN_TYPE}.")
    requested = parameters.get("requested_token_type", ACCESS_TOKEN_TYPE)
    if requested != ACCESS_TOKEN_TYPE:
        raise invalid_request(f"requested_token_type must be {ACCESS_TOKEN_TYPE}.")
    if "actor_token" in parameters or "actor_token_type" in parameters:
        raise invalid_request("Delegation (actor_token) is not supported.")
    issuer = services().settings.issuer
    for target in ("audience", "resource"):
        if target in parameters and parameters[target].rstrip("/") != issuer:
            raise errors.INVALID_TARGET.oauth_error(f"The only {target} served here is {issuer}.")
    return subject_token


@blueprint.public(
    "POST",
    EXCHANGE_PATH,
    content_types=[edge.JSON, FORM],
    name="exchange",
    summary="Trade an OpenID Connect ID token for a user token",
    tag="Login",
    answers=ANSWERS,
    body={edge.JSON: models.ExchangeRequest, FORM: models.TokenExchangeForm},
)
def exchange() -> Response:
    request = blueprint.current_request
    with oauth_errors():
        is_form, parameters = grant_parameters(request, {"id_token"})
        if is_form:
            id_token = _check_token_exchange_form(parameters)
        else:
            id_token = required(parameters, "id_token")
        try:
            pair = services().session_service.exchange(id_token)
        except IdTokenRejected as rejected:
            raise errors.INVALID_GRANT.oauth_error(rejected.description) from None
    logs.identify_actor(pair.user_id)
    return token_response(pair, issued_token_type=is_form)


@blueprint.public(
    "POST",
    REFRESH_PATH,
    content_types=[edge.JSON, FORM],
    name="refresh",
    summary="Trade a refresh token for a new pair",
    tag="Login",
    answers=ANSWERS,
    body={edge.JSON: models.RefreshRequest, FORM: models.RefreshForm},
)
def refresh() -> Response:
    request = blueprint.current_request
    with oauth_errors():
        is_form, parameters = grant_parameters(request, {"refresh_token", "grant_type"})
        grant_type = required(parameters, "grant_type") if is_form else parameters.get(
            "grant_type", REFRESH_GRANT
        )
        if grant_type != REFRESH_GRANT:
            raise errors.UNSUPPORTED_GRANT_TYPE.oauth_error("Use grant_type=refresh_token.")
        refresh_token = required(parameters, "refresh_token")
        try:
            pair = services().session_service.refresh(refresh_token)
        except RefreshRejected as rejected:
            raise errors.INVALID_GRANT.oauth_error(rejected.description) from None
    logs.identify_actor(pair.user_id)
    return token_response(pair)
