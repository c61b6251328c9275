"""`/v1/workspaces`: workspaces and their members.

Each route authenticates (401), authorizes (403) and only then validates the request (400).
"""

from __future__ import annotations

from chalice import Response

from chalicelib import errors, idempotency
from chalicelib.access.policy import require_manager
from chalicelib.api import edge
from chalicelib.runtime import services

blueprint = edge.Routes(__name__)
COLLECTION = "/v1/workspaces"


@blueprint.route(COLLECTION, methods=["POST"], content_types=edge.ANY_MEDIA_TYPE)
def create_workspace() -> Response:
    request = blueprint.current_request
    principal = edge.authenticate(request)
    require_manager(principal)
    edge.query(request, set())
    body = edge.read_json(request, {"name"})
    name = edge.clean_text(body.get("name"), errors.INVALID_NAME, "name")
    idempotent = edge.idempotent_request(request, principal, "create-workspace", None, body)
    workspace, replayed = services().workspace_service.create(principal, name, idempotent)
    headers = {"Location": f"{COLLECTION}/{workspace.id}"}
    if replayed:
        headers[idempotency.REPLAYED_HEADER] = "true"
    return edge.json_response(workspace.resource(), status=201, headers=headers)


@blueprint.route(COLLECTION, methods=["GET"], content_types=edge.ANY_MEDIA_TYPE)
def list_workspaces() -> Response:
    request = blueprint.current_request
    principal = edge.authenticate(request)
    require_manager(principal)
    edge.query(request, set())
    found = services().workspace_service.list_mine(principal)
    return edge.json_response(
        {"workspaces": [dict(w.resource(), role=w.role) for w in found]}
    )


@blueprint.route(
    COLLECTION + "/{workspace_id}/members", methods=["GET"], content_types=edge.ANY_MEDIA_TYPE
)
def list_members(workspace_id: str) -> Response:
    request = blueprint.current_request
    principal = edge.authenticate(request)
    members = services().workspace_service.members(principal, workspace_id)
    edge.query(request, set())
    return edge.json_response({"members": [m.resource() for m in members]})


@blueprint.route(
    COLLECTION + "/{workspace_id}/members/{user_id}",
    methods=["PUT"],
    content_types=edge.ANY_MEDIA_TYPE,
)
def add_member(workspace_id: str, user_id: str) -> Response:
    request = blueprint.current_request
    principal = edge.authenticate(request)
    workspace_service = services().workspace_service
    workspace = workspace_service.owned(principal, workspace_id)
    edge.query(request, set())
    edge.read_json(request, set(), required=False)
    member, added = workspace_service.add_member(principal, workspace, user_id)
    return edge.json_response(member.resource(), status=201 if added else 200)


@blueprint.route(
    COLLECTION + "/{workspace_id}/members/{user_id}",
    methods=["DELETE"],
    content_types=edge.ANY_MEDIA_TYPE,
)
def remove_member(workspace_id: str, user_id: str) -> Response:
    request = blueprint.current_request
    principal = edge.authenticate(request)
    workspace_service = services().workspace_service
    workspace = workspace_service.owned(principal, workspace_id)
    edge.query(request, set())
    workspace_service.remove_member(principal, workspace, user_id)
    return edge.empty_response(204)
