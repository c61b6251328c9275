"""The wire shapes of /v1/oauth/grants (`api/connected_apps.py`)."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, WithJsonSchema

from chalicelib.access.scopes import ordered
from chalicelib.api.wire import NULLABLE_TIME, RFC3339, Fields, Resource, Scopes, Time, WorkspaceId
from chalicelib.oauth import connected_apps


class ConnectedAppBody(Resource):
    id: Annotated[str, Field(examples=["01JD7Q2X9V3K5M8N1P4R6T0W2Y"])]
    client_id: str
    client_name: Annotated[str | None, WithJsonSchema({"type": ["string", "null"]})]
    workspace_id: WorkspaceId
    scopes: Scopes
    created_at: Time
    last_used_at: Annotated[
        str | None,
        RFC3339,
        WithJsonSchema(
            {**NULLABLE_TIME, "description": "Its last refresh (null: never refreshed)."}
        ),
    ]

    @classmethod
    def of(cls, app: connected_apps.ConnectedApp) -> ConnectedAppBody:
        return cls.model_validate(Fields(app, scopes=ordered(app.scopes)), from_attributes=True)


class ConnectedAppList(Resource):
    grants: list[ConnectedAppBody]
