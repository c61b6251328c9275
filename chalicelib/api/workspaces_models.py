"""The wire shapes of /v1/workspaces and their members (`api/workspaces.py`)."""

from __future__ import annotations

from typing import Annotated, Self

from pydantic import Field, WithJsonSchema

from chalicelib import errors
from chalicelib.api.wire import (
    NULLABLE_EMAIL,
    NULLABLE_PERSON_NAME,
    Invalid,
    Name,
    Request,
    Resource,
    Time,
    UserId,
    WorkspaceId,
)
from chalicelib.workspaces import model as workspaces

Role = Annotated[str, WithJsonSchema({"type": "string", "enum": ["owner", "member"]})]


class WorkspaceBody(Resource):
    id: WorkspaceId
    name: Annotated[str, Field(examples=["Research"])]
    owner_id: UserId
    created_at: Time

    @classmethod
    def of(cls, workspace: workspaces.Workspace) -> Self:
        return cls.model_validate(workspace, from_attributes=True)


class WorkspaceWithRole(WorkspaceBody):
    """A workspace in the caller's list: with the caller's role in it."""

    role: Role


class WorkspaceList(Resource):
    workspaces: list[WorkspaceWithRole]


class NewWorkspace(Request):
    name: Annotated[Name, Invalid(errors.INVALID_NAME)]


class MemberBody(Resource):
    workspace_id: WorkspaceId
    user_id: UserId
    role: Role
    added_at: Time
    email: Annotated[
        str | None,
        WithJsonSchema(
            {**NULLABLE_EMAIL, "description": "The member's verified email (null when unknown)."}
        ),
    ] = None
    name: Annotated[
        str | None,
        WithJsonSchema(
            {**NULLABLE_PERSON_NAME, "description": "The member's name (null when unknown)."}
        ),
    ] = None

    @classmethod
    def of(cls, member: workspaces.Member) -> MemberBody:
        return cls.model_validate(member, from_attributes=True)


class MemberList(Resource):
    members: list[MemberBody]
