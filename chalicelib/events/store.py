"""Audit events in DynamoDB: `USER#<audience>` / `EVT#<evt id>`, with a 400-day TTL.

An event leaves through the outbox of the change it records (`member`, table.py's
`commit`): the change's commit item names it, a write after the commit stores it (only if
absent, so never twice) and the sweep stores what a crash left, so a change is never
committed without its event nor an event stored without its change. Event ids are ULIDs,
so a user's events read newest first with one Query.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from types import MappingProxyType
from typing import Any

from chalicelib import items, strict_parsing
from chalicelib.clock import epoch, parse_rfc3339, rfc3339
from chalicelib.events.model import RETENTION, Event
from chalicelib.table import (
    TTL_ATTRIBUTE,
    Attribute,
    Item,
    Pending,
    Shape,
    newest_page,
    put_if_absent,
    to_item,
    write_once,
)


@dataclass(frozen=True)
class EventPage:
    events: list[Event]
    next_cursor: str | None


def _moment(text: str) -> datetime:
    parsed = parse_rfc3339(text)
    assert parsed is not None  # written by rfc3339
    return parsed


def _json(value: Any) -> str:
    # Nested values as JSON text: the table layer marshals flat values only.
    return json.dumps(value, separators=(",", ":"))


def _json_object(value: Any) -> str:
    return _json(dict(value))


EVENT_SHAPE = Shape(
    Event,
    [
        Attribute("eventId", "id"),
        Attribute("type"),
        Attribute("occurredAt", "occurred_at", rfc3339, _moment),
        Attribute("audience"),
        Attribute("actor", write=_json, read=json.loads),
        Attribute("keyId", "key_id"),
        Attribute("workspaceId", "workspace_id"),
        Attribute("sourceIp", "source_ip"),
        Attribute("userAgent", "user_agent"),
        Attribute("data", write=_json_object, read=json.loads, missing=MappingProxyType({})),
    ],
)


def to_event_item(event: Event) -> Item:
    item = to_item(
        {**EVENT_SHAPE.values(event), TTL_ATTRIBUTE: epoch(event.occurred_at + RETENTION)}
    )
    item.update(items.event(event.audience, event.id))
    return item


def from_event_item(values: dict[str, Any]) -> Event:
    return EVENT_SHAPE.record(values)


class EventStore:
    def __init__(self, client: Any, table_name: str):
        self._client = client
        self._table = table_name

    def member(self, event: Event) -> Pending:
        """The event in the outbox of the change it records."""
        return Pending.new_item(self._table, to_event_item(event), event.occurred_at)

    def put(self, event: Event) -> None:
        """An event written on its own (a reveal; a sign-in's end). Its id is new: a failed
        condition means an earlier attempt of this very put was applied (botocore retried
        it after losing the answer), so the event is stored once either way."""
        write_once(self._client, put_if_absent(self._table, to_event_item(event)))

    def list(
        self, user_id: str, limit: int, after: str | None, keep: Callable[[Event], bool]
    ) -> EventPage:
        """Newest first, `limit` events of this user's log for which `keep` is true."""
        # Strongly consistent: an audit log read right after a change must show that change.
        found = newest_page(
            self._client,
            self._table,
            items.user_pk(user_id),
            items.EVENT_PREFIX,
            read=from_event_item,
            keep=keep,
            limit=limit,
            start=items.event(user_id, after) if after else None,
        )
        full = found and len(found) == limit
        cursor = strict_parsing.encode_cursor(found[-1].id) if full else None
        return EventPage(found, cursor)
