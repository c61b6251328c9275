"""`/v1/oauth/grants`: connected apps, the MCP clients a person has let in, and disconnecting
one (chalicelib/oauth/connected_apps.py)."""

from __future__ import annotations

from chalicelib import errors
from chalicelib.access.principal import Principal
from chalicelib.api import connected_apps_models as models
from chalicelib.api.operations import Call, Operations, Policy
from chalicelib.runtime import services

blueprint = Operations(__name__)

COLLECTION = "/v1/oauth/grants"
TAG = "Connected apps"


def require_user_token(principal: Principal) -> None:
    """A person's own grants are theirs to see: never through a key or a delegated token."""
    if principal.credential != "user_token":
        raise errors.INSUFFICIENT_SCOPE.error("Connected apps need a user token.")


PERSON = Policy("person", check=require_user_token, problems=(errors.INSUFFICIENT_SCOPE,))


@blueprint.operation(
    "GET",
    COLLECTION,
    summary="The MCP clients the caller has connected",
    tag=TAG,
    policy=PERSON,
    response=models.ConnectedAppList,
    status=200,
    answer="The caller's grants still in force, and their remembered consents (kind "
    "`consent`) for clients without one, newest first.",
    description="A consent remembered on the consent page is listed from that moment, before "
    "any token was issued under it (`kind` `consent`, `lastUsedAt` null), so that it can be "
    "revoked; while a grant of the same client is in force, that grant's row stands for it.",
)
def list_grants(call: Call) -> models.ConnectedAppList:
    found = services().connected_apps.list(call.principal.user_id)
    return models.ConnectedAppList(grants=[models.ConnectedAppBody.of(app) for app in found])


@blueprint.operation(
    "DELETE",
    COLLECTION + "/{grant_id}",
    summary="Disconnect an MCP client",
    tag=TAG,
    policy=PERSON,
    response=None,
    status=204,
    problems=(errors.NOT_FOUND,),
    description="Its refresh token and every access token it holds are refused from the next "
    "request, and its client's remembered consent is forgotten (the next authorization asks "
    "again). A remembered consent's id (`cns_…`): the consent is forgotten, and every grant of "
    "that client the caller has in force is revoked with it. Another person's grant or consent, "
    "or one already disconnected, is 404.",
)
def revoke_grant(call: Call) -> None:
    services().connected_apps.revoke(call.principal, call.path["grant_id"])
