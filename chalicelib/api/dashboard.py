"""`/dashboard/`: the dashboard's static files and its sign-in configuration.

Served by the API itself so that the page and the API share one origin (no CORS). Every
answer carries the page's security headers (chalicelib/dashboard/assets.py).
"""

from __future__ import annotations

import json

from chalice import Response

from chalicelib.api import edge
from chalicelib.api.operations import HTML, Answer, Operations
from chalicelib.dashboard import assets
from chalicelib.dashboard.sign_in import DashboardLogin, parse_dashboard_login
from chalicelib.errors import DASHBOARD_NOT_CONFIGURED, NOT_FOUND, ServiceError
from chalicelib.logs import logger
from chalicelib.runtime import services

blueprint = Operations(__name__)
MISSING = Answer(404, "No such file (or the dashboard is not built).", problems=(NOT_FOUND,))
PAGE = "/dashboard"


def configured_login() -> DashboardLogin | None:
    """DASHBOARD_LOGIN, checked against TRUSTED_ISSUERS; a bad value is a 503 naming it.

    Read per request, not at start: a mistake here must not take the API down with it.
    """
    settings = services().settings
    try:
        return parse_dashboard_login(
            settings.dashboard_login, settings.trusted_issuers, settings.local_mode
        )
    except ValueError as error:
        logger.error("DASHBOARD_LOGIN is not usable", extra={"reason": str(error)})
        raise DASHBOARD_NOT_CONFIGURED.error(
            f"The dashboard cannot sign anyone in: {error}."
        ) from None


def _headers(login: DashboardLogin | None, extra: dict[str, str]) -> dict[str, str | list[str]]:
    origins = login.connect_origins() if login is not None else ()
    return {**assets.security_headers(origins), **extra}


def _file(name: str) -> Response:
    asset = assets.load(name)
    if asset is None:
        if name == assets.INDEX:
            raise NOT_FOUND.error("The dashboard is not built here: run `make dashboard`.")
        raise NOT_FOUND.error("No such file in the dashboard.")
    try:
        login = configured_login()
    except ServiceError:
        login = None  # the page still loads, and shows config.json's explanation
    extra = {"Content-Type": asset.content_type, "Cache-Control": asset.cache_control}
    return Response(body=asset.body, status_code=200, headers=_headers(login, extra))


@blueprint.public(
    "GET",
    PAGE,
    name="dashboard",
    summary="The dashboard (people sign in there)",
    tag="Dashboard",
    answers=(
        Answer(200, "The dashboard's page.", HTML),
        Answer(301, "To the dashboard's page (Location).", headers={"Location": "Location"}),
        MISSING,
    ),
)
def dashboard_page() -> Response:
    request = blueprint.current_request
    path = (request.context or {}).get("path") or ""
    if path and not path.endswith("/"):
        # The page's files are named relative to it, so it must be addressed as a folder.
        # Relative, so that an API Gateway stage prefix (/v1api/...) is kept.
        return Response(
            body="",
            status_code=301,
            headers={"Location": "dashboard/", "Cache-Control": "no-cache"},
        )
    return _file(assets.INDEX)


@blueprint.public(
    "GET",
    PAGE + "/{name}",
    name="dashboardFile",
    summary="A file of the dashboard, or its sign-in settings (config.json)",
    tag="Dashboard",
    answers=(
        Answer(200, "The file."),
        MISSING,
        Answer(
            503,
            "DASHBOARD_LOGIN does not name a trusted issuer.",
            problems=(DASHBOARD_NOT_CONFIGURED,),
        ),
    ),
)
def dashboard_file(name: str) -> Response:
    if name != assets.CONFIG:
        return _file(name)
    login = configured_login()
    body = {"login": login.resource() if login is not None else None}
    return Response(
        body=json.dumps(body, separators=(",", ":")),
        status_code=200,
        headers=_headers(login, {"Content-Type": edge.JSON, "Cache-Control": "no-cache"}),
    )


@blueprint.public(
    "HEAD",
    PAGE,
    name="dashboardHead",
    summary="The dashboard page's headers (a link checker's or a monitor's request)",
    tag="Dashboard",
    answers=(
        Answer(200, "The page's headers, without its body.", HTML),
        Answer(301, "To the dashboard's page (Location).", headers={"Location": "Location"}),
        MISSING,
    ),
)
def dashboard_head() -> Response:
    """HEAD answers as GET does, without the body (RFC 9110 §9.3.2)."""
    answer = dashboard_page()
    return Response(body="", status_code=answer.status_code, headers=answer.headers)
