"""Cross-origin calls from browsers (CORS): pages on the stage's ALLOWED_ORIGINS may call us.

An origin is allowed only when it is one of the configured origins exactly; any other gets
no CORS header at all, so its browser withholds the answer. Credentials mode is never
allowed: the API uses no cookies, a page sends `Authorization` itself. Every answer to a
cross-origin request carries the headers, errors included (the middleware wraps the one
that renders problems), and `Vary: Origin` so that no cache hands one origin's answer to
another. Preflights (`OPTIONS`) are answered here for every route, without credentials, as
browsers send them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from chalice import Chalice
from chalice.app import Request, Response

from chalicelib.config import ConfigurationError
from chalicelib.runtime import services

# What a page may send: the credential (and its DPoP proof), the workspace, a JSON body, and
# the Idempotency-Key that makes a create or a rotation safe to retry.
ALLOWED_HEADERS = ("Authorization", "Content-Type", "DPoP", "Idempotency-Key", "X-Workspace-Id")
# What a page may read beyond the CORS-safelisted response headers.
EXPOSED_HEADERS = (
    "DPoP-Nonce", "Idempotent-Replayed", "Location", "Retry-After", "WWW-Authenticate"
)
# Seconds a browser may reuse a preflight; Chromium caps it at 7200 anyway.
PREFLIGHT_MAX_AGE = 600


def allowed_origins() -> tuple[str, ...]:
    try:
        return services().settings.allowed_origins
    except ConfigurationError:  # the route itself answers the configuration error
        return ()


def cors_headers(origin: str | None, preflight_methods: str | None = None) -> dict[str, str]:
    """The CORS headers of an answer to `origin` (none for a foreign origin or no origin)."""
    origins = allowed_origins()
    if not origins:
        return {}
    headers = {"Vary": "Origin"}
    if origin is None or origin not in origins:
        return headers
    headers["Access-Control-Allow-Origin"] = origin
    if preflight_methods is None:
        headers["Access-Control-Expose-Headers"] = ", ".join(EXPOSED_HEADERS)
    else:
        headers["Access-Control-Allow-Methods"] = preflight_methods
        headers["Access-Control-Allow-Headers"] = ", ".join(ALLOWED_HEADERS)
        headers["Access-Control-Max-Age"] = str(PREFLIGHT_MAX_AGE)
    return headers


def _is_preflight(request: Request) -> bool:
    return request.method == "OPTIONS" and "access-control-request-method" in request.headers


def cross_origin(request: Request, get_response: Callable[[Request], Response]) -> Response:
    """Chalice HTTP middleware, registered outside the one that renders errors."""
    response = get_response(request)
    allow = response.headers.get("Allow")
    preflight_methods = str(allow) if allow and _is_preflight(request) else None
    for name, value in cors_headers(request.headers.get("origin"), preflight_methods).items():
        if name == "Vary" and response.headers.get("Vary"):
            value = f"{response.headers['Vary']}, {value}"
        response.headers[name] = value
    return response


def _preflight(methods: str) -> Callable[..., Response]:
    def preflight(**path_parameters: Any) -> Response:
        return Response(body="", status_code=204, headers={"Allow": methods})

    return preflight


def register_preflights(app: Chalice) -> None:
    """An OPTIONS route beside every route of `app` (call it after the last blueprint).

    API Gateway sends OPTIONS to the function only where the API defines the method, and
    Chalice's own CORS support answers preflights with one fixed origin; ours are answered
    by the app, which knows the stage's list.
    """
    for path, entries in list(app.routes.items()):
        if "OPTIONS" in entries:
            continue
        methods = ", ".join(sorted({*entries, "OPTIONS"}))
        view = _preflight(methods)
        view.__name__ = "preflight_" + "".join(c if c.isalnum() else "_" for c in path)
        app.route(path, methods=["OPTIONS"])(view)
