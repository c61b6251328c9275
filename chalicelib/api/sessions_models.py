"""The wire shapes of /v1/auth/exchange, /refresh and /revoke (`api/sessions.py`): the
requests (JSON, or an OAuth form) and the tokens they answer."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, RootModel, WithJsonSchema, model_validator

from chalicelib import errors
from chalicelib.api.wire import (
    ANY_TEXT,
    TEXT,
    Invalid,
    OAuthRequest,
    RefusedValue,
    absent_or,
    text_field,
)
from chalicelib.sessions import delegation


class TokenPairBody(BaseModel):
    """A user token and its refresh token, as `/v1/auth/exchange` and `/refresh` answer."""

    access_token: Annotated[str, Field(examples=["<user token (JWT)>"])]
    token_type: Annotated[str, WithJsonSchema({"const": "Bearer"})]
    expires_in: Annotated[int, Field(examples=[3600])]
    refresh_token: Annotated[str, Field(examples=["<refresh token>"])]
    # Only in the answer to an RFC 8693 form (§2.2.1: required there); absent otherwise.
    issued_token_type: Annotated[
        str | None,
        WithJsonSchema(
            {
                "const": "urn:ietf:params:oauth:token-type:access_token",
                "description": "Only in the answer to an RFC 8693 form.",
            }
        ),
    ] = None


class WorkspaceToken(BaseModel):
    """A delegated or workload token (RFC 8693 §2.2.1): bound to one workspace, no refresh."""

    access_token: Annotated[str, Field(examples=["<delegated token (JWT)>"])]
    issued_token_type: Annotated[
        str, WithJsonSchema({"const": "urn:ietf:params:oauth:token-type:access_token"})
    ]
    token_type: Annotated[str, WithJsonSchema({"const": "Bearer"})]
    expires_in: Annotated[int, Field(examples=[900])]
    scope: Annotated[str, Field(examples=["memory entities"])]


class ExchangeAnswer(RootModel[TokenPairBody | WorkspaceToken]):
    """A login's token pair, or a delegated or workload token (no refresh token)."""



TOKEN_EXCHANGE_GRANT = "urn:ietf:params:oauth:grant-type:token-exchange"  # RFC 8693 §2.1
ID_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:id_token"  # a login
ACCESS_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:access_token"  # a delegation
JWT_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:jwt"  # a workload's identity token
SUBJECT_TOKEN_TYPES = (ID_TOKEN_TYPE, ACCESS_TOKEN_TYPE, JWT_TOKEN_TYPE)


# A delegation's own fields (RFC 8693 form and JSON alike).
ExpiresIn = Annotated[
    int | None,
    Field(ge=delegation.MIN_LIFETIME, le=delegation.MAX_LIFETIME),
    absent_or(
        {
            "type": "integer",
            "minimum": delegation.MIN_LIFETIME,
            "maximum": delegation.MAX_LIFETIME,
            "default": delegation.DEFAULT_LIFETIME,
        }
    ),
    Invalid(
        errors.OAUTH_INVALID_REQUEST,
        f"expires_in must be from {delegation.MIN_LIFETIME} to {delegation.MAX_LIFETIME} "
        "seconds.",
    ),
]
Actor = Annotated[
    str | None,
    text_field(errors.OAUTH_INVALID_REQUEST, "actor"),
    absent_or({**TEXT, "examples": ["browser"]}),
]


