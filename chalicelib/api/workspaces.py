"""`/v1/workspaces`: workspaces and their members (decisions.md)."""

from __future__ import annotations

from chalice import Blueprint, Response

from chalicelib import errors
from chalicelib.api import edge
from chalicelib.runtime import services

blueprint = Blueprint(__name__)
COLLECTION = "/v1/workspaces"


@blueprint.route(COLLECTION, methods=["POST"])
def create_workspace() -> Response:
    request = blueprint.current_request
    edge.query(request, set())
    principal = edge.authenticate(request)
    body = edge.read_json(request, {"name"})
    name = edge.clean_text(body.get("name"), errors.INVALID_NAME, "name")
    workspace = services().workspace_service.create(principal, name)
    return edge.json_response(
        workspace.resource(), status=201, headers={"Location": f"{COLLECTION}/{workspace.id}"}
    )


@blueprint.route(COLLECTION, methods=["GET"])
def list_workspaces() -> Response:
    request = blueprint.current_request
    edge.query(request, set())
    principal = edge.authenticate(request)
    found = services().workspace_service.list_mine(principal)
    return edge.json_response(
        {"workspaces": [dict(w.resource(), role=w.role) for w in found]}
    )


@blueprint.route(COLLECTION + "/{workspace_id}/members", methods=["GET"])
def list_members(workspace_id: str) -> Response:
    request = blueprint.current_request
    edge.query(request, set())
    principal = edge.authenticate(request)
    members = services().workspace_service.members(principal, workspace_id)
    return edge.json_response({"members": [m.resource() for m in members]})


@blueprint.route(COLLECTION + "/{workspace_id}/members/{user_id}", methods=["PUT"])
def add_member(workspace_id: str, user_id: str) -> Response:
    request = blueprint.current_request
    edge.query(request, set())
    principal = edge.authenticate(request)
    edge.read_json(request, set(), required=False)
    member, added = services().workspace_service.add_member(principal, workspace_id, user_id)
    return edge.json_response(member.resource(), status=201 if added else 200)


@blueprint.route(COLLECTION + "/{workspace_id}/members/{user_id}", methods=["DELETE"])
def remove_member(workspace_id: str, user_id: str) -> Response:
    request = blueprint.current_request
    edge.query(request, set())
    principal = edge.authenticate(request)
    services().workspace_service.remove_member(principal, workspace_id, user_id)
    return edge.empty_response(204)
