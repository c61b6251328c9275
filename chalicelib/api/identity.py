"""`/v1/auth/whoami` and `/.well-known/jwks.json`."""

from __future__ import annotations

from chalice import Response

from chalicelib.api import edge
from chalicelib.runtime import services

blueprint = edge.Routes(__name__)


@blueprint.route("/v1/auth/whoami", methods=["GET"], content_types=edge.ANY_MEDIA_TYPE)
def whoami() -> Response:
    request = blueprint.current_request
    principal = edge.authenticate(request)
    edge.query(request, set())
    return edge.json_response(principal.resource())


@blueprint.route("/.well-known/jwks.json", methods=["GET"])
def jwks() -> Response:
    return edge.json_response(
        services().signing_keys.jwks(), headers={"Cache-Control": "public, max-age=300"}
    )
