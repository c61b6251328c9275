"""The wire shapes: every request and response body of the API as a pydantic model.

A request model is strict and refuses unknown fields; each field names the catalogue problem
that refuses it (`Invalid`), and a rule of the service is a type used everywhere it applies
(`Label`, `Lifetime`, `Cidrs`). A response model is the resource itself: what a route answers
is `model_dump(by_alias=True)` of one. The OpenAPI document's schemas are these models'
JSON Schemas (`api/openapi.py`), under the class names.

The API handler only: pydantic stays off the data-plane authorizer's cold start.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    RootModel,
    Strict,
    ValidationInfo,
    WithJsonSchema,
    model_validator,
)
from pydantic.alias_generators import to_camel

from chalicelib import errors, strict_parsing
from chalicelib.access.allow_list import MAX_CIDRS, InvalidCidr, parse_cidrs
from chalicelib.access.principal import Principal as Caller
from chalicelib.access.scopes import ALL_SCOPES, DATA_PLANE_SCOPES, ordered
from chalicelib.clock import rfc3339
from chalicelib.config import canonical_resource
from chalicelib.events import model as events
from chalicelib.events.model import TYPES as EVENT_TYPES
from chalicelib.keys import model as keys
from chalicelib.keys.model import MAX_GRACE_PERIOD, MAX_LIFETIME_DAYS, MAX_REQUESTS_PER_DAY
from chalicelib.oauth import clients, connected_apps, consents
from chalicelib.oauth.service import (
    MAX_STATE_LENGTH,
    OFFLINE_ACCESS,
    PKCE_CHALLENGE,
    AuthorizationRequest,
    parse_scope,
)
from chalicelib.scanning import github, revocation
from chalicelib.scanning.github import MAX_TOKENS as MAX_REPORTED_TOKENS
from chalicelib.service_clients import model as service_clients
from chalicelib.sessions import sign_ins
from chalicelib.webhooks import model as hooks
from chalicelib.workloads import model as trust
from chalicelib.workspaces import model as workspaces


@dataclass(frozen=True)
class Invalid:
    """A field's marker: the catalogue problem (and detail) that answers a bad value."""

    problem: errors.Problem
    detail: str | None = None


class Refused(ValueError):
    """Raised by a validator with the exact problem and detail to answer."""

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


# -- the service's rules, as types ---------------------------------------------------------

ULID = "[0-9A-HJKMNP-TV-Z]{26}"


def _id(prefix: str, nullable: bool = False) -> dict[str, Any]:
    schema: dict[str, Any] = {
        "type": ["string", "null"] if nullable else "string",
        "pattern": f"^{prefix}_{ULID}$",
        "examples": [f"{prefix}_01JQ0000000000000000000000"],
    }
    return schema


KEY_ID = _id("key")
WORKSPACE_ID = _id("ws")
TRUST_POLICY_ID = _id("tp")
SERVICE_CLIENT_ID = _id("scl")
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
Time = Annotated[str, WithJsonSchema(TIME)]
OptionalTime = Annotated[str | None, WithJsonSchema(NULLABLE_TIME)]
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


_UNPRINTABLE = _unprintable_ranges()
# 1 to 100 characters once trimmed (so the trimmed text starts and ends with a visible
# character), none of them a control character or a bidirectional control.
_VISIBLE = rf"[^\s{_UNPRINTABLE}]"
TEXT = {
    "type": "string",
    "pattern": rf"^\s*(?:{_VISIBLE}[^{_UNPRINTABLE}]{{0,98}}{_VISIBLE}|{_VISIBLE})\s*$",
    "description": "1 to 100 characters after trimming; no control characters.",
}


def _text(problem: errors.Problem, name: str) -> BeforeValidator:
    def clean(value: Any) -> str:
        try:
            return strict_parsing.clean_text(value)
        except strict_parsing.InvalidText as invalid:
            raise Refused(problem, f"{name} {invalid}.") from None

    return BeforeValidator(clean)


def _not_null(problem: errors.Problem, message: str) -> BeforeValidator:
    """A field that may be left out (it is then None), but sent, even as null, must hold a
    value: the schema says its type, not null."""

    def present(value: Any) -> Any:
        if value is None:
            raise Refused(problem, message)
        return value

    return BeforeValidator(present)


# A key's label and a workspace's name: one rule (`strict_parsing.clean_text`), stored trimmed.
_LABEL = (
    _text(errors.INVALID_LABEL, "label"),
    WithJsonSchema({**TEXT, "examples": ["ci deploys"]}),
)
Label = Annotated[str, *_LABEL]
# A label that may be left out; sent, even as null, it must be a label.
LabelChange = Annotated[str | None, *_LABEL]
Name = Annotated[
    str, _text(errors.INVALID_NAME, "name"), WithJsonSchema({**TEXT, "examples": ["Research"]})
]


def _cidrs(value: Any) -> tuple[str, ...] | None:
    if value is None:
        return None
    try:
        return parse_cidrs(value)
    except InvalidCidr as invalid:
        raise Refused(errors.INVALID_CIDR, str(invalid)) from None


# 1 to 20 networks in CIDR notation (a bare address is its own /32 or /128); host bits set,
# like `10.0.0.1/24`, are refused (invalid_cidr), a rule no pattern can state: the format
# `cidr` names it.
ALLOWED_CIDRS = {
    "type": ["array", "null"],
    "minItems": 1,
    "maxItems": MAX_CIDRS,
    # `cidr`: an IPv4 or IPv6 network with its host bits zero (JSON Schema has no such format).
    "items": {"type": "string", "format": "cidr", "minLength": 1, "maxLength": 64},
    "description": f"1 to {MAX_CIDRS} IPv4 or IPv6 CIDRs, host bits zero; null: any address.",
    "examples": [["203.0.113.0/24", "2001:db8::/32"]],
}
Cidrs = Annotated[tuple[str, ...] | None, BeforeValidator(_cidrs), WithJsonSchema(ALLOWED_CIDRS)]


# The RFC 7638 SHA-256 thumbprint of the public key a key is bound to (RFC 9449 DPoP).
DPOP_JKT = {
    "type": ["string", "null"],
    "pattern": "^[A-Za-z0-9_-]{43}$",
    "examples": ["0ZcOCORZNYy-DWpqq30jZyJGHTN0d2HglBV3uiguA4I"],
}
DpopJkt = Annotated[
    str | None,
    Invalid(errors.INVALID_DPOP_JKT),
    Field(pattern=r"^[A-Za-z0-9_-]{43}$"),
    WithJsonSchema(
        {
            **DPOP_JKT,
            "description": "Binds the key to a key pair: the RFC 7638 SHA-256 thumbprint of its "
            "public key. Such a key works only as 'Authorization: DPoP <key>' with a DPoP proof "
            "(RFC 9449) signed by that pair; null or omitted: a bearer key.",
        }
    ),
]


def _limit(value: Any) -> int:
    digits = isinstance(value, str) and value.isascii() and value.isdigit() and len(value) <= 3
    if digits and 1 <= int(value) <= 100:
        return int(value)
    raise Refused(errors.INVALID_PARAMETER, "limit must be a whole number from 1 to 100.")


