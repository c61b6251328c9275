"""`/v1/auth/exchange` and `/v1/auth/refresh`: the token endpoints (RFC 6749 §5 answers).

Both take JSON or an OAuth form body and answer the OAuth field names with
`Cache-Control: no-store`. Every refusal here is an RFC 6749 error body, including a failed
dependency (503 `temporarily_unavailable`): an OAuth client reads one error shape.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from chalice import Response
from pydantic import BaseModel

from chalicelib import errors, logs
from chalicelib.api import edge, models
from chalicelib.api.operations import FORM, Answer, Operations, token_request
from chalicelib.dependencies import is_dependency_failure
from chalicelib.errors import OAuthError, ServiceError
from chalicelib.runtime import services
from chalicelib.sessions.openid import IdTokenRejected
from chalicelib.sessions.refresh import RefreshRejected
from chalicelib.sessions.service import TokenPair

blueprint = Operations(__name__)

EXCHANGE_PATH = "/v1/auth/exchange"
REFRESH_PATH = "/v1/auth/refresh"
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
            errors.OAUTH_INVALID_SCOPE,
        ),
        oauth=True,
    ),
    Answer(
        413,
        "The body is larger than 16 KiB.",
        problems=(errors.OAUTH_PAYLOAD_TOO_LARGE,),
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


def token_response(pair: TokenPair, issued_token_type: bool = False) -> Response:
    body = models.TokenPair(
        access_token=pair.access.token,
        token_type="Bearer",
        expires_in=pair.access.expires_in,
        refresh_token=pair.refresh_token,
        issued_token_type=models.ACCESS_TOKEN_TYPE if issued_token_type else None,
    )
    return edge.json_response(
        body.model_dump(exclude_none=True), headers=_TOKEN_HEADERS, secret=True
    )


def _subject_token(form: models.TokenExchangeForm) -> str:
    """The subject token of an RFC 8693 request we can serve (its model checked the rest), else
    its RFC 8693 error: these two rules are not field constraints (a parameter the model
    ignores, the issuer known at run time)."""
    if form.model_extra and {"actor_token", "actor_token_type"} & set(form.model_extra):
        raise invalid_request("Delegation (actor_token) is not supported.")
    issuer = services().settings.issuer
    for target in ("audience", "resource"):
        value = getattr(form, target)
        if value is not None and value.rstrip("/") != issuer:
            raise errors.INVALID_TARGET.oauth_error(f"The only {target} served here is {issuer}.")
    return form.subject_token


EXCHANGE_BODY: dict[str, type[BaseModel]] = {
    edge.JSON: models.ExchangeRequest,
    FORM: models.TokenExchangeForm,
}
REFRESH_BODY: dict[str, type[BaseModel]] = {
    edge.JSON: models.RefreshRequest,
    FORM: models.RefreshForm,
}


@blueprint.public(
    "POST",
    EXCHANGE_PATH,
    content_types=[edge.JSON, FORM],
    name="exchange",
    summary="Trade an OpenID Connect ID token for a user token",
    tag="Login",
    answers=ANSWERS,
    body=EXCHANGE_BODY,
)
def exchange() -> Response:
    request = blueprint.current_request
    with oauth_errors():
        is_form, parameters = token_request(request, EXCHANGE_BODY)
        if is_form and parameters.subject_token_type != models.ID_TOKEN_TYPE:
            return _exchange_for_workspace_token(parameters)
        id_token = _subject_token(parameters) if is_form else parameters.id_token
        try:
            pair = services().session_service.exchange(id_token)
        except IdTokenRejected as rejected:
            raise errors.INVALID_GRANT.oauth_error(rejected.description) from None
    logs.identify_actor(pair.user_id)
    return token_response(pair, issued_token_type=is_form)


def _exchange_for_workspace_token(form: models.TokenExchangeForm) -> Response:
    """A delegation (subject_token_type access_token) or a workload's exchange (jwt): a
    short-lived token bound to one workspace."""
    if form.subject_token_type == models.JWT_TOKEN_TYPE:
        return _workload_exchange(form)
    raise invalid_request(f"subject_token_type {form.subject_token_type} is not served yet.")


def _workload_exchange(form: models.TokenExchangeForm) -> Response:
    """Workload identity federation: the answer of RFC 8693 §2.2.1, no refresh token."""
    from chalicelib.workloads.exchange import WorkloadRejected

    subject_token = _subject_token(form)
    try:
        minted = services().workload_exchange.exchange(
            subject_token, form.workspace_id, form.scope
        )
    except WorkloadRejected as rejected:
        problem = {
            "invalid_request": errors.OAUTH_INVALID_REQUEST,
            "invalid_scope": errors.OAUTH_INVALID_SCOPE,
        }.get(rejected.error, errors.INVALID_GRANT)
        raise problem.oauth_error(rejected.description) from None
    body = {
        "access_token": minted.token,
        "issued_token_type": models.ACCESS_TOKEN_TYPE,
        "token_type": "Bearer",
        "expires_in": minted.expires_in,
        "scope": minted.scope,
    }
    return edge.json_response(body, headers=_TOKEN_HEADERS, secret=True)


@blueprint.public(
    "POST",
    REFRESH_PATH,
    content_types=[edge.JSON, FORM],
    name="refresh",
    summary="Trade a refresh token for a new pair",
    tag="Login",
    answers=ANSWERS,
    body=REFRESH_BODY,
)
def refresh() -> Response:
    request = blueprint.current_request
    with oauth_errors():
        _, parameters = token_request(request, REFRESH_BODY)
        refresh_token = parameters.refresh_token
        try:
            pair = services().session_service.refresh(refresh_token)
        except RefreshRejected as rejected:
            raise errors.INVALID_GRANT.oauth_error(rejected.description) from None
    logs.identify_actor(pair.user_id)
    return token_response(pair)
