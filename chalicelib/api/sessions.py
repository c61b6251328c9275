"""`/v1/auth/exchange`, `/v1/auth/refresh` and `/v1/auth/revoke` (sign-out): the token
endpoints (RFC 6749 §5 answers).

Each takes JSON or an OAuth form body and answers the OAuth field names with
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
REVOKE_PATH = "/v1/auth/revoke"
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
EXCHANGE_ANSWERS = (
    Answer(
        200,
        "A login's user token (one hour) and refresh token (30 days, single use); or a"
        " delegated token (60 to 3600 seconds, bound to one workspace, no refresh token).",
        models.ExchangeAnswer,
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
    summary="Trade an ID token for a user token, or a credential for a delegated token",
    tag="Login",
    answers=EXCHANGE_ANSWERS,
    body=EXCHANGE_BODY,
)
def exchange() -> Response:
    request = blueprint.current_request
    with oauth_errors():
        is_form, parameters = token_request(request, EXCHANGE_BODY)
        login = parameters.subject_token_type in (None, models.ID_TOKEN_TYPE)
        if not login:
            return _exchange_for_workspace_token(parameters)
        _refuse_narrowing(parameters)
        rfc_8693 = is_form or parameters.id_token is None
        if is_form:
            id_token = _subject_token(parameters)
        else:
            id_token = parameters.id_token or parameters.subject_token
        try:
            pair = services().session_service.exchange(id_token, edge.origin(request))
        except IdTokenRejected as rejected:
            raise errors.INVALID_GRANT.oauth_error(rejected.description) from None
    logs.identify_actor(pair.user_id)
    return token_response(pair, issued_token_type=rfc_8693)


# What a login's user token cannot be asked to be: it is the person's, whole. A narrower
# token is a delegation of it, asked for once signed in.
NARROWING = ("scope", "expires_in", "workspace_id", "actor")


def _refuse_narrowing(form: models.TokenExchangeForm | models.ExchangeRequest) -> None:
    asked = [name for name in NARROWING if getattr(form, name) is not None]
    if asked:
        raise invalid_request(
            f"A login takes no {', '.join(asked)}: sign in, then delegate"
            f" (subject_token_type {models.ACCESS_TOKEN_TYPE}) for a narrower token."
        )


def _exchange_for_workspace_token(
    form: models.TokenExchangeForm | models.ExchangeRequest,
) -> Response:
    """A delegation (subject_token_type access_token) or a workload's exchange (jwt): a
    short-lived token bound to one workspace."""
    if form.subject_token_type == models.JWT_TOKEN_TYPE:
        return _workload_exchange(form)
    subject_token = _required_subject_token(form)
    if isinstance(form, models.TokenExchangeForm):
        _subject_token(form)
    delegated = services().delegator.delegate(
        subject_token,
        form.workspace_id,
        form.scope,
        form.expires_in,
        form.actor,
        origin=edge.origin(blueprint.current_request),
    )
    body = models.WorkspaceToken(
        access_token=delegated.token,
        issued_token_type=models.ACCESS_TOKEN_TYPE,
        token_type="Bearer",
        expires_in=delegated.expires_in,
        scope=" ".join(delegated.scopes),
    )
    return edge.json_response(body.model_dump(), headers=_TOKEN_HEADERS, secret=True)


def _required_subject_token(form: models.TokenExchangeForm | models.ExchangeRequest) -> str:
    """A delegation's or a workload's subject token: JSON may have sent `id_token` instead,
    which is a login's only."""
    if form.subject_token is None:
        raise invalid_request("subject_token is required: id_token is for a login only.")
    return form.subject_token


def _workload_exchange(form: models.TokenExchangeForm | models.ExchangeRequest) -> Response:
    """Workload identity federation: the answer of RFC 8693 §2.2.1, no refresh token."""
    from chalicelib.workloads.exchange import WorkloadRejected

    subject_token = _required_subject_token(form)
    if isinstance(form, models.TokenExchangeForm):
        _subject_token(form)
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
    body = models.WorkspaceToken(
        access_token=minted.token,
        issued_token_type=models.ACCESS_TOKEN_TYPE,
        token_type="Bearer",
        expires_in=minted.expires_in,
        scope=minted.scope,
    ).model_dump()
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


REVOKE_BODY: dict[str, type[BaseModel]] = {
    edge.JSON: models.RevokeRequest,
    FORM: models.RevocationForm,
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
        services().session_service.revoke(parameters.token, edge.origin(request))
    return Response(body="", status_code=200, headers=dict(_TOKEN_HEADERS))
