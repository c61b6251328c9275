"""The wire shapes of /v1/auth/credentials/revoke (`api/credentials.py`)."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BeforeValidator, Field, WithJsonSchema

from chalicelib import errors
from chalicelib.api.wire import Invalid, RefusedValue, Request, Resource
from chalicelib.scanning import revocation


def _credentials(value: Any) -> list[str]:
    if (
        not isinstance(value, list)
        or not 1 <= len(value) <= revocation.MAX_CREDENTIALS
        or not all(
            isinstance(c, str) and 1 <= len(c) <= revocation.MAX_CREDENTIAL_LENGTH for c in value
        )
    ):
        raise RefusedValue(
            errors.INVALID_CREDENTIAL_LIST,
            f"credentials must be a list of 1 to {revocation.MAX_CREDENTIALS:,} strings of "
            f"1 to {revocation.MAX_CREDENTIAL_LENGTH} characters.",
        )
    return value


class CredentialReport(Request):
    """Credentials found where they should not be."""

    credentials: Annotated[
        list[str],
        Invalid(errors.INVALID_CREDENTIAL_LIST),
        BeforeValidator(_credentials),
        WithJsonSchema(
            {"type": "array", "minItems": 1, "maxItems": revocation.MAX_CREDENTIALS,
             "items": {"type": "string", "minLength": 1,
                       "maxLength": revocation.MAX_CREDENTIAL_LENGTH},
             "description": "The leaked strings (API keys `svc_…`); anything else is "
             "received and ignored."}
        ),
    ]


class CredentialsReceived(Resource):
    received: Annotated[
        int,
        Field(
            ge=1, le=revocation.MAX_CREDENTIALS, description="How many strings the report held."
        ),
    ]