class ExchangeRequest(OAuthRequest):
    """`{"id_token"}` (a login), or the RFC 8693 fields as JSON (a delegation, a workload's
    exchange)."""

    model_config = ConfigDict(extra="forbid")

    # Optional in JSON; sent, it must be the form's (checked first, as the form's is).
    grant_type: Annotated[
        Literal["urn:ietf:params:oauth:grant-type:token-exchange"] | None,
        absent_or({"const": TOKEN_EXCHANGE_GRANT}),
        Invalid(errors.UNSUPPORTED_GRANT_TYPE, f"Use grant_type={TOKEN_EXCHANGE_GRANT}."),
    ] = None
    id_token: Annotated[str | None, absent_or({"type": "string", "minLength": 1})] = None
    subject_token: ANY_TEXT = None
    subject_token_type: Annotated[
        Literal[
            "urn:ietf:params:oauth:token-type:id_token",
            "urn:ietf:params:oauth:token-type:access_token",
            "urn:ietf:params:oauth:token-type:jwt",
        ]
        | None,
        absent_or({"enum": list(SUBJECT_TOKEN_TYPES)}),
        Invalid(
            errors.OAUTH_INVALID_REQUEST,
            "subject_token_type must be one of " + ", ".join(SUBJECT_TOKEN_TYPES) + ".",
        ),
    ] = None
    workspace_id: ANY_TEXT = None
    scope: ANY_TEXT = None
    expires_in: ExpiresIn = None
    actor: Actor = None

    @model_validator(mode="after")
    def _one_subject(self) -> ExchangeRequest:
        if self.id_token is None and self.subject_token is None:
            raise RefusedValue(errors.OAUTH_INVALID_REQUEST, "id_token is required.")
        if self.id_token is not None and self.subject_token is not None:
            raise RefusedValue(
                errors.OAUTH_INVALID_REQUEST, "Send id_token or subject_token, not both."
            )
        if self.subject_token is not None and self.subject_token_type is None:
            raise RefusedValue(errors.OAUTH_INVALID_REQUEST, "subject_token_type is required.")
        return self


# RFC 8693: the fields in the order the endpoint checks them (the first refused answers).
class TokenExchangeForm(OAuthRequest):
    grant_type: Annotated[
        Literal["urn:ietf:params:oauth:grant-type:token-exchange"],
        Invalid(errors.UNSUPPORTED_GRANT_TYPE, f"Use grant_type={TOKEN_EXCHANGE_GRANT}."),
    ]
    subject_token: Annotated[str, Field(min_length=1)]
    subject_token_type: Annotated[
        Literal[
            "urn:ietf:params:oauth:token-type:id_token",
            "urn:ietf:params:oauth:token-type:access_token",
            "urn:ietf:params:oauth:token-type:jwt",
        ],
        Invalid(
            errors.OAUTH_INVALID_REQUEST,
            "subject_token_type must be one of " + ", ".join(SUBJECT_TOKEN_TYPES) + ".",
        ),
    ]
    workspace_id: ANY_TEXT = None
    scope: ANY_TEXT = None
    requested_token_type: Annotated[
        Literal["urn:ietf:params:oauth:token-type:access_token"] | None,
        absent_or({"const": ACCESS_TOKEN_TYPE}),
        Invalid(errors.OAUTH_INVALID_REQUEST, f"requested_token_type must be {ACCESS_TOKEN_TYPE}."),
    ] = None
    audience: ANY_TEXT = None
    resource: ANY_TEXT = None
    expires_in: ExpiresIn = None
    actor: Actor = None


REFRESH_GRANT = "refresh_token"
_WRONG_GRANT = Invalid(errors.UNSUPPORTED_GRANT_TYPE, "Use grant_type=refresh_token.")


class RefreshRequest(OAuthRequest):
    model_config = ConfigDict(extra="forbid")

    refresh_token: Annotated[str, Field(min_length=1, examples=["<refresh token>"])]
    grant_type: Annotated[
        Literal["refresh_token"] | None, absent_or({"const": "refresh_token"}), _WRONG_GRANT
    ] = None

    @model_validator(mode="before")
    @classmethod
    def _grant_type_first(cls, data: Any) -> Any:
        """The endpoint answers a wrong grant_type before a missing refresh_token."""
        if isinstance(data, dict) and data.get("grant_type", REFRESH_GRANT) != REFRESH_GRANT:
            raise RefusedValue(_WRONG_GRANT.problem, _WRONG_GRANT.detail)
        return data


class RevokeRequest(OAuthRequest):
    """Sign-out: the login refresh token to revoke (RFC 7009's `token`, as JSON)."""

    model_config = ConfigDict(extra="forbid")

    token: Annotated[str, Field(min_length=1, examples=["<refresh token>"])]


class RefreshForm(OAuthRequest):
    grant_type: Annotated[Literal["refresh_token"], _WRONG_GRANT]
    refresh_token: Annotated[str, Field(min_length=1)]
