"""The wire shapes of /v1/auth/sessions (`api/sign_ins.py`)."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, WithJsonSchema

from chalicelib.api.wire import NULLABLE_TIME, RFC3339, SESSION_ID, TIME, Fields, Resource, Time
from chalicelib.sessions import sign_ins


class Session(Resource):
    id: Annotated[str, WithJsonSchema(SESSION_ID)]
    created_at: Time
    last_refreshed_at: Annotated[
        str | None,
        RFC3339,
        WithJsonSchema(
            {**NULLABLE_TIME, "description": "Its last refresh (null: never refreshed)."}
        ),
    ]
    expires_at: Annotated[
        str,
        RFC3339,
        WithJsonSchema(
            {**TIME, "description": "When it ends unless refreshed (each refresh moves it)."}
        ),
    ]
    user_agent: Annotated[
        str | None,
        WithJsonSchema(
            {
                "type": ["string", "null"],
                "maxLength": sign_ins.MAX_USER_AGENT,
                "description": "The User-Agent it signed in with, cut at "
                f"{sign_ins.MAX_USER_AGENT} characters.",
            }
        ),
    ]
    ip_address: Annotated[
        str | None,
        WithJsonSchema(
            {"type": ["string", "null"], "description": "The address it signed in from."}
        ),
    ]
    current: Annotated[bool, Field(description="The sign-in of the token making this request.")]

    @classmethod
    def of(cls, sign_in: sign_ins.SignIn, current_id: str | None) -> Session:
        fields = Fields(sign_in, current=sign_in.id == current_id)
        return cls.model_validate(fields, from_attributes=True)


class SessionList(Resource):
    sessions: list[Session]
