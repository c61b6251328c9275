"""`/v1/workspaces`: workspaces and their members.

Each operation is declared once (`api/operations.py`): the edge authenticates (401),
authorizes (403), decides on the workspace the path names (`decisions/workspace_access.py`:
404 for a non-member, 403 `owner_required` for a member where only the owner may act), and
only then validates the request (400).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote

from chalicelib import errors, idempotency
from chalicelib.api import workspaces_models as models
from chalicelib.api.operations import MANAGER, Call, Operations, Reply
from chalicelib.api.wire import Nothing
from chalicelib.decisions.workspace_access import MEMBERS, owner_only
from chalicelib.runtime import services

blueprint = Operations(__name__)
COLLECTION = "/v1/workspaces"
MEMBER = COLLECTION + "/{workspace_id}/members/{user_id}"
# Managing workspaces needs a user token, or an admin key with workspace:admin.
WORKSPACE_OPERATION: dict[str, Any] = {"tag": "Workspaces", "policy": MANAGER}


def member_named(call: Call) -> str:
    """The member path's user id or email, percent-decoded: clients encode the `@` of an email
    (`%40`), and not every server in front of the app decodes path parameters."""
    return unquote(call.path["user_id"])


OWNER_ONLY = owner_only(errors.OWNER_REQUIRED.detail)


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
    workspace=MEMBERS,
    response=models.MemberList,
    status=200,
    answer="The members.",
    **WORKSPACE_OPERATION,
)
def list_members(call: Call) -> models.MemberList:
    found = services().workspace_service.members(call.workspace)
    return models.MemberList(members=[models.MemberBody.of(m) for m in found])


@blueprint.operation(
    "PUT",
    MEMBER,
    summary="Add a member by user id or verified email (owner only)",
    workspace=OWNER_ONLY,
    body=Nothing,
    body_required=False,
    response=models.MemberBody,
    status=201,
    problems=(errors.INVALID_USER_ID, errors.USER_NOT_FOUND),
    answer="Added (with the member's email and name when known).",
    also={200: "Already a member."},
    **WORKSPACE_OPERATION,
)
def add_member(call: Call) -> Reply:
    workspace_service = services().workspace_service
    member, added = workspace_service.add_member(call.principal, call.workspace, member_named(call))
    return Reply(models.MemberBody.of(member), 201 if added else 200)


@blueprint.operation(
    "DELETE",
    MEMBER,
    summary="Remove a member by user id or verified email (owner only)",
    workspace=OWNER_ONLY,
    response=None,
    status=204,
    problems=(errors.NOT_FOUND, errors.OWNER_CANNOT_LEAVE),
    **WORKSPACE_OPERATION,
)
def remove_member(call: Call) -> None:
    services().workspace_service.remove_member(call.principal, call.workspace, member_named(call))
