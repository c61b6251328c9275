"""The wire shapes of /v1/auth/api-keys (`api/keys.py`): a key, its page, its usage, and
what creates, changes, rotates and lists keys."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, ConfigDict, Field, WithJsonSchema, model_validator

from chalicelib import errors, strict_parsing
from chalicelib.access.allow_list import MAX_CIDRS, InvalidCidr, parse_cidrs
from chalicelib.access.scopes import ALL_SCOPES, DATA_PLANE_SCOPES
from chalicelib.api.wire import (
    NO_WORKSPACE,
    NULLABLE_TIME,
    RFC3339,
    TIME,
    UNPRINTABLE,
    Cursor,
    Fields,
    Invalid,
    KeyId,
    Label,
    LabelChange,
    Limit,
    NextCursor,
    OptionalTime,
    Query,
    RefusedValue,
    Request,
    Resource,
    Scopes,
    Time,
    WorkspaceQuery,
    id_schema,
)
from chalicelib.keys import model as keys
from chalicelib.keys.model import MAX_GRACE_PERIOD, MAX_LIFETIME_DAYS, MAX_REQUESTS_PER_DAY


def _cidrs(value: Any) -> tuple[str, ...] | None:
    if value is None:
        return None
    try:
        return parse_cidrs(value)
    except InvalidCidr as invalid:
        raise RefusedValue(errors.INVALID_CIDR, str(invalid)) from None


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
# An RFC 7638 SHA-256 thumbprint: 43 base64url characters.
THUMBPRINT = "^[A-Za-z0-9_-]{43}$"
DPOP_JKT = {
    "type": ["string", "null"],
    "pattern": THUMBPRINT,
    "examples": ["0ZcOCORZNYy-DWpqq30jZyJGHTN0d2HglBV3uiguA4I"],
}
DpopJkt = Annotated[
    str | None,
    Invalid(errors.INVALID_DPOP_JKT),
    Field(pattern=THUMBPRINT),
    WithJsonSchema(
        {
            **DPOP_JKT,
            "description": "Binds the key to a key pair: the RFC 7638 SHA-256 thumbprint of its "
            "public key. Such a key works only as 'Authorization: DPoP <key>' with a DPoP proof "
            "(RFC 9449) signed by that pair; null or omitted: a bearer key.",
        }
    ),
]



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


class ApiKeyBody(Resource):
    id: KeyId
    label: Annotated[str, Field(examples=["ci deploys"])]
    category: Literal["workspace", "admin"]
    workspace_id: Annotated[str | None, WithJsonSchema(id_schema("ws", nullable=True))]
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
    replaced_by: Annotated[str | None, WithJsonSchema(id_schema("key", nullable=True))]
    revealable: Annotated[
        bool, Field(description="Whether reveal can show the plaintext (never after revocation).")
    ]
    last_used_at: Annotated[
        str | None,
        RFC3339,
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
    def of(cls, api_key: keys.ApiKey, now: datetime) -> ApiKeyBody:
        """The public representation (README, "API keys")."""
        return cls.model_validate(Fields(api_key, **_computed(api_key, now)), from_attributes=True)


def _computed(api_key: keys.ApiKey, now: datetime) -> dict[str, Any]:
    """What the wire says of a key beyond its record's fields."""
    status = api_key.status(now)
    return {
        "status": status,
        # Hints stored before they were ASCII carry a one-character ellipsis.
        "hint": api_key.hint.replace("\u2026", "...") if api_key.hint else api_key.hint,
        "revoked_at": api_key.end() if status == "revoked" else None,
        # A revoked key can never be revealed again (410), whatever its ciphertext.
        "revealable": api_key.revealable and api_key.revoked_at is None,
    }


class ApiKeyWithSecret(ApiKeyBody):
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
        fields = Fields(api_key, **_computed(api_key, now), key=plaintext)
        return cls.model_validate(fields, from_attributes=True)



class KeyPageBody(Resource):
    keys: list[ApiKeyBody]
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
                "anyOf": [id_schema("ws", nullable=True), NO_WORKSPACE],
                "description": "Workspace keys only (null or empty: none).",
            }
        ),
    ] = None
    workspace_id_snake: Annotated[
        str | None,
        Invalid(errors.INVALID_WORKSPACE_ID),
        WithJsonSchema(
            {
                "anyOf": [id_schema("ws", nullable=True), NO_WORKSPACE],
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
            raise RefusedValue(errors.CONFLICTING_WORKSPACE_ID, disagree)
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
        raise RefusedValue(errors.INVALID_PARAMETER, f"The q query parameter {invalid}.") from None


# A search of key labels (`?q=`), as `strict_parsing.search_text` reads it.
KeySearch = Annotated[
    str | None,
    BeforeValidator(_search),
    WithJsonSchema(
        {
            "type": "string",
            "maxLength": strict_parsing.MAX_TEXT_LENGTH,
            "pattern": f"^[^{UNPRINTABLE}]*$",
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
