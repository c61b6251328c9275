"""`/v1/workspaces/{id}/service-clients`: machines that get this workspace's tokens with
`client_credentials` and a `private_key_jwt` assertion (docs/guides/service-clients.md).

Owner only, by user token or admin key with workspace:admin: a member gets 403
`owner_required`, anyone else 404 (`decisions/workspace_access.py`).
"""

from __future__ import annotations

from typing import Any

from chalicelib import errors
from chalicelib.api import service_clients_models as models
from chalicelib.api.operations import MANAGER, Call, Operations, Reply
from chalicelib.decisions.workspace_access import owner_only
from chalicelib.runtime import services

blueprint = Operations(__name__)
COLLECTION = "/v1/workspaces/{workspace_id}/service-clients"
ITEM = COLLECTION + "/{client_id}"
OPERATION: dict[str, Any] = {
    "tag": "Workspaces",
    "policy": MANAGER,
    "workspace": owner_only("Only the workspace owner manages service clients."),
}


def _shown(client: Any) -> models.ServiceClientBody:
    return models.ServiceClientBody.of(client, services().settings.issuer)


@blueprint.operation(
    "POST",
    COLLECTION,
    summary="Register a service client with its public keys (owner only)",
    body=models.NewServiceClient,
    response=models.ServiceClientBody,
    status=201,
    problems=(
        errors.INVALID_NAME,
        errors.INVALID_SERVICE_CLIENT,
        errors.INVALID_SCOPE,
        errors.LIMIT_REACHED,
    ),
    answer="The client: its `clientId` is the `iss` and `sub` of its assertions.",
    **OPERATION,
)
def create_service_client(call: Call) -> Reply:
    client = services().service_client_service.create(call.principal, call.workspace, call.body)
    location = f"/v1/workspaces/{client.workspace_id}/service-clients/{client.id}"
    return Reply(_shown(client), None, {"Location": location})


@blueprint.operation(
    "GET",
    COLLECTION,
    summary="A workspace's service clients, in creation order (owner only)",
    response=models.ServiceClientList,
    status=200,
    answer="The clients.",
    **OPERATION,
)
def list_service_clients(call: Call) -> models.ServiceClientList:
    found = services().service_client_service.list(call.workspace)
    return models.ServiceClientList(service_clients=[_shown(c) for c in found])


@blueprint.operation(
    "GET",
    ITEM,
    summary="A service client (owner only)",
    response=models.ServiceClientBody,
    status=200,
    problems=(errors.NOT_FOUND,),
    answer="The client.",
    **OPERATION,
)
def get_service_client(call: Call) -> models.ServiceClientBody:
    return _shown(services().service_client_service.get(call.workspace, call.path["client_id"]))


@blueprint.operation(
    "DELETE",
    ITEM,
    summary="Delete a service client: its tokens stop working on their next request",
    response=None,
    status=204,
    problems=(errors.NOT_FOUND,),
    **OPERATION,
)
def delete_service_client(call: Call) -> None:
    services().service_client_service.delete(call.principal, call.workspace, call.path["client_id"])
