"""The wire's common ground: the base classes of every request and response body, the
service's rules as field types (`Label`, `Name`, `Limit`, the identifiers' shapes), a
field's refusal (`Invalid`, `RefusedValue`), the bodies every area shares (the error bodies,
the token endpoints' request base), and how a model is named in the OpenAPI document
(`schema_name`, `WireSchema`).

A request model is strict and refuses unknown fields; each field names the catalogue problem
that refuses it (`Invalid`), and a rule of the service is a type used everywhere it applies.
A response model is the resource itself: what a route answers is `model_dump(by_alias=True)`
of one. Each area's models live beside its routes (`api/keys_models.py` beside
`api/keys.py`); the OpenAPI document's schemas are their JSON Schemas (`api/openapi.py`).

The API handler only: pydantic stays off the data-plane authorizer's cold start.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, RootModel, WithJsonSchema
from pydantic.alias_generators import to_camel
from pydantic.json_schema import CoreModeRef, CoreRef, DefsRef, GenerateJsonSchema, JsonSchemaValue

from chalicelib import errors, strict_parsing
from chalicelib.access.scopes import ALL_SCOPES
from chalicelib.clock import rfc3339
from chalicelib.oauth import consents


@dataclass(frozen=True)
class Invalid:
    """A field's marker: the catalogue problem (and detail) that answers a bad value."""

    problem: errors.Problem
    detail: str | None = None


class RefusedValue(ValueError):
    """A value a validator refuses, with the exact problem and detail to answer (a 400 of the
    catalogue, never pydantic's message: `operations.validated`)."""

    def __init__(self, problem: errors.Problem, detail: str | None = None):
        super().__init__(detail or problem.detail)
        self.problem = problem
        self.detail = detail


class Request(BaseModel):
    """A request body: strict (no coercion), unknown fields refused, wire names only."""

    model_config = ConfigDict(strict=True, extra="forbid", frozen=True, alias_generator=to_camel)


class Query(BaseModel):
    """Query parameters: strings as sent, unknown names refused."""

    model_config = ConfigDict(strict=True, extra="forbid", frozen=True)


