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
from typing import Any

from chalicelib import items, strict_parsing
from chalicelib.clock import epoch, parse_rfc3339, rfc3339
from chalicelib.events.model import RETENTION, Event
from chalicelib.table import (
    TTL_ATTRIBUTE,
    Item,
    Pending,
    newest_page,
    put_if_absent,
    to_item,
    write_once,
)


@dataclass(frozen=True)
class EventPage:
    events: list[Event]
    next_cursor: str | None


def to_event_item(event: Event) -> Item:
    item = to_item(
        {
            "eventId": event.id,
            "type": event.type,
            "occurredAt": rfc3339(event.occurred_at),
            "audience": event.audience,
            # Nested values as JSON text: the table layer marshals flat values only.
            "actor": json.dumps(event.actor, separators=(",", ":")),
            "keyId": event.key_id,
            "workspaceId": event.workspace_id,
            "sourceIp": event.source_ip,
            "userAgent": event.user_agent,
            "data": json.dumps(dict(event.data), separators=(",", ":")),
            TTL_ATTRIBUTE: epoch(event.occurred_at + RETENTION),
        }
    )
    item.update(items.event(event.audience, event.id))
    return item


def from_event_item(values: dict[str, Any]) -> Event:
    occurred = parse_rfc3339(values["occurredAt"])
    assert occurred is not None
    return Event(
        id=values["eventId"],
        type=values["type"],
        occurred_at=occurred,
        audience=values["audience"],
        actor=json.loads(values["actor"]),
        key_id=values.get("keyId"),
        workspace_id=values.get("workspaceId"),
        source_ip=values.get("sourceIp"),
        user_agent=values.get("userAgent"),
        data=json.loads(values.get("data") or "{}"),
    )


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
