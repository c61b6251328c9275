"""The wire shapes of /v1/workspaces/{id}/service-clients (`api/service_clients.py`)."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import WithJsonSchema

from chalicelib import errors
from chalicelib.access.scopes import DATA_PLANE_SCOPES
from chalicelib.api.wire import (
    SERVICE_CLIENT_ID,
    Fields,
    Invalid,
    Name,
    Request,
    Resource,
    Scopes,
    Time,
    UserId,
    WorkspaceId,
    not_null,
)
from chalicelib.service_clients import model as service_clients

_PUBLIC_JWK = {
    "type": "object",
    "required": ["kty"],
    "properties": {
        "kty": {"enum": ["RSA", "EC"]},
        "alg": {"enum": list(service_clients.ALGORITHMS)},
        "kid": {"type": "string", "minLength": 1, "maxLength": 255},
        "use": {"const": "sig"},
        "crv": {"const": "P-256"},
    },
    "not": {"anyOf": [{"required": [m]} for m in sorted(service_clients.PRIVATE_MEMBERS)]},
    "description": "A public RS256 (RSA, at least 2048 bits) or ES256 (EC P-256) key.",
}


class NewServiceClient(Request):
    """What registers a service client (docs/guides/service-clients.md): its public keys
    (`jwks`) or where it publishes them (`jwksUri`), exactly one of the two."""

    name: Annotated[Name, Invalid(errors.INVALID_NAME)]
    scopes: Annotated[
        list[str],
        Invalid(errors.INVALID_SCOPE, "scopes must be a list of strings."),
        WithJsonSchema(
            {
                "type": "array",
                "minItems": 1,
                "uniqueItems": True,
                "items": {"type": "string", "enum": list(DATA_PLANE_SCOPES)},
                "description": "A subset of the workspace-key scopes.",
            }
        ),
    ]
    jwks: Annotated[
        dict[str, Any] | None,
        Invalid(errors.INVALID_SERVICE_CLIENT, "jwks must be a JWK Set (an object)."),
        not_null(errors.INVALID_SERVICE_CLIENT, "jwks must be a JWK Set (an object)."),
        WithJsonSchema(
            {
                "type": "object",
                "required": ["keys"],
                "properties": {
                    "keys": {
                        "type": "array",
                        "minItems": 1,
                        "maxItems": service_clients.MAX_KEYS,
                        "items": _PUBLIC_JWK,
                    }
                },
                "description": f"1 to {service_clients.MAX_KEYS} public keys (RFC 7517).",
            }
        ),
    ] = None
    jwks_uri: Annotated[
        str | None,
        Invalid(errors.INVALID_SERVICE_CLIENT, "jwksUri must be a string."),
        not_null(errors.INVALID_SERVICE_CLIENT, "jwksUri must be a string."),
        WithJsonSchema(
            {
                "type": "string",
                "maxLength": service_clients.MAX_URI,
                "pattern": "^https://",
                "examples": ["https://machines.example.com/jwks.json"],
                "description": "Where the client publishes its keys: https, a host name (never "
                "an IP address); fetched at most once per 30 seconds.",
            }
        ),
    ] = None


class ServiceClientBody(Resource):
    client_id: Annotated[str, WithJsonSchema(SERVICE_CLIENT_ID)]
    workspace_id: WorkspaceId
    name: str
    scopes: Scopes
    jwks: dict[str, Any] | None
    jwks_uri: str | None
    token_endpoint: str
    created_at: Time
    created_by: UserId

    @classmethod
    def of(cls, client: service_clients.ServiceClient, issuer: str) -> ServiceClientBody:
        fields = Fields(
            client,
            client_id=client.id,
            jwks=None if client.jwks is None else {"keys": list(client.jwks)},
            token_endpoint=issuer + "/v1/oauth/token",
        )
        return cls.model_validate(fields, from_attributes=True)


class ServiceClientList(Resource):
    service_clients: list[ServiceClientBody]