class Resource(BaseModel):
    """A response body: built by the service's field names, answered by its wire names."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        validate_by_name=True,
        json_schema_serialization_defaults_required=True,
    )


class Fields:
    """A domain object read as a resource's fields (`model_validate(..., from_attributes=True)`):
    each field its attribute of the same name, but those given here, which the wire computes
    or names otherwise."""

    def __init__(self, record: object, /, **differing: Any):
        self._record = record
        self._differing = differing

    def __getattr__(self, name: str) -> Any:
        if name in self._differing:
            return self._differing[name]
        return getattr(self._record, name)


def schema_name(model: type[BaseModel]) -> str:
    """A wire class's name in the OpenAPI document: its class name, less the `Body` a wire
    class ends in when a domain class has its name (`ApiKeyBody` beside `keys.model.ApiKey`
    is the document's `ApiKey`)."""
    return model.__name__.removesuffix("Body")


class WireSchema(GenerateJsonSchema):
    """Pydantic's JSON Schema, each model's definition and title its `schema_name`, without a
    `title` on every property."""

    def field_title_should_be_set(self, schema: Any) -> bool:
        return False

    def get_defs_ref(self, core_mode_ref: CoreModeRef) -> DefsRef:
        core_ref, mode = core_mode_ref  # a model's is `module.Class:id`
        return super().get_defs_ref((CoreRef(re.sub(r"Body(?=:\d+$)", "", core_ref)), mode))

    def model_schema(self, schema: Any) -> JsonSchemaValue:  # pydantic_core's ModelSchema
        json_schema = super().model_schema(schema)
        if json_schema.get("title") == schema["cls"].__name__:
            json_schema["title"] = schema_name(schema["cls"])
        return json_schema


ULID = "[0-9A-HJKMNP-TV-Z]{26}"


def id_schema(prefix: str, nullable: bool = False) -> dict[str, Any]:
    schema: dict[str, Any] = {
        "type": ["string", "null"] if nullable else "string",
        "pattern": f"^{prefix}_{ULID}$",
        "examples": [f"{prefix}_01JQ0000000000000000000000"],
    }
    return schema


KEY_ID = id_schema("key")
WORKSPACE_ID = id_schema("ws")
TRUST_POLICY_ID = id_schema("tp")
SERVICE_CLIENT_ID = id_schema("scl")
GRANT_ID = {"type": "string", "pattern": "^[0-9A-HJKMNP-TV-Z]{26}$"}  # a ULID: an MCP grant
SESSION_ID = {**GRANT_ID, "examples": ["01JD7Q2X9V3K5M8N1P4R6T0W2Y"]}  # a ULID: a sign-in
# A connected app: an MCP grant (a ULID), or a remembered consent (`cns_` + 64 hex digits).
CONNECTED_APP_ID = {
    "type": "string",
    "pattern": f"^(?:[0-9A-HJKMNP-TV-Z]{{26}}|{consents.CONSENT_ID.pattern})$",
    "examples": ["01JD7Q2X9V3K5M8N1P4R6T0W2Y"],
}
USER_ID = {"type": "string", "pattern": "^usr_[0-9A-Za-z]{1,40}$", "examples": ["usr_01JQ0000"]}
USER_ID_OR_EMAIL = {
    "anyOf": [USER_ID, {"type": "string", "format": "email", "maxLength": 320}],
    "description": "A user id (`usr_…`), or the verified email of someone who signed in.",
}
TIME = {"type": "string", "format": "date-time", "examples": ["2026-11-21T12:00:00Z"]}
NULLABLE_EMAIL = {"type": ["string", "null"], "examples": ["ada@example.com"]}
NULLABLE_PERSON_NAME = {"type": ["string", "null"], "examples": ["Ada Lovelace"]}
NULLABLE_TIME = {"type": ["string", "null"], "format": "date-time"}

KeyId = Annotated[str, WithJsonSchema(KEY_ID)]
WorkspaceId = Annotated[str, WithJsonSchema(WORKSPACE_ID)]
UserId = Annotated[str, WithJsonSchema(USER_ID)]


def _as_rfc3339(value: Any) -> Any:
    return rfc3339(value) if isinstance(value, datetime) else value


# A time in a response: a domain object's datetime, written as RFC 3339 (`clock.rfc3339`).
RFC3339 = BeforeValidator(_as_rfc3339)
Time = Annotated[str, RFC3339, WithJsonSchema(TIME)]
OptionalTime = Annotated[str | None, RFC3339, WithJsonSchema(NULLABLE_TIME)]
SCOPES = {"type": "array", "items": {"type": "string", "enum": list(ALL_SCOPES)}}
Scopes = Annotated[list[str], WithJsonSchema(SCOPES)]


def _unprintable_ranges() -> str:
    """The characters `strict_parsing.clean_text` refuses, as a regex class body, from this
    interpreter's Unicode tables so the two never disagree: control characters and
    bidirectional controls of the BMP. Not lone surrogates: no UTF-8 body can carry one, and
    regex engines that generate test data refuse a class that names them."""
    ranges: list[tuple[int, int]] = []
    for point in range(0x10000):
        if 0xD800 <= point <= 0xDFFF:
            continue
        if not strict_parsing.is_label_character(chr(point)):
            if ranges and ranges[-1][1] == point - 1:
                ranges[-1] = (ranges[-1][0], point)
            else:
                ranges.append((point, point))
    return "".join(f"\\u{a:04x}" + (f"-\\u{b:04x}" if b != a else "") for a, b in ranges)


UNPRINTABLE = _unprintable_ranges()
# 1 to 100 characters once trimmed (so the trimmed text starts and ends with a visible
# character), none of them a control character or a bidirectional control.
VISIBLE = rf"[^\s{UNPRINTABLE}]"
TEXT = {
    "type": "string",
    "pattern": rf"^\s*(?:{VISIBLE}[^{UNPRINTABLE}]{{0,98}}{VISIBLE}|{VISIBLE})\s*$",
    "description": "1 to 100 characters after trimming; no control characters.",
}


def text_field(problem: errors.Problem, name: str) -> BeforeValidator:
    def clean(value: Any) -> str:
        try:
            return strict_parsing.clean_text(value)
        except strict_parsing.InvalidText as invalid:
            raise RefusedValue(problem, f"{name} {invalid}.") from None

    return BeforeValidator(clean)


def not_null(problem: errors.Problem, message: str) -> BeforeValidator:
    """A field that may be left out (it is then None), but sent, even as null, must hold a
    value: the schema says its type, not null."""

    def present(value: Any) -> Any:
        if value is None:
            raise RefusedValue(problem, message)
        return value

    return BeforeValidator(present)


# A key's label and a workspace's name: one rule (`strict_parsing.clean_text`), stored trimmed.
_LABEL = (
    text_field(errors.INVALID_LABEL, "label"),
    WithJsonSchema({**TEXT, "examples": ["ci deploys"]}),
)
Label = Annotated[str, *_LABEL]
# A label that may be left out; sent, even as null, it must be a label.
LabelChange = Annotated[str | None, *_LABEL]
Name = Annotated[
    str, text_field(errors.INVALID_NAME, "name"), WithJsonSchema({**TEXT, "examples": ["Research"]})
]



SMALLEST_PAGE, LARGEST_PAGE = 1, 100


def _limit(value: Any) -> int:
    """A query's digits as the number (the bounds are the type's `Field`'s)."""
    if isinstance(value, str) and value.isascii() and value.isdigit() and len(value) <= 3:
        return int(value)
    raise RefusedValue(
        errors.INVALID_PARAMETER,
        f"limit must be a whole number from {SMALLEST_PAGE} to {LARGEST_PAGE}.",
    )


# A page's size in a query: 1 to 100 (50 where not given: each query's default).
Limit = Annotated[
    int,
    Field(ge=SMALLEST_PAGE, le=LARGEST_PAGE),
    BeforeValidator(_limit),
    Invalid(
        errors.INVALID_PARAMETER,
        f"limit must be a whole number from {SMALLEST_PAGE} to {LARGEST_PAGE}.",
    ),
]
Cursor = Annotated[
    str | None,
    WithJsonSchema(
        {"type": "string", "minLength": 1, "description": "`nextCursor` of the previous page."}
    ),
]
# An empty workspace id, which names none (`?workspace_id=`, `"workspaceId": ""`).
NO_WORKSPACE = {"type": "string", "maxLength": 0}
# The workspace named in a query (`?workspace_id=`): read with the credential (`authenticate`).
WorkspaceQuery = Annotated[str | None, WithJsonSchema({"anyOf": [WORKSPACE_ID, NO_WORKSPACE]})]



NextCursor = Annotated[str | None, WithJsonSchema({"type": ["string", "null"]})]



class Nothing(Request):
    """A body that may be absent or an empty object."""



WEBHOOK_ID = id_schema("whk")
DELIVERY_ID = id_schema("dlv")



_STATUSES = sorted({e.status for e in errors.PROBLEMS.values()})


class ProblemBody(BaseModel):
    """RFC 9457 problem details with a stable `code`, one of the error catalogue's."""

    type: Annotated[
        str,
        Field(
            description="The code's entry in the error reference (docs/errors).",
            examples=["/docs/errors#not_found"],
            json_schema_extra={"format": "uri-reference"},
        ),
    ]
    title: Annotated[str, Field(examples=["Not Found"])]
    status: Annotated[int, Field(ge=_STATUSES[0], le=_STATUSES[-1])]
    detail: Annotated[str, Field(description="For people; never a secret.")]
    code: Annotated[
        str,
        Field(
            description="Stable: safe to branch on.",
            json_schema_extra={"enum": sorted(errors.PROBLEMS)},
        ),
    ]
    error: Annotated[
        str,
        Field(
            description="The same value as `code`, for clients that read an `error` member "
            "(as RFC 6749 errors have).",
            json_schema_extra={"enum": sorted(errors.PROBLEMS)},
        ),
    ]


class OAuthErrorBody(BaseModel):
    """RFC 6749 §5.2 error."""

    error: Annotated[
        str, Field(json_schema_extra={"enum": sorted({e.code for e in errors.OAUTH_ERRORS})})
    ]
    error_description: str



def absent_or(schema: dict[str, Any]) -> WithJsonSchema:
    """An optional field's schema: absent, or a value of this schema (never null)."""
    return WithJsonSchema(schema)


ANY_TEXT = Annotated[str | None, absent_or({"type": "string"})]


class OAuthRequest(BaseModel):
    """A token endpoint's request (JSON, or an OAuth form)."""

    model_config = ConfigDict(extra="allow")



class OpenApiDocument(RootModel[dict[str, Any]]):
    """An OpenAPI 3.1 document."""
