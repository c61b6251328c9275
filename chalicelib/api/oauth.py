"""The MCP authorization server's routes (README, "MCP clients").

  GET  /.well-known/oauth-authorization-server        RFC 8414 metadata
  GET  /.well-known/oauth-protected-resource/<path>   RFC 9728 metadata of each MCP resource
  POST /v1/oauth/register                             RFC 7591 (JSON), limited per address
  GET  /v1/oauth/authorize                            validate, then sign in at the provider
  GET  /v1/oauth/callback                             the provider's answer
  GET  /v1/oauth/consent                              the consent page
  GET  /v1/oauth/pages.css                            the consent and error pages' stylesheet
  POST /v1/oauth/consent                              the decision: back to the client
  POST /v1/oauth/token                                every grant (`grants/registry.py`)
  POST /v1/oauth/revoke                               RFC 7009

The browser steps answer HTML pages or redirects (a failed dependency is an error page with
503, never a problem+json a person cannot read); the others answer JSON, the token and
revocation endpoints in RFC 6749's error shape.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from chalice import Response
from chalice.app import Request

from chalicelib import errors, strict_parsing
from chalicelib.api import edge
from chalicelib.api import oauth_models as models
from chalicelib.api.grants import registry as grants
from chalicelib.api.grants.endpoint import TOKEN_HEADERS as _TOKEN_HEADERS
from chalicelib.api.grants.endpoint import serve
from chalicelib.api.operations import (
    FORM,
    HTML,
    OAUTH_TOO_LARGE,
    Answer,
    Operations,
    oauth_errors,
    oauth_validated,
    query_names,
    single_parameters,
    token_parameters,
)
from chalicelib.errors import OAuthError, ServiceError
from chalicelib.oauth import metadata, pages
from chalicelib.oauth.service import PageError, Redirect, refused_request
from chalicelib.runtime import services

blueprint = Operations(__name__)


# What the document says each route answers (`Operations.public`).
TAG = "MCP authorization"
REDIRECT = Answer(
    302, "To the next step of the sign-in (Location).", headers={"Location": "Location"}
)
SEE_OTHER = Answer(303, REDIRECT.description, headers=REDIRECT.headers)
UNSERVED = Answer(400, "An error page: the request cannot be served (never redirected).", HTML)
LATER_PAGE = Answer(503, "An error page: try again later.", HTML)
LATER = Answer(503, "Try again later.", problems=(errors.TEMPORARILY_UNAVAILABLE,), oauth=True)
TOKEN_FAILURES = (
    Answer(
        400,
        "RFC 6749 error (any body but a form too: `invalid_request`).",
        problems=(
            errors.OAUTH_INVALID_REQUEST,
            errors.INVALID_GRANT,
            errors.UNSUPPORTED_GRANT_TYPE,
            errors.INVALID_TARGET,
            errors.OAUTH_INVALID_SCOPE,
            errors.UNAUTHORIZED_CLIENT,
        ),
        oauth=True,
    ),
    Answer(
        401,
        "Clients here are public: no client secret. To a request with an `Authorization` "
        "header, with `WWW-Authenticate` naming its scheme (RFC 6749 §5.2). A service "
        "client's `client_assertion` refused (signature, audience, expiry, a replayed `jti`, "
        "an unknown or deleted client).",
        problems=(errors.INVALID_CLIENT,),
        oauth=True,
    ),
    OAUTH_TOO_LARGE,
    LATER,
)
# The token endpoint serves token exchange too: a delegation's subject token refused as a
# data-plane request with it would be (`/v1/auth/exchange` answers the same).
TOKEN_ENDPOINT_FAILURES = (
    TOKEN_FAILURES[0],
    Answer(
        401,
        f"{TOKEN_FAILURES[1].description} A delegation's subject_token that is not a working "
        "credential (`invalid_token`; the description names the data-plane code: "
        "invalid_credentials, expired_credentials, revoked_credentials).",
        problems=(errors.INVALID_CLIENT, errors.INVALID_SUBJECT_TOKEN),
        oauth=True,
    ),
    Answer(
        403,
        "A delegation's subject_token may not act in that workspace (workspace_mismatch,"
        " not_a_member, ip_not_allowed).",
        problems=(errors.SUBJECT_NOT_ALLOWED,),
        oauth=True,
    ),
    *TOKEN_FAILURES[2:],
)
NOT_SERVED = Answer(404, "No protected resource is served here.", problems=(errors.NOT_FOUND,))
RESOURCE_METADATA = (Answer(200, "The resource's metadata.", models.Metadata), NOT_SERVED)
_DISCOVERY_HEADERS = {"Cache-Control": "public, max-age=300"}
_AUTH_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9!#$%&'*+.^_`|~-]{0,31}$")  # an RFC 9110 token
# Others are ignored (RFC 6749 §3.1).
AUTHORIZE_PARAMETERS = query_names(models.AuthorizationQuery)


def page(status: int, html: str, redirect_uri: str | None = None) -> Response:
    return Response(body=html, status_code=status, headers=dict(pages.headers(redirect_uri)))


def redirect(to: Redirect, status: int = 302) -> Response:
    headers: dict[str, str | list[str]] = {
        "Location": to.location,
        "Cache-Control": "no-store",
        "Referrer-Policy": "no-referrer",
    }
    if to.set_cookie:
        headers["Set-Cookie"] = to.set_cookie
    return Response(body="", status_code=status, headers=headers)


@contextmanager
def shown_as_pages(responses: list[Response]) -> Iterator[None]:
    """A browser step's refusals and failures as an error page (appended to `responses`)."""
    try:
        yield
    except PageError as refused:
        html = pages.error_page(refused.title, refused.message, _issuer(), refused.code)
        responses.append(page(refused.status, html))
    except ServiceError as error:
        title = "Try again later" if error.status == 503 else "Request refused"
        html = pages.error_page(title, error.detail, _issuer(), error.code)
        responses.append(page(error.status, html))


