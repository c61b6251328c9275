"""The HTTP edge: strict request parsing, responses, and the one place errors become bodies.

Every error the service answers is RFC 9457 problem+json with a stable `code` (the token
endpoints answer RFC 6749 bodies instead). Chalice's own error bodies (405, 415, 500) are
rewritten here too, so no framework default ever reaches a client.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from chalice.app import Request, Response

from chalicelib import parsing
from chalicelib.access.principal import Principal, Refusal
from chalicelib.errors import OAuthError, ServiceError, bad_request
from chalicelib.logs import logger
from chalicelib.runtime import services

JSON = "application/json"
PROBLEM_JSON = "application/problem+json"
MAX_BODY_BYTES = 16 * 1024
NO_STORE = {"Cache-Control": "no-store"}
REALM = 'Bearer realm="svc"'
REPEATED_AUTHORIZATION = Refusal(401, "invalid_credentials", "Send one Authorization header.")

# Chalice's own error bodies, by their `Code`, and the problem code each becomes.
_FRAMEWORK_ERRORS = {
    "MethodNotAllowedError": (405, "method_not_allowed", "This method is not allowed here."),
    "UnsupportedMediaType": (415, "unsupported_media_type", "Send application/json."),
    "BadRequest": (400, "invalid_request", "The request is not valid."),
    "InternalServerError": (500, "internal_error", "An internal error occurred."),
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


def problem_response(error: ServiceError) -> Response:
    headers: dict[str, Any] = {"Content-Type": PROBLEM_JSON, **error.headers}
    return Response(
        body=json.dumps(error.problem(), separators=(",", ":")),
        status_code=error.status,
        headers=headers,
    )


def oauth_error_response(error: OAuthError) -> Response:
    headers: dict[str, Any] = {"Content-Type": JSON, **NO_STORE}
    return Response(
        body=json.dumps(error.body(), separators=(",", ":")),
        status_code=error.status,
        headers=headers,
    )


# -- requests ------------------------------------------------------------------------------


def read_body(request: Request) -> bytes:
    raw = request.raw_body or b""
    if isinstance(raw, str):
        raw = raw.encode("utf-8")
    if len(raw) > MAX_BODY_BYTES:
        raise ServiceError(413, "payload_too_large", "The request body is larger than 16 KiB.")
    return raw


def read_json(request: Request, fields: set[str], required: bool = True) -> dict[str, Any]:
    """The JSON object body, or 400/413. Unknown fields are refused, not ignored."""
    raw = read_body(request)
    if not raw.strip():
        if required:
            raise bad_request("invalid_json", "The request body must be a JSON object.")
        return {}
    try:
        body = parsing.json_value(raw)
    except parsing.MalformedJson:
        raise bad_request("invalid_json", "The request body is not valid JSON.") from None
    if not isinstance(body, dict):
        raise bad_request("invalid_json", "The request body must be a JSON object.")
    unknown = sorted(set(body) - fields)
    if unknown:
        raise bad_request("unknown_field", f"Unknown field: {unknown[0][:64]!r}.")
    return body


# Query parameters people (and some tools) use to carry a credential in the URL.
CREDENTIAL_PARAMETERS = ("access_token", "api_key", "key", "token")


def refuse_credentials_in_url(request: Request) -> None:
    """A credential in the URL ends up in access logs, proxies and browser history."""
    sent = set(request.query_params or {})
    if sent.intersection(CREDENTIAL_PARAMETERS):
        raise bad_request(
            "credential_in_url",
            "Send the credential in the Authorization header ('Authorization: Bearer <key>'), "
            "never in the URL.",
        )


def query(request: Request, allowed: set[str]) -> dict[str, str]:
    refuse_credentials_in_url(request)
    params: dict[str, str] = dict(request.query_params or {})
    unknown = sorted(set(params) - allowed)
    if unknown:
        raise bad_request("unknown_parameter", f"Unknown query parameter: {unknown[0][:64]!r}.")
    return params


def clean_text(value: Any, code: str, name: str, max_length: int = 100) -> str:
    """A trimmed, printable string of 1..max_length characters, else 400 `code`."""
    if value is None:
        raise bad_request(code, f"{name} is required.")
    if not isinstance(value, str):
        raise bad_request(code, f"{name} must be a string.")
    text = value.strip()
    if not 1 <= len(text) <= max_length:
        raise bad_request(code, f"{name} must be 1 to {max_length} characters.")
    if not parsing.is_printable(text):
        raise bad_request(code, f"{name} must not contain control characters.")
    return text


def one_of_spellings(
    body: Mapping[str, Any], camel: str, snake: str, code: str = "conflicting_workspace_id"
) -> Any:
    """Older clients spell `workspaceId` as `workspace_id`; both and different is a 400."""
    if camel in body and snake in body and body[camel] != body[snake]:
        raise bad_request(code, f"{camel} and {snake} disagree.")
    return body[camel] if camel in body else body.get(snake)


def header_copies(request: Request, name: str) -> int:
    """How many times the request carried header `name` (API Gateway keeps every copy in
    the event's `multiValueHeaders`; `headers` holds only one of them)."""
    multi = request.to_original_event().get("multiValueHeaders") or {}
    copies = sum(len(values or ()) for key, values in multi.items() if key.lower() == name)
    return copies or (1 if name in request.headers else 0)


def requested_workspace(request: Request, allow_query: bool) -> str | None:
    if header_copies(request, "x-workspace-id") > 1:
        raise bad_request("conflicting_workspace_id", "Send one X-Workspace-Id header.")
    header = request.headers.get("x-workspace-id")
    if not allow_query:
        return header
    params: dict[str, str] = dict(request.query_params or {})
    from_query = params.get("workspace_id")
    if header is not None and from_query is not None and header.strip() != from_query.strip():
        raise bad_request(
            "conflicting_workspace_id", "X-Workspace-Id and workspace_id name different workspaces."
        )
    return header if header is not None else from_query


def refusal_error(refusal: Refusal, credential_sent: bool) -> ServiceError:
    headers = {}
    if refusal.status == 401:
        headers["WWW-Authenticate"] = (
            f'{REALM}, error="invalid_token"' if credential_sent else REALM
        )
    return ServiceError(refusal.status, refusal.code, refusal.detail, headers)


def authenticate(request: Request, allow_query_workspace: bool = False) -> Principal:
    """Resolve the caller (README, "API reference") or raise its refusal."""
    refuse_credentials_in_url(request)
    if header_copies(request, "authorization") > 1:
        # Two credentials: whichever copy a proxy or framework picks, it may not be the one
        # checked here, so neither is used (the data-plane authorizer refuses them too).
        raise refusal_error(REPEATED_AUTHORIZATION, credential_sent=True)
    authorization = request.headers.get("authorization")
    workspace = requested_workspace(request, allow_query_workspace)
    resolved = services().resolver.resolve(authorization, workspace)
    if isinstance(resolved, Refusal):
        raise refusal_error(resolved, credential_sent=bool(authorization and authorization.strip()))
    request.principal = resolved  # type: ignore[attr-defined]  # for the request log line
    return resolved


# -- middleware ----------------------------------------------------------------------------


def _framework_error(response: Response) -> ServiceError | None:
    body = response.body
    if isinstance(body, dict) and set(body) == {"Code", "Message"}:
        status, code, detail = _FRAMEWORK_ERRORS.get(
            body["Code"], (response.status_code, "internal_error", "An internal error occurred.")
        )
        return ServiceError(status, code, detail, _allow_header(response))
    return None


def _allow_header(response: Response) -> dict[str, str]:
    allow = response.headers.get("Allow")
    return {"Allow": str(allow)} if allow else {}


def errors_as_problems(request: Request, get_response: Callable[[Request], Response]) -> Response:
    """Chalice HTTP middleware: turns every refusal and failure into its documented body."""
    code = None
    try:
        response = get_response(request)
        framework_error = _framework_error(response)
        if framework_error is not None:
            code = framework_error.code
            response = problem_response(framework_error)
    except ServiceError as error:
        code = error.code
        response = problem_response(error)
    except OAuthError as error:
        code = error.error
        response = oauth_error_response(error)
    except Exception:  # a bug: answer a plain 500, log it without request data
        logger.exception("unhandled error")
        code = "internal_error"
        response = problem_response(
            ServiceError(500, "internal_error", "An internal error occurred.")
        )
    _log_request(request, response.status_code, code)
    return response


def _log_request(request: Request, status: int, code: str | None) -> None:
    principal: Principal | None = getattr(request, "principal", None)
    context = request.context or {}
    logger.info(
        "request",
        extra={
            "method": request.method,
            "route": context.get("resourcePath"),
            "status": status,
            "code": code,
            "user_id": principal.user_id if principal else None,
            "key_id": principal.key_id if principal else None,
            "workspace_id": principal.workspace_id if principal else None,
        },
    )
