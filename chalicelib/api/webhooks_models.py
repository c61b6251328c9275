"""The wire shapes of /v1/workspaces/{id}/webhooks (`api/webhooks.py`): subscriptions and
their deliveries."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from pydantic import BeforeValidator, WithJsonSchema

from chalicelib import errors, strict_parsing
from chalicelib.api.wire import (
    DELIVERY_ID,
    NULLABLE_TIME,
    RFC3339,
    TEXT,
    WEBHOOK_ID,
    Cursor,
    Fields,
    Invalid,
    Limit,
    NextCursor,
    OptionalTime,
    Query,
    RefusedValue,
    Request,
    Resource,
    Time,
    UserId,
    WorkspaceId,
    id_schema,
    not_null,
)
from chalicelib.events.model import TYPES as EVENT_TYPES
from chalicelib.webhooks import model as hooks

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
        raise RefusedValue(errors.INVALID_WEBHOOK, f"description {invalid}.") from None


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
        not_null(errors.INVALID_WEBHOOK, "url must be a string."),
        WithJsonSchema(_WEBHOOK_URL),
    ] = None
    events: Annotated[
        list[str] | None,
        Invalid(errors.INVALID_WEBHOOK, "events must be a list of event types."),
        not_null(errors.INVALID_WEBHOOK, "events must be a list of event types."),
        WithJsonSchema(_WEBHOOK_EVENTS),
    ] = None
    enabled: Annotated[
        bool | None,
        Invalid(errors.INVALID_WEBHOOK, "enabled must be true or false."),
        not_null(errors.INVALID_WEBHOOK, "enabled must be true or false."),
        WithJsonSchema({"type": "boolean", "description": "false: nothing is delivered."}),
    ] = None


class WebhookBody(Resource):
    id: Annotated[str, WithJsonSchema(WEBHOOK_ID)]
    workspace_id: WorkspaceId
    url: str
    events: Annotated[list[str], WithJsonSchema(_WEBHOOK_EVENTS)]
    enabled: bool
    description: Annotated[str | None, WithJsonSchema(_DESCRIPTION)]
    created_at: Time
    created_by: UserId
    failing_since: Annotated[
        str | None,
        RFC3339,
        WithJsonSchema(
            {**NULLABLE_TIME, "description": "When its deliveries began failing without a "
             "success since (null: not failing). After 3 days it is disabled."}
        ),
    ]
    previous_secret_expires_at: Annotated[
        str | None,
        RFC3339,
        WithJsonSchema(
            {**NULLABLE_TIME, "description": "Until when the secret before the last rotation "
             "still signs, beside the current one (null: no overlap)."}
        ),
    ]

    @classmethod
    def of(cls, webhook: hooks.Webhook, now: datetime) -> WebhookBody:
        overlap = len(webhook.sealed_in_use(now)) > 1
        fields = Fields(
            webhook, previous_secret_expires_at=webhook.previous_until if overlap else None
        )
        return cls.model_validate(fields, from_attributes=True)


class WebhookWithSecret(WebhookBody):
    secret: Annotated[
        str,
        WithJsonSchema(
            {"type": "string", "pattern": "^whsec_[A-Za-z0-9+/=]+$",
             "description": "The signing secret, shown once: only in this answer."}
        ),
    ]


class WebhookList(Resource):
    webhooks: list[WebhookBody]


class DeliveryBody(Resource):
    id: Annotated[str, WithJsonSchema(DELIVERY_ID)]
    event_id: Annotated[str, WithJsonSchema(id_schema("evt"))]
    event_type: Annotated[str, WithJsonSchema({"type": "string", "enum": list(EVENT_TYPES)})]
    state: hooks.DeliveryState
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
    def of(cls, delivery: hooks.Delivery) -> DeliveryBody:
        fields = Fields(
            delivery,
            last_status_code=delivery.last_status,
            next_attempt_at=delivery.next_attempt_at if delivery.state == "pending" else None,
        )
        return cls.model_validate(fields, from_attributes=True)


class DeliveryPage(Resource):
    deliveries: list[DeliveryBody]
    next_cursor: NextCursor


class DeliveryQuery(Query):
    limit: Limit = 50
    cursor: Cursor = None
