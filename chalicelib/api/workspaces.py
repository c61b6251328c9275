"""`/v1/workspaces`: workspaces and their members.

Each operation is declared once (`api/operations.py`): the edge authenticates (401),
authorizes (403), finds the workspace (403 for one the caller may not see or change), and only
then validates the request (400).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote

from chalicelib import errors, idempotency
from chalicelib.access.principal import Principal
from chalicelib.api import workspaces_models as models
from chalicelib.api.operations import MANAGER, Call, Operations, Reply
from chalicelib.api.wire import Nothing
from chalicelib.runtime import services
from chalicelib.workspaces.model import Member, Workspace

blueprint = Operations(__name__)
COLLECTION = "/v1/workspaces"
MEMBER = COLLECTION + "/{workspace_id}/members/{user_id}"
# Managing workspaces needs a user token, or an admin key with workspace:admin.
WORKSPACE_OPERATION: dict[str, Any] = {"tag": "Workspaces", "policy": MANAGER}


def members(principal: Principal, workspace_id: str) -> list[Member]:
    """The members of a workspace the caller belongs to (403 `not_a_member` otherwise), with
    their emails and names."""
    return services().workspace_service.members(principal, workspace_id)


def member_named(call: Call) -> str:
    """The member path's user id or email, percent-decoded: clients encode the `@` of an email
    (`%40`), and not every server in front of the app decodes path parameters."""
    return unquote(call.path["user_id"])


def owned(principal: Principal, workspace_id: str, user_id: str) -> Workspace:
    """A workspace the caller owns (403 `not_a_member` or `owner_required` otherwise)."""
    return services().workspace_service.owned(principal, workspace_id)


@blueprint.operation(
    "POST",
    COLLECTION,
    summary="Create a workspace (the caller owns it)",
    body=models.NewWorkspace,
    response=models.WorkspaceBody,
    status=201,
    idempotent=True,
    problems=(errors.INVALID_NAME,),
    answer="The workspace; the same one again for a retry with the same Idempotency-Key.",
    **WORKSPACE_OPERATION,
)
def create_workspace(call: Call) -> Reply:
    body: models.NewWorkspace = call.body
    workspace_service = services().workspace_service
    workspace, replayed = workspace_service.create(call.principal, body.name, call.idempotent)
    headers = {"Location": f"{COLLECTION}/{workspace.id}"}
    if replayed:
        headers[idempotency.REPLAYED_HEADER] = "true"
    return Reply(models.WorkspaceBody.of(workspace), None, headers)


@blueprint.operation(
    "GET",
    COLLECTION,
    summary="The caller's workspaces",
    response=models.WorkspaceList,
    status=200,
    answer="Every workspace the caller belongs to.",
    **WORKSPACE_OPERATION,
)
def list_workspaces(call: Call) -> models.WorkspaceList:
    found = services().workspace_service.list_mine(call.principal)
    return models.WorkspaceList(workspaces=[models.WorkspaceWithRole.of(w) for w in found])


@blueprint.operation(
    "GET",
    COLLECTION + "/{workspace_id}/members",
    summary="A workspace's members (members only)",
    find=members,
    response=models.MemberList,
    status=200,
    answer="The members.",
    **WORKSPACE_OPERATION,
)
def list_members(call: Call) -> models.MemberList:
    return models.MemberList(members=[models.MemberBody.of(m) for m in call.found])


@blueprint.operation(
    "PUT",
    MEMBER,
    summary="Add a member by user id or verified email (owner only)",
    find=owned,
    body=Nothing,
    body_required=False,
    response=models.MemberBody,
    status=201,
    problems=(errors.OWNER_REQUIRED, errors.INVALID_USER_ID, errors.USER_NOT_FOUND),
    answer="Added (with the member's email and name when known).",
    also={200: "Already a member."},
    **WORKSPACE_OPERATION,
)
def add_member(call: Call) -> Reply:
    workspace_service = services().workspace_service
    member, added = workspace_service.add_member(call.principal, call.found, member_named(call))
    return Reply(models.MemberBody.of(member), 201 if added else 200)


@blueprint.operation(
    "DELETE",
    MEMBER,
    summary="Remove a member by user id or verified email (owner only)",
    find=owned,
    response=None,
    status=204,
    problems=(errors.OWNER_REQUIRED, errors.NOT_FOUND, errors.OWNER_CANNOT_LEAVE),
    **WORKSPACE_OPERATION,
)
def remove_member(call: Call) -> None:
    services().workspace_service.remove_member(call.principal, call.found, member_named(call))
