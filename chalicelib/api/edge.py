"""The HTTP edge: strict request parsing, responses, and the one place errors become bodies.

Every error the service answers is RFC 9457 problem+json with a stable `code` (the token
endpoints answer RFC 6749 bodies instead). Chalice's own error bodies (405, 415, 500) are
rewritten here too, so no framework default ever reaches a client.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable, Mapping
from typing import Any

from chalice import Blueprint
from chalice.app import ChaliceUnhandledError, Request, Response

from chalicelib import errors, idempotency, logs, strict_parsing
from chalicelib.access.dpop import DpopRequest
from chalicelib.access.headers import Sent, identity_headers, origin
from chalicelib.access.principal import Principal, Refusal
from chalicelib.dependencies import is_dependency_failure
from chalicelib.errors import DependencyUnavailable, OAuthError, ServiceError
from chalicelib.idempotency import IdempotentRequest
from chalicelib.logs import logger
from chalicelib.runtime import services

JSON = "application/json"
PROBLEM_JSON = "application/problem+json"
MAX_BODY_BYTES = 16 * 1024
NO_STORE = {"Cache-Control": "no-store"}
# Routes take any media type from Chalice and check it in `read_json`, after the caller was
# authenticated and authorized: a caller without the right never learns a request's shape.
ANY_MEDIA_TYPE = ["*/*"]

# Chalice's own error bodies, by their `Code`, and the problem each becomes. Any other code
# would come from a Chalice view error, which this service never raises: a bug, so a 500.
_FRAMEWORK_ERRORS = {
    "MethodNotAllowedError": errors.METHOD_NOT_ALLOWED,
    "UnsupportedMediaType": errors.UNSUPPORTED_MEDIA_TYPE,
    "BadRequest": errors.INVALID_REQUEST,
    "InternalServerError": errors.INTERNAL_ERROR,
}


def json_response(
    body: Any, status: int = 200, headers: Mapping[str, str] | None = None, secret: bool = False
) -> Response:
    """A JSON answer. `secret=True` for any answer carrying a plaintext key or a token."""
    all_headers: dict[str, Any] = {"Content-Type": JSON}
    if secret:
        all_headers.update(NO_STORE)
    all_headers.update(headers or {})
    return Response(
        body=json.dumps(body, separators=(",", ":")) if body is not None else "",
        status_code=status,
        headers=all_headers,
    )


def empty_response(status: int = 204) -> Response:
    return Response(body="", status_code=status, headers={})


_STAGE_NAME = re.compile(r"[A-Za-z0-9_-]{1,128}")  # what API Gateway allows a stage's name


def reference_prefix(request: Request | None) -> str:
    """The path the API is served under, for links to its own pages (a problem's `type`).

    API Gateway serves a REST API under its stage (`https://{id}.execute-api.{region}.
    amazonaws.com/v1api/...`) and names that stage in the request context; the local server
    serves at the root and names none. A custom domain must map the API under the same base
    path for the links to resolve (the stack defines none).
    """
    stage = (request.context or {}).get("stage") if request is not None else None
    return f"/{stage}" if isinstance(stage, str) and _STAGE_NAME.fullmatch(stage) else ""


def problem_response(error: ServiceError, prefix: str = "") -> Response:
    headers: dict[str, Any] = {"Content-Type": PROBLEM_JSON, **error.headers}
    return Response(
        body=json.dumps(error.body(prefix), separators=(",", ":")),
        status_code=error.status,
        headers=headers,
    )


def oauth_error_response(error: OAuthError) -> Response:
    headers: dict[str, Any] = {"Content-Type": JSON, **NO_STORE, **error.headers}
    return Response(
        body=json.dumps(error.body(), separators=(",", ":")),
        status_code=error.status,
        headers=headers,
    )


# -- requests ------------------------------------------------------------------------------


def read_body(request: Request, limit: int = MAX_BODY_BYTES) -> bytes:
    raw = request.raw_body or b""
    if isinstance(raw, str):
        raw = raw.encode("utf-8")
    if len(raw) > limit:
        raise errors.PAYLOAD_TOO_LARGE.error(
            f"The request body is larger than {limit // 1024} KiB."
        )
    return raw


def media_type(request: Request) -> str:
    header = request.headers.get("content-type") or JSON
    return header.split(";", 1)[0].strip().lower()


def read_json(
    request: Request,
    fields: set[str] | None,
    required: bool = True,
    declared: set[str] | None = None,
) -> dict[str, Any]:
    """The JSON object body, or 400/413/415. Unknown fields are refused, not ignored (by the
    body's model where `fields` is None). Each field the body's model `declared` is taken in
    snake_case or camelCase (`strict_parsing.one_spelling`); both, disagreeing, is a 400."""
    raw = read_body(request)
    if not raw.strip():
        if required:
            raise errors.INVALID_JSON.error()
        return {}
    if media_type(request) != JSON:
        raise errors.UNSUPPORTED_MEDIA_TYPE.error()
    try:
        body = strict_parsing.json_value(raw)
    except strict_parsing.MalformedJson:
        raise errors.INVALID_JSON.error("The request body is not valid JSON.") from None
    if not isinstance(body, dict):
        raise errors.INVALID_JSON.error()
    body = without_empty_workspace(body)
    if declared is not None:
        try:
            body = strict_parsing.one_spelling(body, declared)
        except strict_parsing.ConflictingSpellings as conflict:
            raise errors.INVALID_REQUEST.error(str(conflict)) from None
    unknown = sorted(set(body) - fields) if fields is not None else []
    if unknown:
        raise errors.UNKNOWN_FIELD.error(f"Unknown field: {unknown[0][:64]!r}.")
    return body


# A workspace id in a body, in either spelling.
WORKSPACE_FIELDS = ("workspaceId", "workspace_id")


def without_empty_workspace(body: dict[str, Any]) -> dict[str, Any]:
    """An empty workspace id is no workspace: clients that render "none" as an empty string
    (Go's zero value, httpx's `None` in a query) mean to name none."""
    return {k: v for k, v in body.items() if not (k in WORKSPACE_FIELDS and v == "")}


# Query parameters people (and some tools) use to carry a credential in the URL.
CREDENTIAL_PARAMETERS = ("access_token", "api_key", "key", "token")


def refuse_credentials_in_url(request: Request) -> None:
    """A credential in the URL ends up in access logs, proxies and browser history."""
    if set(request.query_params or {}).intersection(CREDENTIAL_PARAMETERS):
        raise errors.CREDENTIAL_IN_URL.error()


def query(request: Request, allowed: set[str]) -> dict[str, str]:
    refuse_credentials_in_url(request)
    params: dict[str, str] = dict(request.query_params or {})
    unknown = sorted(set(params) - allowed)
    if unknown:
        raise errors.UNKNOWN_PARAMETER.error(f"Unknown query parameter: {unknown[0][:64]!r}.")
    return params


# Where a request named its workspace, as a refusal's detail names it.
HEADER, QUERY = "X-Workspace-Id", "The workspace_id query parameter"


def requested_workspace(
    request: Request, sent: Sent, allow_query: bool
) -> tuple[str | None, str]:
    """The workspace the request names (an empty value names none), and where it came from."""
    if sent.copies > 1:
        raise errors.CONFLICTING_WORKSPACE_ID.error("Send one X-Workspace-Id header.")
    header = (sent.value.strip() or None) if sent.value is not None else None
    if not allow_query:
        return header, HEADER
    params: dict[str, str] = dict(request.query_params or {})
    from_query = params.get("workspace_id", "").strip() or None
    if header is not None and from_query is not None and header != from_query:
        raise errors.CONFLICTING_WORKSPACE_ID.error()
    return (header, HEADER) if header is not None or from_query is None else (from_query, QUERY)


def _named_source(refusal: Refusal, source: str) -> Refusal:
    """A malformed workspace id's refusal, naming where the request sent it."""
    if refusal.problem is not errors.INVALID_WORKSPACE_ID or source == HEADER:
        return refusal
    return refusal._replace(detail=f"{source} must be a workspace id (ws_ and 26 characters).")


# Two credentials: whichever copy a proxy or framework picks, it may not be the one checked
# here, so neither is used (the data-plane authorizer refuses them too).
REPEATED_AUTHORIZATION = Refusal(errors.INVALID_CREDENTIALS, "Send one Authorization header.")


def request_url(request: Request) -> str:
    """The URL the client addressed, as a DPoP proof's `htu` names it: the service's public
    base (TOKEN_ISSUER, where every client reaches it) and the path as sent (API Gateway's
    `path`: within the API, without the stage)."""
    event = request.to_original_event()
    # The local server (chalice local) names it in the request context only.
    path = event.get("path") or (event.get("requestContext") or {}).get("path")
    return services().settings.issuer + (path if isinstance(path, str) else "/")


def dpop_request(request: Request, proof: str | None) -> DpopRequest:
    return DpopRequest(proof, request.method, request_url(request))


def authenticate(request: Request, allow_query_workspace: bool = False) -> Principal:
    """Resolve the caller (README, "API reference") or raise its refusal."""
    refuse_credentials_in_url(request)
    event = request.to_original_event()
    headers = identity_headers(event)
    if headers.authorization.copies > 1:
        raise REPEATED_AUTHORIZATION.error(credential_sent=True)
    authorization = headers.authorization.value
    credential_sent = bool(authorization and authorization.strip())
    dpop = dpop_request(request, headers.proof())
    try:
        workspace, source = requested_workspace(request, headers.workspace, allow_query_workspace)
    except ServiceError as conflict:
        # Two different workspaces named is a malformed request, but a caller first learns
        # whether its credential is good (401 and 403 come before 400).
        found = services().resolver.resolve(authorization, None, origin=origin(event), dpop=dpop)
        if isinstance(found, Refusal):
            raise found.error(credential_sent) from None
        raise conflict
    resolved = services().resolver.resolve(
        authorization, workspace, origin=origin(event), dpop=dpop
    )
    if isinstance(resolved, Refusal):
        raise _named_source(resolved, source).error(credential_sent)
    delegation = (
        {"root": resolved.root, "jti": resolved.token_id, "act": resolved.act}
        if resolved.credential == "delegated"
        else None
    )
    logs.identify_actor(resolved.user_id, resolved.key_id, resolved.workspace_id, delegation)
    return resolved


def idempotent_request(
    request: Request, principal: Principal, operation: str, target: str | None, body: Any
) -> IdempotentRequest | None:
    """The request's Idempotency-Key for this caller and request, None without the header.

    The caller is the user through one credential: an API key, or any of the user's tokens
    (which all carry every scope of the user).
    """
    caller = f"{principal.user_id}/{principal.key_id or 'user-token'}"
    return IdempotentRequest.of(
        request.headers.get(idempotency.HEADER.lower()), caller, operation, target, body
    )


# -- routes ----------------------------------------------------------------------------


class CarriedError(ChaliceUnhandledError):
    """A view's `ServiceError` or `OAuthError` on its way past Chalice to `errors_as_problems`.

    Chalice answers any exception a view raises with a bare 500 before middleware sees it,
    except its own `ChaliceUnhandledError`. Our errors do not subclass it (the authorizer's
    cold start loads them, and not Chalice): each view's wrapper carries them in this one.
    """

    def __init__(self, error: ServiceError | OAuthError):
        super().__init__(str(error))
        self.error = error


class Routes(Blueprint):
    """The route blueprints: a refusal reaches the middleware that renders it, and a
    dependency failure a view did not name is still a 503.

    Each view is wrapped: its `ServiceError` or `OAuthError` goes on in `CarriedError`; whatever
    `is_dependency_failure` recognises (a botocore or network failure no store wrapped)
    becomes `DependencyUnavailable`; anything else stays a bug, a 500.
    """

    def route(self, path: str, **kwargs: Any) -> Callable[..., Any]:
        register = super().route(path, **kwargs)

        def decorator(view: Callable[..., Any]) -> Callable[..., Any]:
            @functools.wraps(view)
            def guarded(*args: Any, **view_kwargs: Any) -> Any:
                try:
                    return view(*args, **view_kwargs)
                except (ServiceError, OAuthError) as error:
                    raise CarriedError(error) from error
                except Exception as error:
                    if not is_dependency_failure(error):
                        raise
                    logger.warning("dependency failed", extra={"error": type(error).__name__})
                    raise CarriedError(DependencyUnavailable("AWS")) from None

            register(guarded)
            return view

        return decorator


# -- middleware ----------------------------------------------------------------------------


def _framework_error(response: Response) -> ServiceError | None:
    body = response.body
    if isinstance(body, dict) and set(body) == {"Code", "Message"}:
        problem = _FRAMEWORK_ERRORS.get(body["Code"], errors.INTERNAL_ERROR)
        return problem.error(headers=_allow_header(response))
    return None


def _allow_header(response: Response) -> dict[str, str]:
    allow = response.headers.get("Allow")
    return {"Allow": str(allow)} if allow else {}


def errors_as_problems(request: Request, get_response: Callable[[Request], Response]) -> Response:
    """Chalice HTTP middleware: turns every refusal and failure into its documented body.

    It also gives every line logged while serving the request the request's id: API
    Gateway's, or where there is none (the local server), the Lambda invocation's.
    """
    logs.start_request(_request_id(request))
    code = None
    prefix = reference_prefix(request)
    try:
        response = get_response(request)
        framework_error = _framework_error(response)
        if framework_error is not None:
            code = framework_error.code
            response = problem_response(framework_error, prefix)
    except (CarriedError, ServiceError, OAuthError) as raised:
        error = raised.error if isinstance(raised, CarriedError) else raised
        if isinstance(error, ServiceError):
            code = error.code
            response = problem_response(error, prefix)
        else:
            code = error.error
            response = oauth_error_response(error)
    except Exception:  # a bug: answer a plain 500, log it without request data
        logger.exception("unhandled error")
        code = errors.INTERNAL_ERROR.code
        response = problem_response(errors.INTERNAL_ERROR.error(), prefix)
    _log_request(request, response.status_code, code)
    logs.end_request()
    return response


def _request_id(request: Request) -> str | None:
    request_id = (request.context or {}).get("requestId")
    if request_id is None and request.lambda_context is not None:
        request_id = getattr(request.lambda_context, "aws_request_id", None)
    return str(request_id) if request_id is not None else None


def _log_request(request: Request, status: int, code: str | None) -> None:
    """One line per request; the caller's ids come with it (see `authenticate`)."""
    context = request.context or {}
    logger.info(
        "request",
        extra={
            "method": request.method,
            "route": context.get("resourcePath"),
            "status": status,
            "code": code,
        },
    )