# A page's size in a query: 1 to 100, 50 when not given.
Limit = Annotated[
    int,
    BeforeValidator(_limit),
    WithJsonSchema({"type": "integer", "minimum": 1, "maximum": 100, "default": 50}),
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


# -- API keys ----------------------------------------------------------------------------

REQUESTS_PER_DAY = {"type": ["integer", "null"], "minimum": 1, "maximum": MAX_REQUESTS_PER_DAY}
RequestsPerDay = Annotated[
    int | None,
    Invalid(errors.INVALID_QUOTA),
    Field(ge=1, le=MAX_REQUESTS_PER_DAY),
    WithJsonSchema(
        {
            **REQUESTS_PER_DAY,
            "description": "A daily quota: requests per UTC day, then 429 quota_exceeded until "
            "midnight UTC; null: none.",
        }
    ),
]

KeyStatus = Literal["active", "revoked", "expired"]


class ApiKey(Resource):
    id: KeyId
    label: Annotated[str, Field(examples=["ci deploys"])]
    category: Literal["workspace", "admin"]
    workspace_id: Annotated[str | None, WithJsonSchema(_id("ws", nullable=True))]
    scopes: Scopes
    status: KeyStatus
    hint: Annotated[
        str | None,
        WithJsonSchema(
            {
                "type": ["string", "null"],
                "description": "The prefix, `...` and the last 4 characters (ASCII).",
                "examples": ["svc_...abcd"],
            }
        ),
    ]
    created_at: Time
    expires_at: Time
    revoked_at: OptionalTime
    replaced_by: Annotated[str | None, WithJsonSchema(_id("key", nullable=True))]
    revealable: Annotated[
        bool, Field(description="Whether reveal can show the plaintext (never after revocation).")
    ]
    last_used_at: Annotated[
        str | None,
        WithJsonSchema(
            {
                **NULLABLE_TIME,
                "description": "The last successful use, to 5 minutes; null until first used.",
            }
        ),
    ]
    allowed_cidrs: Annotated[
        list[str] | None,
        WithJsonSchema(
            {
                **ALLOWED_CIDRS,
                "description": "The networks it may be used from, canonical; null: any address.",
            }
        ),
    ]
    requests_per_day: Annotated[
        int | None,
        WithJsonSchema(
            {
                **REQUESTS_PER_DAY,
                "description": "Its daily quota (requests per UTC day); null: none.",
            }
        ),
    ]
    dpop_jkt: Annotated[
        str | None,
        WithJsonSchema(
            {
                **DPOP_JKT,
                "description": "The thumbprint of the key pair it is bound to (it works only "
                "with a DPoP proof by that pair); null: a bearer key.",
            }
        ),
    ]

    @classmethod
    def of(cls, api_key: keys.ApiKey, now: datetime) -> ApiKey:
        """The public representation (README, "API keys")."""
        return cls(**_key_fields(api_key, now))


def _key_fields(api_key: keys.ApiKey, now: datetime) -> dict[str, Any]:
    status = api_key.status(now)
    return {
        "id": api_key.id,
        "label": api_key.label,
        "category": api_key.category,
        "workspace_id": api_key.workspace_id,
        "scopes": list(api_key.scopes),
        "status": status,
        # Hints stored before they were ASCII carry a one-character ellipsis.
        "hint": api_key.hint.replace("\u2026", "...") if api_key.hint else api_key.hint,
        "created_at": rfc3339(api_key.created_at),
        "expires_at": rfc3339(api_key.expires_at),
        "revoked_at": rfc3339(api_key.end()) if status == "revoked" else None,
        "replaced_by": api_key.replaced_by,
        # A revoked key can never be revealed again (410), whatever its ciphertext.
        "revealable": api_key.revealable and api_key.revoked_at is None,
        "last_used_at": rfc3339(api_key.last_used_at),
        "allowed_cidrs": list(api_key.allowed_cidrs) if api_key.allowed_cidrs is not None else None,
        "requests_per_day": api_key.requests_per_day,
        "dpop_jkt": api_key.dpop_jkt,
    }


class ApiKeyWithSecret(ApiKey):
    """A key with its plaintext: only in the answer to create, rotate and reveal."""

    key: Annotated[
        str,
        Field(
            description="The plaintext key. Store it in a secrets manager; never log it.",
            examples=["<the API key, svc_ and 50 characters>"],
        ),
    ]

    @classmethod
    def issued(cls, api_key: keys.ApiKey, now: datetime, plaintext: str) -> ApiKeyWithSecret:
        return cls(**_key_fields(api_key, now), key=plaintext)


NextCursor = Annotated[str | None, WithJsonSchema({"type": ["string", "null"]})]


class KeyPage(Resource):
    keys: list[ApiKey]
    next_cursor: NextCursor


class NewApiKey(Request):
    """What creates a key (README, "API keys")."""

    model_config = ConfigDict(
        # A workspace key names its workspace (either spelling, or both alike: no schema can
        # say "equal") and takes only data-plane scopes; an admin key names none.
        json_schema_extra={
            "if": {"required": ["category"], "properties": {"category": {"const": "workspace"}}},
            "then": {
                "anyOf": [
                    {"required": [name], "properties": {name: {"type": "string", "minLength": 1}}}
                    for name in ("workspaceId", "workspace_id")
                ],
                "properties": {"scopes": {"items": {"enum": list(DATA_PLANE_SCOPES)}}},
            },
            "else": {  # an empty string, like null, names none
                "properties": {
                    name: {"type": ["null", "string"], "maxLength": 0}
                    for name in ("workspaceId", "workspace_id")
                },
            },
        }
    )

    label: Annotated[Label, Invalid(errors.INVALID_LABEL)]
    # Any other value the key service judges (invalid_category).
    category: Annotated[
        str | None,
        Invalid(errors.INVALID_CATEGORY),
        WithJsonSchema(
            {
                "type": ["string", "null"],
                "enum": ["admin", "workspace", None],
                "description": "null, like omitting it, means `admin`.",
            }
        ),
    ] = Field(None, json_schema_extra={"default": "admin"})
    workspace_id: Annotated[
        str | None,
        Invalid(errors.INVALID_WORKSPACE_ID),
        WithJsonSchema(
            {
                "anyOf": [_id("ws", nullable=True), NO_WORKSPACE],
                "description": "Workspace keys only (null or empty: none).",
            }
        ),
    ] = None
    workspace_id_snake: Annotated[
        str | None,
        Invalid(errors.INVALID_WORKSPACE_ID),
        WithJsonSchema(
            {
                "anyOf": [_id("ws", nullable=True), NO_WORKSPACE],
                "description": "Older clients' spelling of `workspaceId`; sent beside it, "
                "it must name the same workspace (else 400 `conflicting_workspace_id`).",
                "deprecated": True,
            }
        ),
    ] = Field(None, alias="workspace_id")
    scopes: Annotated[
        list[str] | None,
        Invalid(errors.INVALID_SCOPE, "scopes must be a list of strings."),
        WithJsonSchema(
            {
                "type": ["array", "null"],
                "minItems": 1,
                "items": {"type": "string", "enum": list(ALL_SCOPES)},
                "description": "A subset of the category's scopes; omitted or null: all.",
            }
        ),
    ] = None
    expires_in_days: Annotated[
        int,
        Invalid(errors.INVALID_LIFETIME),
        Field(ge=1, le=MAX_LIFETIME_DAYS),
    ] = MAX_LIFETIME_DAYS
    allowed_cidrs: Cidrs = None
    requests_per_day: RequestsPerDay = None
    dpop_jkt: DpopJkt = None

    @model_validator(mode="after")
    def _one_workspace(self) -> NewApiKey:
        both = {"workspace_id", "workspace_id_snake"} <= self.model_fields_set
        if both and self.workspace_id != self.workspace_id_snake:
            disagree = "workspaceId and workspace_id disagree."
            raise Refused(errors.CONFLICTING_WORKSPACE_ID, disagree)
        return self

    def workspace(self) -> str | None:
        """The workspace named, in either spelling."""
        if "workspace_id" in self.model_fields_set:
            return self.workspace_id
        return self.workspace_id_snake


class ApiKeyChanges(Request):
    label: Annotated[LabelChange, Invalid(errors.INVALID_LABEL)] = None
    allowed_cidrs: Cidrs = None
    requests_per_day: RequestsPerDay = None


class Rotation(Request):
    grace_period_seconds: Annotated[
        int,
        Invalid(errors.INVALID_GRACE_PERIOD),
        Field(
            ge=0,
            le=int(MAX_GRACE_PERIOD.total_seconds()),
            description="How long the old key keeps working (0: revoked at once).",
        ),
    ] = 0


def _search(value: Any) -> str | None:
    try:
        return strict_parsing.search_text(value)
    except strict_parsing.InvalidText as invalid:
        raise Refused(errors.INVALID_PARAMETER, f"The q query parameter {invalid}.") from None


# A search of key labels (`?q=`), as `strict_parsing.search_text` reads it.
KeySearch = Annotated[
    str | None,
    BeforeValidator(_search),
    WithJsonSchema(
        {
            "type": "string",
            "maxLength": strict_parsing.MAX_TEXT_LENGTH,
            "pattern": f"^[^{_UNPRINTABLE}]*$",
            "description": "Only keys whose label contains this text, compared without regard "
            "to case (Unicode case folding, NFKC), trimmed; empty: no search. At most 100 "
            "characters, no control characters.",
            "examples": ["bulk key"],
        }
    ),
]


class KeyListQuery(Query):
    limit: Limit = 50
    cursor: Cursor = None
    status: Annotated[
        KeyStatus | None,
        Invalid(errors.INVALID_PARAMETER, "status must be active, revoked or expired."),
    ] = None
    workspace_id: WorkspaceQuery = None
    q: KeySearch = None


class RevealQuery(Query):
    workspace_id: WorkspaceQuery = None


class UsageQuery(Query):
    # The range's rules (order, length, alignment) the usage report judges (invalid_parameter).
    granularity: Annotated[
        Literal["hour", "day"],
        Invalid(errors.INVALID_PARAMETER, "granularity must be hour or day."),
        WithJsonSchema({"type": "string", "enum": ["hour", "day"], "default": "day"}),
    ] = "day"
    from_: Annotated[
        str | None,
        WithJsonSchema(
            {
                **TIME,
                "description": "The first bucket's start (rounded down to its hour or day); "
                "default: 6 days before today (by day), 24 hours ago (by hour).",
            }
        ),
    ] = Field(None, alias="from")
    to: Annotated[
        str | None,
        WithJsonSchema(
            {
                **TIME,
                "description": "The end of the range (exclusive; rounded up to its hour or "
                "day); default: now. At most 31 days by hour, 400 by day.",
            }
        ),
    ] = None
    workspace_id: WorkspaceQuery = None


class UsageBucket(Resource):
    start: Time
    requests: Annotated[int, Field(ge=0)]


class KeyUsage(Resource):
    key_id: KeyId
    granularity: Literal["hour", "day"]
    buckets: list[UsageBucket]
    complete: Annotated[
        bool,
        Field(
            description="False while a bucket may still receive counts (until one usage "
            "write window after its end)."
        ),
    ]


# -- who is calling ------------------------------------------------------------------------


class Principal(Resource):
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
    key_id: Annotated[str | None, WithJsonSchema(_id("key", nullable=True))]
    category: Annotated[
        str | None,
        WithJsonSchema({"type": ["string", "null"], "enum": ["workspace", "admin", None]}),
    ]
    workspace_id: Annotated[str | None, WithJsonSchema(_id("ws", nullable=True))]
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
    def of(cls, caller: Caller, person: workspaces.Person | None = None) -> Principal:
        return cls(
            user_id=caller.user_id,
            credential=caller.credential,
            key_id=caller.key_id,
            category=caller.category,
            workspace_id=caller.workspace_id,
            scopes=ordered(caller.scopes),
            email=person.email if person else None,
            name=person.name if person else None,
            act=caller.act,
        )


# -- the token endpoints (RFC 6749 names) -------------------------------------------------


class TokenPair(BaseModel):
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


class ExchangeAnswer(RootModel[TokenPair | WorkspaceToken]):
    """A login's token pair, or a delegated or workload token (no refresh token)."""


# -- workspaces ----------------------------------------------------------------------------

Role = Annotated[str, WithJsonSchema({"type": "string", "enum": ["owner", "member"]})]


class Workspace(Resource):
    id: WorkspaceId
    name: Annotated[str, Field(examples=["Research"])]
    owner_id: UserId
    created_at: Time

    @classmethod
    def of(cls, workspace: workspaces.Workspace) -> Workspace:
        return cls.model_validate(
            {
                "id": workspace.id,
                "name": workspace.name,
                "owner_id": workspace.owner_id,
                "created_at": rfc3339(workspace.created_at),
            }
        )


class WorkspaceWithRole(Workspace):
    """A workspace in the caller's list: with the caller's role in it."""

    role: Role

    @classmethod
    def of(cls, workspace: workspaces.Workspace) -> WorkspaceWithRole:
        return cls(**Workspace.of(workspace).model_dump(), role=workspace.role)


class WorkspaceList(Resource):
    workspaces: list[WorkspaceWithRole]


class NewWorkspace(Request):
    name: Annotated[Name, Invalid(errors.INVALID_NAME)]


class Member(Resource):
    workspace_id: WorkspaceId
    user_id: UserId
    role: Role
    added_at: Time
    email: Annotated[
        str | None,
        WithJsonSchema(
            {**NULLABLE_EMAIL, "description": "The member's verified email (null when unknown)."}
        ),
    ] = None
    name: Annotated[
        str | None,
        WithJsonSchema(
            {**NULLABLE_PERSON_NAME, "description": "The member's name (null when unknown)."}
        ),
    ] = None

    @classmethod
    def of(cls, member: workspaces.Member) -> Member:
        return cls.model_validate(
            {
                "workspace_id": member.workspace_id,
                "user_id": member.user_id,
                "role": member.role,
                "added_at": rfc3339(member.added_at),
                "email": member.email,
                "name": member.name,
            }
        )


class MemberList(Resource):
    members: list[Member]


class Nothing(Request):
    """A body that may be absent or an empty object."""


# -- trust policies (workload identity federation) -----------------------------------------

# A policy's texts (`workloads.model._text`): up to MAX_TEXT characters as sent, stored
# trimmed, not empty once trimmed; a label's characters.
_POLICY_TEXT = {
    "type": "string",
    "minLength": 1,
    "maxLength": trust.MAX_TEXT,
    "pattern": rf"^\s*(?:{_VISIBLE}|{_VISIBLE}[^{_UNPRINTABLE}]*{_VISIBLE})\s*$",
}
# `hosts.is_address` as a pattern: a host of letters, digits, dots and hyphens whose last label
# (trailing dots aside) is not a number (digits, or 0x and hex digits), or only dots. Without
# lookahead, "not a number" is spelled as the ways a label can fail to be one: a character no
# number has, a letter first, a letter after a non-zero digit, or after a leading 0 a second
# x, a hex letter, or an x that does not follow the 0 directly.
_HEX, _HEX_X = "0-9a-fA-F", "0-9a-fA-FxX"
_NOT_A_NUMBER = "|".join([
    "[A-Za-z0-9-]*[G-Wg-wYZyz-][A-Za-z0-9-]*",
    f"[a-fA-FxX][{_HEX_X}]*",
    f"[1-9][0-9]*[a-fA-FxX][{_HEX_X}]*",
    f"0[xX][{_HEX}]*[xX][{_HEX_X}]*",
    f"0[0-9]*[a-fA-F][{_HEX_X}]*",
    f"0[0-9]+[xX][{_HEX_X}]*",
])
_NAMED_HOST = rf"(?:[A-Za-z0-9.-]*\.)?(?:{_NOT_A_NUMBER})\.*|\.+"
# `workloads.model.check_issuer`: https, a host name (never an address), an optional port and
# path.
_ISSUER = (
    rf"^\s*https://(?:{_NAMED_HOST})(?::[0-9]{{1,5}})?(?:/[^?#\s{_UNPRINTABLE}]*)?\s*$"
)

_RESERVED_CLAIM = rf"^\s*(?:{'|'.join(sorted(trust.RESERVED_CLAIMS))})\s*$"


def _subject_pattern() -> str:
    """`workloads.model.check_subject` as a pattern: a text without `*`, or a prefix then one
    `*`, the prefix at least MIN_PREFIX characters with a `:` or `/` among them. A pattern
    without lookahead (not every generator has it) says "at least n, one a separator" as a
    choice of where a separator stands: after k characters, k < n - 1, then n - 1 - k or more
    characters; or after n - 1 or more."""
    first = rf"[^*\s{_UNPRINTABLE}]"
    char = rf"[^*{_UNPRINTABLE}]"
    plain = rf"{first}(?:{char}*{first})?"
    n = trust.MIN_PREFIX
    prefixes = [f"[:/]{char}{{{n - 1},}}"]
    prefixes += [
        f"{first}{char}{{{k - 1}}}[:/]{char}{{{n - 1 - k},}}" for k in range(1, n - 1)
    ]
    prefixes.append(f"{first}{char}{{{n - 2},}}[:/]{char}*")
    return rf"^\s*(?:{plain}|(?:{'|'.join(prefixes)})\*)\s*$"


def _policy_field(name: str, rule: str) -> Invalid:
    return Invalid(errors.INVALID_TRUST_POLICY, f"{name} must be {rule}.")


class NewTrustPolicy(Request):
    """What creates a trust policy (docs/guides/workload-identity.md)."""

    name: Annotated[Name, Invalid(errors.INVALID_NAME)]
    issuer: Annotated[
        str,
        _policy_field("issuer", "an https URL"),
        WithJsonSchema(
            {**_POLICY_TEXT, "pattern": _ISSUER,
             "examples": ["https://token.actions.githubusercontent.com"],
             "description": "The workload's OIDC issuer (https, a host name: never an IP "
             "address, in any spelling; its discovery document and JWKS are fetched from it)."}
        ),
    ]
    audience: Annotated[
        str,
        _policy_field("audience", "a string"),
        WithJsonSchema({**_POLICY_TEXT, "examples": ["memory-service"],
                        "description": "The `aud` the workload's token must carry."}),
    ]
    subject: Annotated[
        str,
        _policy_field("subject", "a string"),
        WithJsonSchema(
            {**_POLICY_TEXT, "pattern": _subject_pattern(),
             "examples": ["repo:acme/agents:ref:refs/heads/main"],
             "description": "The `sub` to match: exact, or ending in `*` for a prefix "
             f"(at least {trust.MIN_PREFIX} characters and a `:` or `/` before it)."}
        ),
    ]
    claims: Annotated[
        dict[str, str] | None,
        _policy_field("claims", "an object of claim names to strings"),
        WithJsonSchema(
            {"type": "object", "maxProperties": trust.MAX_CLAIMS,
             "propertyNames": {**_POLICY_TEXT, "not": {"pattern": _RESERVED_CLAIM}},
             "additionalProperties": _POLICY_TEXT, "examples": [{"repository_owner": "acme"}],
             "description": f"Up to {trust.MAX_CLAIMS} exact matches on other claims."}
        ),
    ] = None
    scopes: Annotated[
        list[str],
        Invalid(errors.INVALID_SCOPE, "scopes must be a list of strings."),
        WithJsonSchema(
            {"type": "array", "minItems": 1, "uniqueItems": True,
             "items": {"type": "string", "enum": list(DATA_PLANE_SCOPES)},
             "description": "A subset of the workspace-key scopes."}
        ),
    ]
    max_lifetime_seconds: Annotated[
        int | None,
        _policy_field("maxLifetimeSeconds", f"a whole number from {trust.MIN_LIFETIME} to "
                      f"{trust.MAX_LIFETIME}"),
        WithJsonSchema({"type": "integer", "minimum": trust.MIN_LIFETIME,
                        "maximum": trust.MAX_LIFETIME, "default": trust.DEFAULT_LIFETIME}),
    ] = None


class TrustPolicy(Resource):
    id: Annotated[str, WithJsonSchema(TRUST_POLICY_ID)]
    workspace_id: WorkspaceId
    name: str
    issuer: str
    audience: str
    subject: str
    claims: dict[str, str]
    scopes: Scopes
    max_lifetime_seconds: int
    created_at: Time
    created_by: UserId

    @classmethod
    def of(cls, policy: trust.TrustPolicy) -> TrustPolicy:
        return cls.model_validate(
            {
                "id": policy.id,
                "workspace_id": policy.workspace_id,
                "name": policy.name,
                "issuer": policy.issuer,
                "audience": policy.audience,
                "subject": policy.subject,
                "claims": dict(policy.claims),
                "scopes": list(policy.scopes),
                "max_lifetime_seconds": policy.max_lifetime_seconds,
                "created_at": rfc3339(policy.created_at),
                "created_by": policy.created_by,
            }
        )


class TrustPolicyList(Resource):
    trust_policies: list[TrustPolicy]


# -- webhooks ------------------------------------------------------------------------------

WEBHOOK_ID = _id("whk")
DELIVERY_ID = _id("dlv")
_WEBHOOK_URL = {
    "type": "string",
    "minLength": 1,
    "maxLength": hooks.MAX_URL,
    "format": "uri",
    "pattern": "^https://",
    "examples": ["https://hooks.example.com/memory-auth"],
    "description": "https, with a public host name (not an IP address): every delivery "
    "goes to public addresses only.",
}
_WEBHOOK_EVENTS = {
    "type": "array",
    "minItems": 1,
    "uniqueItems": True,
    "items": {"type": "string", "enum": [hooks.ALL_EVENTS, *EVENT_TYPES]},
    "examples": [["*"], ["key.created", "key.revoked"]],
    "description": 'The event types delivered, or `["*"]` for every one.',
}
_DESCRIPTION = {**TEXT, "type": ["string", "null"], "examples": ["alerts to #security"]}
WebhookUrl = Annotated[
    str, Invalid(errors.INVALID_WEBHOOK, "url must be a string."), WithJsonSchema(_WEBHOOK_URL)
]
WebhookEvents = Annotated[
    list[str],
    Invalid(errors.INVALID_WEBHOOK, "events must be a list of event types."),
    WithJsonSchema(_WEBHOOK_EVENTS),
]


def _description(value: Any) -> str | None:
    if value is None:
        return None
    try:
        return strict_parsing.clean_text(value)
    except strict_parsing.InvalidText as invalid:
        raise Refused(errors.INVALID_WEBHOOK, f"description {invalid}.") from None


class NewWebhook(Request):
    """What subscribes a URL to a workspace's events (docs/guides/webhooks.md)."""

    url: WebhookUrl
    events: WebhookEvents
    description: Annotated[
        str | None, BeforeValidator(_description), WithJsonSchema(_DESCRIPTION)
    ] = None


class WebhookChanges(Request):
    """What a PATCH may change; a field left out stays as it is."""

    url: Annotated[
        str | None,
        Invalid(errors.INVALID_WEBHOOK, "url must be a string."),
        _not_null(errors.INVALID_WEBHOOK, "url must be a string."),
        WithJsonSchema(_WEBHOOK_URL),
    ] = None
    events: Annotated[
        list[str] | None,
        Invalid(errors.INVALID_WEBHOOK, "events must be a list of event types."),
        _not_null(errors.INVALID_WEBHOOK, "events must be a list of event types."),
        WithJsonSchema(_WEBHOOK_EVENTS),
    ] = None
    enabled: Annotated[
        bool | None,
        Invalid(errors.INVALID_WEBHOOK, "enabled must be true or false."),
        _not_null(errors.INVALID_WEBHOOK, "enabled must be true or false."),
        WithJsonSchema({"type": "boolean", "description": "false: nothing is delivered."}),
    ] = None


class Webhook(Resource):
    id: Annotated[str, WithJsonSchema(WEBHOOK_ID)]
    workspace_id: WorkspaceId
    url: Annotated[str, WithJsonSchema({"type": "string"})]
    events: Annotated[list[str], WithJsonSchema(_WEBHOOK_EVENTS)]
    enabled: bool
    description: Annotated[str | None, WithJsonSchema(_DESCRIPTION)]
    created_at: Time
    created_by: UserId
    failing_since: Annotated[
        str | None,
        WithJsonSchema(
            {**NULLABLE_TIME, "description": "When its deliveries began failing without a "
             "success since (null: not failing). After 3 days it is disabled."}
        ),
    ]
    previous_secret_expires_at: Annotated[
        str | None,
        WithJsonSchema(
            {**NULLABLE_TIME, "description": "Until when the secret before the last rotation "
             "still signs, beside the current one (null: no overlap)."}
        ),
    ]

    @classmethod
    def of(cls, webhook: hooks.Webhook, now: datetime) -> Webhook:
        overlap = len(webhook.sealed_in_use(now)) > 1
        return cls.model_validate(
            {
                "id": webhook.id,
                "workspace_id": webhook.workspace_id,
                "url": webhook.url,
                "events": list(webhook.events),
                "enabled": webhook.enabled,
                "description": webhook.description,
                "created_at": rfc3339(webhook.created_at),
                "created_by": webhook.created_by,
                "failing_since": rfc3339(webhook.failing_since),
                "previous_secret_expires_at": rfc3339(webhook.previous_until) if overlap else None,
            }
        )


class WebhookWithSecret(Webhook):
    secret: Annotated[
        str,
        WithJsonSchema(
            {"type": "string", "pattern": "^whsec_[A-Za-z0-9+/=]+$",
             "description": "The signing secret, shown once: only in this answer."}
        ),
    ]


class WebhookList(Resource):
    webhooks: list[Webhook]


class Delivery(Resource):
    id: Annotated[str, WithJsonSchema(DELIVERY_ID)]
    event_id: Annotated[str, WithJsonSchema(_id("evt"))]
    event_type: Annotated[str, WithJsonSchema({"type": "string", "enum": list(EVENT_TYPES)})]
    state: Annotated[
        str, WithJsonSchema({"type": "string", "enum": ["pending", "delivered", "failed"]})
    ]
    attempts: int
    last_status_code: Annotated[
        int | None,
        WithJsonSchema(
            {"type": ["integer", "null"],
             "description": "The receiver's last HTTP status (null: no answer in 10 s)."}
        ),
    ]
    last_attempt_at: OptionalTime
    next_attempt_at: OptionalTime
    created_at: Time

    @classmethod
    def of(cls, delivery: hooks.Delivery) -> Delivery:
        return cls.model_validate(
            {
                "id": delivery.id,
                "event_id": delivery.event_id,
                "event_type": delivery.event_type,
                "state": delivery.state,
                "attempts": delivery.attempts,
                "last_status_code": delivery.last_status,
                "last_attempt_at": rfc3339(delivery.last_attempt_at),
                "next_attempt_at": rfc3339(delivery.next_attempt_at)
                if delivery.state == "pending"
                else None,
                "created_at": rfc3339(delivery.created_at),
            }
        )


class DeliveryPage(Resource):
    deliveries: list[Delivery]
    next_cursor: NextCursor


class DeliveryQuery(Query):
    limit: Limit = 50
    cursor: Cursor = None


# -- public revocation of leaked credentials -----------------------------------------------


def _credentials(value: Any) -> list[str]:
    if (
        not isinstance(value, list)
        or not 1 <= len(value) <= revocation.MAX_CREDENTIALS
        or not all(
            isinstance(c, str) and 1 <= len(c) <= revocation.MAX_CREDENTIAL_LENGTH for c in value
        )
    ):
        raise Refused(
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
        int, WithJsonSchema({"type": "integer", "minimum": 1, "maximum": 1000,
                             "description": "How many strings the report held."})
    ]


# -- service clients ----------------------------------------------------------------------

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
        _not_null(errors.INVALID_SERVICE_CLIENT, "jwks must be a JWK Set (an object)."),
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
        _not_null(errors.INVALID_SERVICE_CLIENT, "jwksUri must be a string."),
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


class ServiceClient(Resource):
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
    def of(cls, client: service_clients.ServiceClient, issuer: str) -> ServiceClient:
        return cls.model_validate(
            {
                "client_id": client.id,
                "workspace_id": client.workspace_id,
                "name": client.name,
                "scopes": list(client.scopes),
                "jwks": None if client.jwks is None else {"keys": list(client.jwks)},
                "jwks_uri": client.jwks_uri,
                "token_endpoint": issuer + "/v1/oauth/token",
                "created_at": rfc3339(client.created_at),
                "created_by": client.created_by,
            }
        )


class ServiceClientList(Resource):
    service_clients: list[ServiceClient]


# -- audit events --------------------------------------------------------------------------


class Event(Resource):
    id: Annotated[str, WithJsonSchema(_id("evt"))]
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
                    "keyId": _id("key", nullable=True),
                    "email": NULLABLE_EMAIL,
                    "name": NULLABLE_PERSON_NAME,
                    "system": {"type": "string"},
                },
            }
        ),
    ]
    key_id: Annotated[str | None, WithJsonSchema(_id("key", nullable=True))]
    workspace_id: Annotated[str | None, WithJsonSchema(_id("ws", nullable=True))]
    source_ip: Annotated[str | None, WithJsonSchema({"type": ["string", "null"]})]
    user_agent: Annotated[str | None, WithJsonSchema({"type": ["string", "null"]})]
    data: Annotated[
        dict[str, Any],
        WithJsonSchema({"type": "object", "description": "What the event type records."}),
    ]

    @classmethod
    def of(
        cls, event: events.Event, people: Mapping[str, workspaces.Person] | None = None
    ) -> Event:
        """The event as the API and the event bus carry it (`events.Event.detail`), its
        actor named by the person's email and name when known (`people`, by user id)."""
        detail = event.detail()
        person = (people or {}).get(str(detail["actor"].get("userId")))
        if person is not None:
            known = {"email": person.email, "name": person.name}
            detail["actor"] |= {k: v for k, v in known.items() if v is not None}
        return cls.model_validate(detail)