def _issuer() -> str:
    return services().settings.issuer


def browser_step(step: Callable[[], Response]) -> Response:
    responses: list[Response] = []
    with shown_as_pages(responses):
        return step()
    return responses[0]


def query_pairs(request: Request) -> list[tuple[str, str]]:
    """Every value of every query parameter, so that a repeated one is seen."""
    params = request.query_params
    if not params:
        return []
    return [(name, value) for name in params for value in params.getlist(name)]


def cookie(request: Request) -> str | None:
    return request.headers.get("cookie")


# -- discovery ----------------------------------------------------------------------------


@blueprint.public(
    "GET",
    "/.well-known/oauth-authorization-server",
    name="authorizationServerMetadata",
    summary="RFC 8414 metadata of the MCP authorization server",
    tag=TAG,
    answers=(Answer(200, "The metadata.", models.Metadata),),
)
def authorization_server_metadata() -> Response:
    body = metadata.authorization_server(services().settings.issuer, grants.grant_types())
    return edge.json_response(body, headers=_DISCOVERY_HEADERS)


def _protected_resource(path: str) -> Response:
    settings = services().settings
    resource = next((r for r in settings.mcp_resources if r.path == path), None)
    if resource is None:
        raise errors.NOT_FOUND.error("No protected resource is served at this path.")
    return edge.json_response(
        metadata.protected_resource(resource, settings.issuer), headers=_DISCOVERY_HEADERS
    )


# Chalice routes have no greedy path parameter: resources one to three segments deep.
@blueprint.public(
    "GET",
    "/.well-known/oauth-protected-resource/{a}",
    name="protectedResourceMetadata1",
    summary="RFC 9728 metadata of an MCP resource served here",
    tag=TAG,
    answers=RESOURCE_METADATA,
)
def protected_resource_1(a: str) -> Response:
    return _protected_resource(f"/{a}")


@blueprint.public(
    "GET",
    "/.well-known/oauth-protected-resource/{a}/{b}",
    name="protectedResourceMetadata2",
    summary="RFC 9728 metadata of an MCP resource served here",
    tag=TAG,
    answers=RESOURCE_METADATA,
)
def protected_resource_2(a: str, b: str) -> Response:
    return _protected_resource(f"/{a}/{b}")


@blueprint.public(
    "GET",
    "/.well-known/oauth-protected-resource/{a}/{b}/{c}",
    name="protectedResourceMetadata3",
    summary="RFC 9728 metadata of an MCP resource served here",
    tag=TAG,
    answers=RESOURCE_METADATA,
)
def protected_resource_3(a: str, b: str, c: str) -> Response:
    return _protected_resource(f"/{a}/{b}/{c}")


# -- registration -------------------------------------------------------------------------


