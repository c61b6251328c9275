"""Serving a token request: read once, find its grant, let it validate and issue.

The three token endpoints (`POST /v1/oauth/token`, `/v1/auth/exchange`, `/v1/auth/refresh`)
are this one function with their own models (what a request of a grant_type no grant there
serves is refused by) and, for JSON, the grant a request without `grant_type` names.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from chalice import Response
from chalice.app import Request
from pydantic import BaseModel

from chalicelib import errors, logs
from chalicelib.api import edge
from chalicelib.api.grants.registry import TokenRequest, find
from chalicelib.api.operations import (
    FORM,
    Operations,
    oauth_errors,
    oauth_validated,
    query_names,
    token_parameters,
)

TOKEN_HEADERS = {"Cache-Control": "no-store", "Pragma": "no-cache"}


def serve(
    request: Request,
    endpoint: str,
    body: Mapping[str, type[BaseModel]],
    default_grant_type: str | None = None,
) -> Response:
    """The endpoint's answer to `request`: a token response, or an RFC 6749 error raised."""
    with oauth_errors():
        json_model = body.get(edge.JSON)
        is_form, parameters = token_parameters(
            request, query_names(json_model) if json_model is not None else None
        )
        media = FORM if is_form else edge.JSON
        if "client_secret" in parameters and json_model is None:
            raise errors.INVALID_CLIENT.oauth_error()
        grant_type = parameters.get("grant_type", None if is_form else default_grant_type)
        grant = find(grant_type, parameters, endpoint)
        if grant is None:
            oauth_validated(body[media], parameters)  # its refusal, in the endpoint's order
            raise errors.UNSUPPORTED_GRANT_TYPE.oauth_error()
        parsed = oauth_validated(grant.models[media], parameters)
        asked = TokenRequest(endpoint, parameters, parsed, is_form, edge.origin(request))
        served = grant()
        issued = served.issue(asked, served.validate(asked))
    if issued.user_id is not None:
        logs.identify_actor(issued.user_id)
    return edge.json_response(dict(issued.body), headers=TOKEN_HEADERS, secret=True)


def token_endpoint(
    blueprint: Operations,
    path: str,
    body: Mapping[str, type[BaseModel]],
    default_grant_type: str,
    **declared: Any,
) -> None:
    """Declares `POST path` (JSON and form), served by `serve`: one view for every token
    endpoint of this kind (`/v1/auth/exchange`, `/v1/auth/refresh`)."""

    def view() -> Response:
        return serve(blueprint.current_request, path, body, default_grant_type)

    view.__name__ = str(declared["name"])
    blueprint.public("POST", path, content_types=list(body), body=body, **declared)(view)