class EventPage(Resource):
    events: list[Event]
    next_cursor: NextCursor


# -- connected apps (MCP grants a person has given) -----------------------------------------


class ConnectedApp(Resource):
    id: Annotated[str, WithJsonSchema(CONNECTED_APP_ID)]
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
    def of(cls, app: connected_apps.ConnectedApp) -> ConnectedApp:
        return cls(
            id=app.id,
            client_id=app.client_id,
            client_name=app.client_name,
            workspace_id=app.workspace_id,
            scopes=ordered(app.scopes),
            created_at=rfc3339(app.created_at) or "",
            last_used_at=rfc3339(app.last_used_at),
            kind="consent" if app.kind == "consent" else "grant",
        )


class ConnectedAppList(Resource):
    grants: list[ConnectedApp]


# -- sessions (a person's sign-ins) --------------------------------------------------------


class Session(Resource):
    id: Annotated[str, WithJsonSchema(SESSION_ID)]
    created_at: Time
    last_refreshed_at: Annotated[
        str | None,
        WithJsonSchema(
            {**NULLABLE_TIME, "description": "Its last refresh (null: never refreshed)."}
        ),
    ]
    expires_at: Annotated[
        str,
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
    current: Annotated[
        bool,
        WithJsonSchema(
            {"type": "boolean", "description": "The sign-in of the token making this request."}
        ),
    ]

    @classmethod
    def of(cls, sign_in: sign_ins.SignIn, current_id: str | None) -> Session:
        return cls(
            id=sign_in.id,
            created_at=rfc3339(sign_in.created_at) or "",
            last_refreshed_at=rfc3339(sign_in.last_refreshed_at),
            expires_at=rfc3339(sign_in.expires_at) or "",
            user_agent=sign_in.user_agent,
            ip_address=sign_in.ip_address,
            current=sign_in.id == current_id,
        )


class SessionList(Resource):
    sessions: list[Session]


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


# -- the public routes' shapes (their routes keep an edge of their own: these describe) -----

_STATUSES = sorted({e.status for e in errors.PROBLEMS.values()})


class Problem(BaseModel):
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


class OAuthError(BaseModel):
    """RFC 6749 §5.2 error."""

    error: Annotated[
        str, Field(json_schema_extra={"enum": sorted({e.code for e in errors.OAUTH_ERRORS})})
    ]
    error_description: str


def _reported(name: str, limit: int, rule: str | None = None) -> BeforeValidator:
    """A report's text field: a string of at most `limit` characters, else invalid_report."""
    detail = rule or f"{name} must be a string of at most {limit} characters."

    def check(value: Any) -> Any:
        if value is not None and (not isinstance(value, str) or len(value) > limit):
            raise Refused(errors.INVALID_REPORT, detail)
        return value

    return BeforeValidator(check)


_TOKEN_RULE = "Each reported token needs a token string."


class ReportedToken(BaseModel):
    """One token GitHub found; other fields are ignored. Every refusal is invalid_report, for
    the first token refused, its fields in this order."""

    model_config = ConfigDict(strict=True)

    token: Annotated[
        str, _reported("token", 1024, _TOKEN_RULE), Field(min_length=1, max_length=1024)
    ]
    type: Annotated[Annotated[str, Field(max_length=200)] | None, _reported("type", 200)] = None
    url: Annotated[Annotated[str, Field(max_length=2048)] | None, _reported("url", 2048)] = None
    source: Annotated[
        Annotated[str, Field(max_length=200)] | None, _reported("source", 200)
    ] = None

    @model_validator(mode="before")
    @classmethod
    def _an_object_with_a_token(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            raise Refused(errors.INVALID_REPORT, "Each reported token must be an object.")
        if not data.get("token"):  # absent, null or empty (a long one, the field refuses)
            raise Refused(errors.INVALID_REPORT, _TOKEN_RULE)
        return data


class LeakReport(RootModel[list[ReportedToken]]):
    """GitHub's report: the tokens it found."""

    root: Annotated[list[ReportedToken], Field(min_length=1, max_length=MAX_REPORTED_TOKENS)]

    @model_validator(mode="before")
    @classmethod
    def _an_array_of_tokens(cls, data: Any) -> Any:
        """Its size is checked before its tokens (a list's own bounds come after its items')."""
        if not isinstance(data, list) or not 1 <= len(data) <= MAX_REPORTED_TOKENS:
            raise Refused(
                errors.INVALID_REPORT,
                f"The report must be a JSON array of 1 to {MAX_REPORTED_TOKENS} objects.",
            )
        return data

    def tokens(self) -> list[github.ReportedToken]:
        return [
            github.ReportedToken(token=t.token, type=t.type or "", url=t.url, source=t.source)
            for t in self.root
        ]


class Verdict(BaseModel):
    token_hash: Annotated[str, Field(pattern="^[0-9a-f]{64}$")]
    token_type: str
    label: Literal["true_positive", "false_positive"]


class LeakVerdicts(RootModel[list[Verdict]]):
    """One verdict per reported token."""


class Jwk(BaseModel):
    kty: Literal["RSA"]
    kid: str
    alg: Literal["RS256"]
    use: Literal["sig"]
    n: str
    e: str


class JwkSet(BaseModel):
    keys: list[Jwk]


def _absent_or(schema: dict[str, Any]) -> WithJsonSchema:
    """An optional field's schema: absent, or a value of this schema (never null)."""
    return WithJsonSchema(schema)


ANY_TEXT = Annotated[str | None, _absent_or({"type": "string"})]


class OAuthRequest(BaseModel):
    """A token endpoint's request (JSON, or an OAuth form)."""

    model_config = ConfigDict(extra="allow")


TOKEN_EXCHANGE_GRANT = "urn:ietf:params:oauth:grant-type:token-exchange"  # RFC 8693 §2.1
ID_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:id_token"  # a login
ACCESS_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:access_token"  # a delegation
JWT_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:jwt"  # a workload's identity token
SUBJECT_TOKEN_TYPES = (ID_TOKEN_TYPE, ACCESS_TOKEN_TYPE, JWT_TOKEN_TYPE)


# A delegation's own fields (RFC 8693 form and JSON alike).
ExpiresIn = Annotated[
    int | None,
    Field(ge=60, le=3600),
    _absent_or({"type": "integer", "minimum": 60, "maximum": 3600, "default": 900}),
    Invalid(errors.OAUTH_INVALID_REQUEST, "expires_in must be from 60 to 3600 seconds."),
]
Actor = Annotated[
    str | None,
    _text(errors.OAUTH_INVALID_REQUEST, "actor"),
    _absent_or({**TEXT, "examples": ["browser"]}),
]


class ExchangeRequest(OAuthRequest):
    """`{"id_token"}` (a login), or the RFC 8693 fields as JSON (a delegation, a workload's
    exchange)."""

    model_config = ConfigDict(extra="forbid")

    # Optional in JSON; sent, it must be the form's (checked first, as the form's is).
    grant_type: Annotated[
        Literal["urn:ietf:params:oauth:grant-type:token-exchange"] | None,
        _absent_or({"const": TOKEN_EXCHANGE_GRANT}),
        Invalid(errors.UNSUPPORTED_GRANT_TYPE, f"Use grant_type={TOKEN_EXCHANGE_GRANT}."),
    ] = None
    id_token: Annotated[str | None, _absent_or({"type": "string", "minLength": 1})] = None
    subject_token: ANY_TEXT = None
    subject_token_type: Annotated[
        Literal[
            "urn:ietf:params:oauth:token-type:id_token",
            "urn:ietf:params:oauth:token-type:access_token",
            "urn:ietf:params:oauth:token-type:jwt",
        ]
        | None,
        _absent_or({"enum": list(SUBJECT_TOKEN_TYPES)}),
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
            raise Refused(errors.OAUTH_INVALID_REQUEST, "id_token is required.")
        if self.id_token is not None and self.subject_token is not None:
            raise Refused(
                errors.OAUTH_INVALID_REQUEST, "Send id_token or subject_token, not both."
            )
        if self.subject_token is not None and self.subject_token_type is None:
            raise Refused(errors.OAUTH_INVALID_REQUEST, "subject_token_type is required.")
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
        _absent_or({"const": ACCESS_TOKEN_TYPE}),
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
        Literal["refresh_token"] | None, _absent_or({"const": "refresh_token"}), _WRONG_GRANT
    ] = None

    @model_validator(mode="before")
    @classmethod
    def _grant_type_first(cls, data: Any) -> Any:
        """The endpoint answers a wrong grant_type before a missing refresh_token."""
        if isinstance(data, dict) and data.get("grant_type", REFRESH_GRANT) != REFRESH_GRANT:
            raise Refused(_WRONG_GRANT.problem, _WRONG_GRANT.detail)
        return data


class RevokeRequest(OAuthRequest):
    """Sign-out: the login refresh token to revoke (RFC 7009's `token`, as JSON)."""

    model_config = ConfigDict(extra="forbid")

    token: Annotated[str, Field(min_length=1, examples=["<refresh token>"])]


class RefreshForm(OAuthRequest):
    grant_type: Annotated[Literal["refresh_token"], _WRONG_GRANT]
    refresh_token: Annotated[str, Field(min_length=1)]


def _redirect_uris(value: Any) -> tuple[str, ...]:
    try:
        return clients.check_redirect_uris(value)
    except clients.InvalidClientMetadata as invalid:
        raise Refused(errors.INVALID_REDIRECT_URI, invalid.description) from None


def _client_name(value: Any) -> str:
    name = clients.client_name(value)
    if name is None:
        raise ValueError("not a name")
    return name


def _with_code_grant(grant_types: list[str]) -> list[str]:
    if "authorization_code" not in grant_types:
        raise ValueError("no authorization_code")
    return grant_types


_REDIRECT_URIS = f"redirect_uris must list 1 to {clients.MAX_REDIRECT_URIS} URIs."


# The fields in the order registration checks them (the first refused answers). A redirect
# URI's rules are `clients.check_redirect_uris`, which a Client ID Metadata Document's are
# held to as well.
class ClientMetadata(OAuthRequest):
    """RFC 7591 client metadata; other metadata is ignored. A redirect URI returns to an app:
    https, a loopback http address (any port), or an app's own scheme; no fragment."""

    redirect_uris: Annotated[
        tuple[str, ...],
        BeforeValidator(_redirect_uris),
        WithJsonSchema(
            {
                "type": "array",
                "minItems": 1,
                "maxItems": clients.MAX_REDIRECT_URIS,
                "items": {"type": "string", "format": "uri", "maxLength": clients.MAX_URI_LENGTH},
            }
        ),
    ]
    token_endpoint_auth_method: Annotated[
        Literal["none"],
        Invalid(
            errors.INVALID_CLIENT_METADATA,
            "Only public clients are registered: token_endpoint_auth_method none.",
        ),
    ] = "none"
    application_type: Annotated[
        Literal["web", "native"],
        Invalid(errors.INVALID_CLIENT_METADATA, "application_type must be web or native."),
    ] = "native"
    grant_types: Annotated[
        list[Literal["authorization_code", "refresh_token"]],
        Field(min_length=1),
        AfterValidator(_with_code_grant),
        WithJsonSchema(
            {
                "type": "array",
                "items": {"enum": ["authorization_code", "refresh_token"]},
                "contains": {"const": "authorization_code"},
            }
        ),
        Invalid(
            errors.INVALID_CLIENT_METADATA,
            "grant_types must include authorization_code, and at most refresh_token too.",
        ),
    ] = ["authorization_code"]  # RFC 7591 §2
    # RFC 9449 §5.2: true, and every token request of the client must carry a DPoP proof.
    dpop_bound_access_tokens: Annotated[
        bool,
        Strict(),  # JSON true or false only: no "true", 1 or "yes"
        Invalid(errors.INVALID_CLIENT_METADATA, "dpop_bound_access_tokens must be a boolean."),
    ] = False
    response_types: Annotated[
        list[Literal["code"]],
        Field(min_length=1, max_length=1),
        Invalid(errors.INVALID_CLIENT_METADATA, 'response_types must be ["code"].'),
    ] = ["code"]
    # Trimmed; sent, even as null, it must be a name.
    client_name: Annotated[
        str | None,
        BeforeValidator(_client_name),
        _absent_or({"type": "string", "minLength": 1, "maxLength": clients.MAX_NAME_LENGTH}),
        Invalid(
            errors.INVALID_CLIENT_METADATA,
            f"client_name must be 1 to {clients.MAX_NAME_LENGTH} printable characters.",
        ),
    ] = None

    @model_validator(mode="before")
    @classmethod
    def _redirect_uris_required(cls, data: Any) -> Any:
        """Without redirect_uris, RFC 7591's invalid_redirect_uri (not invalid_request)."""
        if isinstance(data, dict) and "redirect_uris" not in data:
            raise Refused(errors.INVALID_REDIRECT_URI, _REDIRECT_URIS)
        return data


def _described(description: str) -> WithJsonSchema:
    return _absent_or({"type": "string", "description": description})


class BrowserStep(BaseModel):
    """A browser step's parameters (the provider's answer, the consent page and form):
    strings as sent, others ignored. Nothing here refuses: each refusal needs the pending
    authorization first (expired, another browser, the CSRF token), so the flow checks
    these in that order and answers an error page (`OAuthService`)."""

    model_config = ConfigDict(frozen=True)

    def parameters(self) -> dict[str, str]:
        return self.model_dump(exclude_none=True)


class CallbackQuery(BrowserStep):
    """The login provider's answer (RFC 6749 §4.1.2, RFC 9207's `iss`)."""

    state: Annotated[str | None, _described("The pending authorization's id.")] = None
    iss: Annotated[str | None, _described("The provider's issuer (RFC 9207).")] = None
    code: ANY_TEXT = None
    error: ANY_TEXT = None
    error_description: ANY_TEXT = None


class ConsentQuery(BrowserStep):
    consent: Annotated[str | None, _described("The pending authorization's id.")] = None


class ConsentForm(BrowserStep):
    """The consent page's form."""

    consent: Annotated[str | None, _described("The pending authorization's id.")] = None
    csrf: ANY_TEXT = None
    # Checked after the CSRF token (in this order): anything else is "Choose Allow or Deny".
    decision: Annotated[
        str | None, WithJsonSchema({"type": "string", "enum": ["allow", "deny"]})
    ] = None
    # With allow: one of the person's workspaces (checked after the decision).
    workspace_id: Annotated[str | None, WithJsonSchema(WORKSPACE_ID)] = None


# -- the MCP token endpoint: one form per grant, told apart by grant_type -----------------

CODE_GRANT = "authorization_code"
CLIENT_CREDENTIALS_GRANT = "client_credentials"
TOKEN_GRANTS = (CODE_GRANT, REFRESH_GRANT)


# The fields in the order the endpoint checks them (the first refused answers).
class AuthorizationCodeGrant(OAuthRequest):
    """RFC 6749 §4.1.3, with PKCE (RFC 7636 §4.5) and RFC 8707's `resource`."""

    grant_type: Literal["authorization_code"]
    client_id: Annotated[str, Field(min_length=1)]
    code: Annotated[str, Field(min_length=1)]
    redirect_uri: Annotated[str, Field(min_length=1)]
    code_verifier: Annotated[str, Field(min_length=1)]
    resource: ANY_TEXT = None


class RefreshTokenGrant(OAuthRequest):
    """RFC 6749 §6, with RFC 8707's `resource`; `scope` may only narrow the grant's."""

    grant_type: Literal["refresh_token"]
    client_id: Annotated[str, Field(min_length=1)]
    refresh_token: Annotated[str, Field(min_length=1)]
    resource: ANY_TEXT = None
    scope: ANY_TEXT = None


class ClientCredentialsForm(OAuthRequest):
    """RFC 6749 §4.4 for a service client, authenticated by a `private_key_jwt` assertion
    (RFC 7523 §2.2); `resource` (RFC 8707) names an MCP resource served here."""

    grant_type: Literal["client_credentials"]
    client_assertion_type: Literal["urn:ietf:params:oauth:client-assertion-type:jwt-bearer"]
    client_assertion: Annotated[str, Field(min_length=1)]
    client_id: ANY_TEXT = None
    scope: ANY_TEXT = None
    resource: ANY_TEXT = None
    expires_in: Annotated[
        str | None,
        WithJsonSchema(
            {
                "type": "string",
                "pattern": "^[0-9]+$",
                "default": "900",
                "description": "Seconds, from 60 to 3600.",
            }
        ),
    ] = None


class TokenForm(
    RootModel[
        Annotated[AuthorizationCodeGrant | RefreshTokenGrant, Field(discriminator="grant_type")]
    ]
):
    """`POST /v1/oauth/token`'s form: one grant's, by its `grant_type`."""

    @model_validator(mode="before")
    @classmethod
    def _client_then_grant_type(cls, data: Any) -> Any:
        """The endpoint's order, which a tagged union (its tag first) cannot state: a client
        secret is refused (clients here are public), then a missing client_id, then a grant
        type it does not serve (missing or unknown alike)."""
        if isinstance(data, dict):
            if "client_secret" in data:
                raise Refused(errors.INVALID_CLIENT)
            if "client_id" not in data:
                raise Refused(errors.OAUTH_INVALID_REQUEST, "client_id is required.")
            if data.get("grant_type") not in TOKEN_GRANTS:
                raise Refused(
                    errors.UNSUPPORTED_GRANT_TYPE,
                    "This grant_type is not served: see grant_types_supported in the metadata.",
                )
        return data


JWT_BEARER_GRANT = "urn:ietf:params:oauth:grant-type:jwt-bearer"  # RFC 7523 §2.1
ID_JAG_TYPE = "oauth-id-jag+jwt"  # an Identity Assertion JWT Authorization Grant's `typ`
ID_JAG_PROFILE = "urn:ietf:params:oauth:grant-profile:id-jag"


# The fields in the order the endpoint checks them (the first refused answers).
class JwtBearerForm(OAuthRequest):
    """RFC 7523 §2.1: a workload's JWT (judged by the workspace's trust policies) or an
    enterprise IdP's ID-JAG (its `typ` oauth-id-jag+jwt), for a token of one workspace."""

    grant_type: Literal["urn:ietf:params:oauth:grant-type:jwt-bearer"]
    assertion: Annotated[str, Field(min_length=1)]
    workspace_id: ANY_TEXT = None
    scope: ANY_TEXT = None
    resource: ANY_TEXT = None
    client_id: ANY_TEXT = None


class TokenEndpointForm(
    RootModel[
        Annotated[
            AuthorizationCodeGrant
            | RefreshTokenGrant
            | TokenExchangeForm
            | JwtBearerForm
            | ClientCredentialsForm,
            Field(discriminator="grant_type"),
        ]
    ]
):
    """`POST /v1/oauth/token`'s form: one grant's, by its `grant_type` (the grants of
    `grant_types_supported`)."""


class RevocationForm(OAuthRequest):
    """RFC 7009."""

    token: Annotated[str, Field(min_length=1)]
    token_type_hint: ANY_TEXT = None
    client_id: ANY_TEXT = None


class Metadata(RootModel[dict[str, Any]]):
    """An RFC 8414, RFC 9728 or RFC 7591 metadata document."""


class AccessToken(RootModel[dict[str, Any]]):
    """An RFC 6749 §5.1 token response."""


class OpenApiDocument(RootModel[dict[str, Any]]):
    """An OpenAPI 3.1 document."""


_SPACE = "".join(f"\\u{ord(c):04x}" for c in map(chr, range(0x10000)) if c.isspace())
_SCOPES = "|".join(re.escape(s) for s in (*ALL_SCOPES, OFFLINE_ACCESS))


def _served(value: str, info: ValidationInfo) -> str:
    """A resource served here (the validation's context names them), canonical."""
    resource = canonical_resource(value)
    if resource not in (info.context or {}).get("resources", ()):
        raise ValueError("not served here")
    return resource


def _known_scopes(value: str | None) -> str | None:
    if parse_scope(value) is None:
        raise ValueError("unknown scope")
    return value


class AuthorizationQuery(Query):
    """The authorization request (RFC 6749 §4.1.1, RFC 7636, RFC 8707), its parameters in
    the order they are checked (the first refused answers, on our error page: never
    redirected). `client_id` and `redirect_uri` are checked before this model, against the
    client's registration (`OAuthService.requesting_client`); a repeated parameter before
    that (a mapping cannot show one); an absent parameter is refused like a wrong one."""

    client_id: Annotated[str, Field(min_length=1)]
    redirect_uri: Annotated[str, Field(min_length=1)]
    state: Annotated[
        Annotated[str, Field(max_length=MAX_STATE_LENGTH)] | None,
        Invalid(errors.OAUTH_INVALID_REQUEST, "state is too long."),
    ] = None
    response_type: Annotated[Literal["code"], Invalid(errors.UNSUPPORTED_RESPONSE_TYPE)]
    code_challenge_method: Annotated[
        Literal["S256"],
        Invalid(
            errors.OAUTH_INVALID_REQUEST, "PKCE is required, with code_challenge_method S256."
        ),
    ]
    code_challenge: Annotated[
        str,
        Field(pattern=PKCE_CHALLENGE.pattern),
        Invalid(errors.OAUTH_INVALID_REQUEST, "code_challenge must be an S256 challenge."),
    ]
    # One of MCP_RESOURCES (its scheme and host in any case): validated with them as context.
    resource: Annotated[
        str,
        Field(min_length=1),
        AfterValidator(_served),
        Invalid(errors.INVALID_TARGET, "resource must name an MCP server served here."),
    ]
    # Space-separated scope names, any whitespace Python's `str.split` splits on.
    scope: Annotated[
        str | None,
        AfterValidator(_known_scopes),
        Invalid(errors.OAUTH_INVALID_SCOPE),
        WithJsonSchema(
            {"type": "string", "pattern": rf"^[{_SPACE}]*(?:(?:{_SCOPES})(?:[{_SPACE}]+|$))*$"}
        ),
    ] = None
    # Longer than 255 characters, ignored.
    login_hint: str | None = None
    # `consent`: ask for consent even when the person already gave it (OpenID Connect);
    # other values are ignored.
    prompt: Annotated[
        str | None,
        WithJsonSchema(
            {
                "type": "string",
                "examples": ["consent"],
                "description": "`consent`: ask even where a consent is remembered; "
                "other values are ignored.",
            }
        ),
    ] = None

    @model_validator(mode="before")
    @classmethod
    def _absent_as_wrong(cls, data: Any) -> Any:
        """An absent parameter is refused with the error of a wrong one (no response_type:
        unsupported_response_type), so each required one absent is validated as null."""
        if isinstance(data, dict):
            required = (n for n, info in cls.model_fields.items() if info.is_required())
            return {**dict.fromkeys(required), **data}
        return data

    def request(self) -> AuthorizationRequest:
        return AuthorizationRequest(
            redirect_uri=self.redirect_uri,
            code_challenge=self.code_challenge,
            resource=self.resource,
            scopes=tuple(parse_scope(self.scope) or ()),
            state=self.state,
            login_hint=self.login_hint,
            ask_consent=self.prompt == "consent",
        )


class GitHubSignature(BaseModel):
    """The headers of a GitHub report."""

    key_identifier: Annotated[
        str,
        Field(
            alias="Github-Public-Key-Identifier",
            min_length=1,
            description="The identifier of the GitHub key that signed the body.",
        ),
    ]
    signature: Annotated[
        str,
        Field(
            alias="Github-Public-Key-Signature",
            min_length=1,
            description="Base64 DER ECDSA P-256 signature over SHA-256 of the raw body.",
        ),
    ]
