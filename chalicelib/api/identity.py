"""`/v1/auth/whoami` and `/.well-known/jwks.json`."""

from __future__ import annotations

from chalice import Response

from chalicelib import errors
from chalicelib.api import edge
from chalicelib.api import identity_models as models
from chalicelib.api.operations import ANY_CALLER, Answer, Call, Operations
from chalicelib.runtime import services

blueprint = Operations(__name__)


@blueprint.operation(
    "GET",
    "/v1/auth/whoami",
    summary="Who the credential resolves to",
    tag="Identity",
    policy=ANY_CALLER,
    response=models.PrincipalBody,
    status=200,
    answer="The resolved caller (with a user token, the person's email and name).",
)
def whoami(call: Call) -> models.PrincipalBody:
    caller = call.principal
    if caller.credential != "user_token":  # keys are for machines: no person to name
        return models.PrincipalBody.of(caller)
    return models.PrincipalBody.of(caller, services().users.person(caller.user_id))


@blueprint.public(
    "GET",
    "/.well-known/jwks.json",
    name="jwks",
    summary="The public keys that sign user tokens",
    tag="Identity",
    answers=(
        Answer(
            200,
            "The current signing key, then the previous one during a rotation.",
            models.JwkSet,
            headers={"Cache-Control": "CacheControlPublic"},
        ),
        Answer(503, "KMS failed: retry later.", problems=(errors.DEPENDENCY_UNAVAILABLE,)),
    ),
)
def jwks() -> Response:
    return edge.json_response(
        services().signing_keys.jwks(), headers={"Cache-Control": "public, max-age=300"}
    )
