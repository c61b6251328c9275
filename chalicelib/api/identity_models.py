"""The wire shapes of /v1/auth/whoami and /.well-known/jwks.json (`api/identity.py`)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, WithJsonSchema

from chalicelib.access.principal import Principal
from chalicelib.access.scopes import ordered
from chalicelib.api.wire import (
    NULLABLE_EMAIL,
    NULLABLE_PERSON_NAME,
    Fields,
    Resource,
    Scopes,
    UserId,
    id_schema,
)
from chalicelib.workspaces import model as workspaces


class PrincipalBody(Resource):
    user_id: UserId
    credential: Annotated[
        str,
        WithJsonSchema(
            {
                "type": "string",
                "enum": ["user_token", "api_key", "delegated", "workload", "service_client"],
            }
        ),
    ]
    key_id: Annotated[str | None, WithJsonSchema(id_schema("key", nullable=True))]
    category: Annotated[
        str | None,
        WithJsonSchema({"type": ["string", "null"], "enum": ["workspace", "admin", None]}),
    ]
    workspace_id: Annotated[str | None, WithJsonSchema(id_schema("ws", nullable=True))]
    scopes: Scopes
    email: Annotated[
        str | None,
        WithJsonSchema(
            {
                **NULLABLE_EMAIL,
                "description": "For a user token: the verified email of the user's last "
                "sign-in (null when unknown, and for an API key).",
            }
        ),
    ] = None
    name: Annotated[
        str | None,
        WithJsonSchema(
            {
                **NULLABLE_PERSON_NAME,
                "description": "For a user token: the name the user's last sign-in gave "
                "(null when unknown, and for an API key).",
            }
        ),
    ] = None
    # A delegated token's chain of holders (RFC 8693 §4.1): null for every other credential.
    act: Annotated[
        dict[str, Any] | None,
        WithJsonSchema(
            {
                "type": ["object", "null"],
                "description": "A delegated token's holders, newest first (RFC 8693 act).",
                "examples": [{"sub": "browser"}],
            }
        ),
    ] = None

    @classmethod
    def of(cls, caller: Principal, person: workspaces.Person | None = None) -> PrincipalBody:
        fields = Fields(
            caller,
            scopes=ordered(caller.scopes),
            email=person.email if person else None,
            name=person.name if person else None,
        )
        return cls.model_validate(fields, from_attributes=True)



class Jwk(BaseModel):
    kty: Literal["RSA"]
    kid: str
    alg: Literal["RS256"]
    use: Literal["sig"]
    n: str
    e: str


class JwkSet(BaseModel):
    keys: list[Jwk]
