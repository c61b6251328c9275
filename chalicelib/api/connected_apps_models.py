"""The wire shapes of /v1/oauth/grants (`api/connected_apps.py`)."""

from __future__ import annotations

from typing import Annotated

from pydantic import (
    WithJsonSchema,
)

from chalicelib.access.scopes import ordered
from chalicelib.api.wire import NULLABLE_TIME, Resource, Scopes, Time, WorkspaceId
from chalicelib.clock import rfc3339
from chalicelib.oauth import connected_apps


class ConnectedAppBody(Resource):
    id: Annotated[
        str, WithJsonSchema({"type": "string", "examples": ["01JD7Q2X9V3K5M8N1P4R6T0W2Y"]})
    ]
    client_id: Annotated[str, WithJsonSchema({"type": "string"})]
    client_name: Annotated[str | None, WithJsonSchema({"type": ["string", "null"]})]
    workspace_id: WorkspaceId
    scopes: Scopes
    created_at: Time
    last_used_at: Annotated[
        str | None,
        WithJsonSchema(
            {**NULLABLE_TIME, "description": "Its last refresh (null: never refreshed)."}
        ),
    ]

    @classmethod
    def of(cls, app: connected_apps.ConnectedApp) -> ConnectedAppBody:
        return cls(
            id=app.id,
            client_id=app.client_id,
            client_name=app.client_name,
            workspace_id=app.workspace_id,
            scopes=ordered(app.scopes),
            created_at=rfc3339(app.created_at) or "",
            last_used_at=rfc3339(app.last_used_at),
        )


class ConnectedAppList(Resource):
    grants: list[ConnectedAppBody]
