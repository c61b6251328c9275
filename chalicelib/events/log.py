"""What the services call to record events, and what `GET /v1/auth/events` reads.

A change's event goes into the change's outbox (`member`: table.py's `commit` stores it
after the commit point), then onto the bus once it committed (`published`). An event that
records no change (a reveal) is stored on its own first (`record`): no plaintext is handed
out without its audit record.

`published` is the one point every stored event passes: it goes to the bus, and to the
workspace's webhook subscriptions (`subscribers`, the webhooks' dispatch: a queue message,
never failing the change).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from chalicelib import ids, strict_parsing
from chalicelib.access.principal import Origin, Principal
from chalicelib.clock import Clock
from chalicelib.errors import INVALID_PARAMETER
from chalicelib.events.model import TYPES, Actor, Event, actor_of
from chalicelib.events.publisher import EventPublisher
from chalicelib.events.store import EventPage, EventStore
from chalicelib.table import Pending

Subscribers = Callable[[Sequence[Event]], None]


class EventLog:
    def __init__(
        self,
        store: EventStore,
        publisher: EventPublisher,
        clock: Clock,
        subscribers: Subscribers | None = None,
    ):
        self._store = store
        self._publisher = publisher
        self._clock = clock
        self._subscribers = subscribers

    def new(
        self,
        type: str,
        audience: str,
        actor: Actor,
        origin: Origin | None = None,
        key_id: str | None = None,
        workspace_id: str | None = None,
        data: Mapping[str, Any] | None = None,
    ) -> Event:
        assert type in TYPES, type
        now = self._clock.now()
        return Event(
            id=ids.new_event_id(now),
            type=type,
            occurred_at=now,
            audience=audience,
            actor=actor,
            key_id=key_id,
            workspace_id=workspace_id,
            source_ip=origin.source_ip if origin else None,
            user_agent=origin.user_agent if origin else None,
            data=dict(data or {}),
        )

    def by(
        self,
        principal: Principal,
        type: str,
        audience: str,
        key_id: str | None = None,
        workspace_id: str | None = None,
        data: Mapping[str, Any] | None = None,
    ) -> Event:
        """An event of the caller's doing, from the caller's address."""
        return self.new(
            type, audience, actor_of(principal), principal.origin, key_id, workspace_id, data
        )

    def member(self, event: Event) -> Pending:
        return self._store.member(event)

    def published(self, *events: Event) -> None:
        """Called once the events are stored: the bus, then the webhooks' queue."""
        self._publisher.publish(events)
        if self._subscribers is not None:
            self._subscribers(events)

    def record(self, event: Event) -> None:
        self._store.put(event)
        self.published(event)

    def history(
        self,
        principal: Principal,
        limit: int,
        cursor: str | None,
        type: str | None,
        key_id: str | None,
    ) -> EventPage:
        """The caller's log: its own keys' events and those of the workspaces it owns; with a
        workspace named (header or query), only that workspace's."""
        after = None
        if cursor is not None:
            after = strict_parsing.decode_cursor(cursor, ids.is_event_id)
            if after is None:
                raise INVALID_PARAMETER.error("cursor is not a cursor this API issued.")
        if type is not None and type not in TYPES:
            raise INVALID_PARAMETER.error(f"type must be one of {', '.join(TYPES)}.")
        if key_id is not None and not ids.is_key_id(key_id):
            raise INVALID_PARAMETER.error("keyId must look like key_….")
        now = self._clock.now()
        workspace_id = principal.workspace_id

        def keep(event: Event) -> bool:
            if event.gone(now):
                return False
            if type is not None and event.type != type:
                return False
            if key_id is not None and event.key_id != key_id:
                return False
            return workspace_id is None or event.workspace_id == workspace_id

        return self._store.list(principal.user_id, limit, after, keep)