@blueprint.public(
    "POST",
    metadata.REGISTER_PATH,
    name="registerClient",
    summary="RFC 7591 dynamic client registration",
    tag=TAG,
    answers=(
        Answer(201, "The client, with its `client_id`.", models.Metadata),
        Answer(
            400,
            "The metadata is not acceptable.",
            problems=(
                errors.INVALID_CLIENT_METADATA,
                errors.INVALID_REDIRECT_URI,
                errors.OAUTH_INVALID_REQUEST,
            ),
            oauth=True,
        ),
        Answer(413, "Over 16 KiB.", problems=(errors.OAUTH_PAYLOAD_TOO_LARGE,), oauth=True),
        Answer(415, "Send application/json.", problems=(errors.UNSUPPORTED_MEDIA_TYPE,)),
        Answer(429, "Too many registrations.", problems=(errors.REGISTRATION_LIMITED,), oauth=True),
        LATER,
    ),
    content_types=[edge.JSON],
    body={edge.JSON: models.ClientMetadata},
)
def register() -> Response:
    request = blueprint.current_request
    svc = services()
    context: dict[str, Any] = request.context or {}
    address = (context.get("identity") or {}).get("sourceIp") or "unknown"
    raw = edge.read_body(request)
    try:
        body: Any = strict_parsing.json_value(raw) if raw.strip() else None
    except strict_parsing.MalformedJson:
        body = None
    if not isinstance(body, dict):
        return _registration_error("invalid_client_metadata", "The body must be a JSON object.")
    try:
        asked = oauth_validated(models.ClientMetadata, body)
    except OAuthError as invalid:
        return _registration_error(invalid.error, invalid.description)
    # Only a registration that would succeed counts: a client fixing its metadata after a 400
    # has not used up the address's allowance.
    retry_after = svc.registration_limit.admit(str(address), svc.clock.now())
    if retry_after is not None:
        limited = errors.REGISTRATION_LIMITED
        return edge.json_response(
            {"error": limited.code, "error_description": limited.detail},
            status=limited.status,
            headers={"Retry-After": str(retry_after), **_TOKEN_HEADERS},
        )
    client = svc.oauth_clients.register(
        svc.clock.now(),
        redirect_uris=asked.redirect_uris,
        application_type=asked.application_type,
        grant_types=asked.grant_types,
        client_name=asked.client_name,
        dpop_bound_access_tokens=asked.dpop_bound_access_tokens,
    )
    return edge.json_response(client, status=201, headers=_TOKEN_HEADERS)


def _registration_error(error: str, description: str) -> Response:
    return edge.json_response(
        {"error": error, "error_description": description}, status=400, headers=_TOKEN_HEADERS
    )


# -- the browser steps --------------------------------------------------------------------


@blueprint.public(
    "GET",
    metadata.AUTHORIZE_PATH,
    name="authorize",
    summary="Start an authorization (PKCE S256): on to the login provider",
    tag=TAG,
    answers=(
        REDIRECT,
        Answer(
            400,
            "An error page naming the RFC 6749 error: every refusal before the person has "
            "signed in is shown here, never redirected (RFC 9700 §4.11.2).",
            HTML,
        ),
        Answer(500, "An error page: sign-in is not configured (LOGIN_PROVIDER).", HTML),
        LATER_PAGE,
    ),
    query=models.AuthorizationQuery,
)
def authorize() -> Response:
    request = blueprint.current_request

    def step() -> Response:
        try:
            parameters = single_parameters(query_pairs(request), AUTHORIZE_PARAMETERS)
        except OAuthError as repeated:
            # Before the client is known nothing may be redirected to.
            raise PageError(400, "Invalid request", repeated.description) from None
        oauth = services().oauth_service
        client = oauth.requesting_client(
            parameters.get("client_id", ""), parameters.get("redirect_uri")
        )
        try:
            asked = oauth_validated(
                models.AuthorizationQuery,
                parameters,
                context={"resources": oauth.served_resources()},
            )
        except OAuthError as refused:
            raise refused_request(refused) from None
        return redirect(oauth.authorize(client, asked.request(), cookie(request)))

    return browser_step(step)


@blueprint.public(
    "GET",
    pages.STYLESHEET_PATH,
    name="oauthPagesStylesheet",
    summary="The stylesheet of the consent and error pages",
    tag=TAG,
    answers=(
        Answer(200, "The pages' stylesheet (their CSP allows only this origin's).", "text/css"),
    ),
)
def pages_stylesheet() -> Response:
    """The consent and error pages' stylesheet (their CSP allows only this origin's)."""
    return Response(body=pages.stylesheet(), status_code=200, headers=pages.stylesheet_headers())


