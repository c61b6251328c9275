"""`/v1/auth/whoami` and `/.well-known/jwks.json`."""

from __future__ import annotations

from chalice import Response

from chalicelib.api import edge, models
from chalicelib.api.operations import ANY_CALLER, Call, Operations
from chalicelib.runtime import services

blueprint = Operations(__name__)


@blueprint.operation(
    "GET",
    "/v1/auth/whoami",
    summary="Who the credential resolves to",
    tag="Identity",
    policy=ANY_CALLER,
    response=models.Principal,
    status=200,
    answer="The resolved caller.",
)
def whoami(call: Call) -> models.Principal:
    return models.Principal.of(call.principal)


@blueprint.route("/.well-known/jwks.json", methods=["GET"])
def jwks() -> Response:
    return edge.json_response(
        services().signing_keys.jwks(), headers={"Cache-Control": "public, max-age=300"}
    )
