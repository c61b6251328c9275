"""The wire shapes of /v1/auth/events (`api/events.py`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any

from pydantic import Field, WithJsonSchema

from chalicelib.api.wire import (
    KEY_ID,
    NULLABLE_EMAIL,
    NULLABLE_PERSON_NAME,
    USER_ID,
    Cursor,
    Limit,
    NextCursor,
    Query,
    Resource,
    Time,
    WorkspaceQuery,
    id_schema,
)
from chalicelib.events import model as events
from chalicelib.events.model import TYPES as EVENT_TYPES
from chalicelib.workspaces import model as workspaces


class EventBody(Resource):
    id: Annotated[str, WithJsonSchema(id_schema("evt"))]
    type: Annotated[str, WithJsonSchema({"type": "string", "enum": list(EVENT_TYPES)})]
    occurred_at: Time
    actor: Annotated[
        dict[str, Any],
        WithJsonSchema(
            {
                "type": "object",
                "description": "The caller (`userId`, `credential`, `keyId`, and the "
                "person's `email` and `name` when known: absent otherwise), or "
                '`{"system": "expiry"}` / `{"system": "github-secret-scanning"}` / '
                '`{"system": "refresh-token-reuse"}`.',
                "properties": {
                    "userId": USER_ID,
                    "credential": {"type": "string", "enum": ["user_token", "api_key"]},
                    "keyId": id_schema("key", nullable=True),
                    "email": NULLABLE_EMAIL,
                    "name": NULLABLE_PERSON_NAME,
                    "system": {"type": "string"},
                },
            }
        ),
    ]
    key_id: Annotated[str | None, WithJsonSchema(id_schema("key", nullable=True))]
    workspace_id: Annotated[str | None, WithJsonSchema(id_schema("ws", nullable=True))]
    source_ip: Annotated[str | None, WithJsonSchema({"type": ["string", "null"]})]
    user_agent: Annotated[str | None, WithJsonSchema({"type": ["string", "null"]})]
    data: Annotated[
        dict[str, Any],
        WithJsonSchema({"type": "object", "description": "What the event type records."}),
    ]

    @classmethod
    def of(
        cls, event: events.Event, people: Mapping[str, workspaces.Person] | None = None
    ) -> EventBody:
        """The event as the API and the event bus carry it (`events.Event.detail`), its
        actor named by the person's email and name when known (`people`, by user id)."""
        detail = event.detail()
        person = (people or {}).get(str(detail["actor"].get("userId")))
        if person is not None:
            known = {"email": person.email, "name": person.name}
            detail["actor"] |= {k: v for k, v in known.items() if v is not None}
        return cls.model_validate(detail)


class EventPageBody(Resource):
    events: list[EventBody]
    next_cursor: NextCursor



class EventQuery(Query):
    limit: Limit = 50
    cursor: Cursor = None
    # Which types and key ids are valid the event log says (invalid_parameter).
    type: Annotated[
        str | None,
        WithJsonSchema(
            {
                "type": "string",
                "enum": list(EVENT_TYPES),
                "description": "Only events of this type.",
            }
        ),
    ] = None
    key_id: Annotated[
        str | None, WithJsonSchema({**KEY_ID, "description": "Only this key's events."})
    ] = Field(None, alias="keyId")
    workspace_id: WorkspaceQuery = None