@blueprint.public(
    "GET",
    metadata.CALLBACK_PATH,
    name="loginCallback",
    summary="Back from the login provider: on to the consent page",
    tag=TAG,
    answers=(SEE_OTHER, UNSERVED, LATER_PAGE),
    query=models.CallbackQuery,
)
def callback() -> Response:
    request = blueprint.current_request

    def step() -> Response:
        answered = models.CallbackQuery.model_validate(dict(request.query_params or {}))
        to = services().oauth_service.callback(answered.parameters(), cookie(request))
        return redirect(to, status=303)

    return browser_step(step)


@blueprint.public(
    "GET",
    metadata.CONSENT_PATH,
    name="consentPage",
    summary="The consent page",
    tag=TAG,
    answers=(Answer(200, "The consent form.", HTML), UNSERVED, LATER_PAGE),
    query=models.ConsentQuery,
)
def consent_page() -> Response:
    request = blueprint.current_request

    def step() -> Response:
        asked = models.ConsentQuery.model_validate(dict(request.query_params or {}))
        view = services().oauth_service.consent(asked.consent, cookie(request))
        return page(200, pages.consent_page(**view.html_parameters), view.redirect_uri)

    return browser_step(step)


@blueprint.public(
    "POST",
    metadata.CONSENT_PATH,
    name="consent",
    summary="The person's decision: back to the client with a code or an error",
    tag=TAG,
    answers=(
        SEE_OTHER,
        UNSERVED,
        LATER_PAGE,
        Answer(415, "Send the consent form.", problems=(errors.UNSUPPORTED_MEDIA_TYPE,)),
    ),
    content_types=[FORM],
    body={FORM: models.ConsentForm},
)
def decide() -> Response:
    request = blueprint.current_request

    def step() -> Response:
        try:
            fields = models.ConsentForm.model_validate(token_parameters(request)[1])
        except OAuthError as invalid:
            raise PageError(400, "Request refused", invalid.description) from None
        decided = services().oauth_service.decide(fields.parameters(), cookie(request))
        return redirect(decided, status=303)

    return browser_step(step)


# -- the token endpoint -------------------------------------------------------------------


def client_authentication_refused(authorization: str) -> Response:
    """401 `invalid_client` to a client that authenticated with the Authorization header:
    with the challenge of the scheme it used (RFC 6749 §5.2 MUST), though none would pass."""
    scheme = authorization.strip().partition(" ")[0]
    if not _AUTH_SCHEME.fullmatch(scheme):
        scheme = "Basic"
    response = edge.oauth_error_response(errors.INVALID_CLIENT.oauth_error())
    response.headers["WWW-Authenticate"] = f'{scheme} realm="{services().settings.issuer}"'
    return response


@blueprint.public(
    "POST",
    metadata.TOKEN_PATH,
    name="oauthToken",
    summary="The token endpoint: every grant (authorization code, refresh, token exchange,"
    " JWT bearer, client credentials)",
    tag=TAG,
    answers=(
        Answer(
            200,
            "The grant's token: for the authorization code and refresh grants an access "
            "token for the resource, and a refresh token if the client's `grant_types` "
            "include `refresh_token`; for an ID-JAG (JWT bearer) an access token for its "
            "resource, no refresh token; for token exchange and a workload's JWT bearer "
            "assertion, the workspace token `/v1/auth/exchange` answers.",
            models.AccessToken,
            headers={"Cache-Control": "CacheControlNoStore"},
        ),
        *TOKEN_ENDPOINT_FAILURES,
    ),
    content_types=edge.ANY_MEDIA_TYPE,
    body={FORM: models.TokenEndpointForm},
)
def token() -> Response:
    request = blueprint.current_request
    authorization = request.headers.get("authorization")
    if authorization:
        return client_authentication_refused(authorization)
    return serve(request, metadata.TOKEN_PATH, {FORM: models.TokenForm})


@blueprint.public(
    "POST",
    metadata.REVOKE_PATH,
    name="oauthRevoke",
    summary="RFC 7009 revocation of a refresh or access token's grant",
    tag=TAG,
    answers=(
        Answer(
            200,
            "Revoked, or nothing to revoke. Without `client_id` the token alone suffices; "
            "with another client's `client_id`, nothing is revoked.",
        ),
        *TOKEN_FAILURES,
    ),
    content_types=edge.ANY_MEDIA_TYPE,
    body={FORM: models.RevocationForm},
)
def revoke() -> Response:
    request = blueprint.current_request
    with oauth_errors():
        _, parameters = token_parameters(request)
        oauth_validated(models.RevocationForm, parameters)
        services().oauth_service.revoke(parameters)
    headers: dict[str, str | list[str]] = {**_TOKEN_HEADERS}
    return Response(body="", status_code=200, headers=headers)
