"""The wire shapes of /v1/oauth/grants (`api/connected_apps.py`)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import WithJsonSchema

from chalicelib.access.scopes import ordered
from chalicelib.api.wire import (
    CONNECTED_APP_ID,
    NULLABLE_TIME,
    RFC3339,
    Fields,
    Resource,
    Scopes,
    Time,
    WorkspaceId,
)
from chalicelib.oauth import connected_apps


class ConnectedAppBody(Resource):
    id: Annotated[str, WithJsonSchema(CONNECTED_APP_ID)]
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
    kind: Annotated[
        Literal["grant", "consent"],
        WithJsonSchema(
            {
                "type": "string",
                "enum": ["grant", "consent"],
                "description": "grant: the app holds tokens in force; consent: a remembered "
                "consent under which none of the app's tokens is in force (none issued yet, or "
                "all ended since), so lastUsedAt is null. Disconnecting either forgets the "
                "consent: the next authorization asks again.",
            }
        ),
    ] = "grant"

    @classmethod
    def of(cls, app: connected_apps.ConnectedApp) -> ConnectedAppBody:
        kind = "consent" if app.kind == "consent" else "grant"
        fields = Fields(app, scopes=ordered(app.scopes), kind=kind)
        return cls.model_validate(fields, from_attributes=True)


class ConnectedAppList(Resource):
    grants: list[ConnectedAppBody]
