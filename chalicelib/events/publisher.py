"""The stage's EventBridge bus: every stored event is also put there, best effort.

Source `memory-auth`, detail-type the event type, detail the event's resource, so that a team
can route events to mail, chat or a SIEM with an EventBridge rule. The event is already
stored when it is put: a failed put is logged (event id and type only) and never fails the
request; the event stays in `GET /v1/auth/events`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from chalicelib.clock import rfc3339
from chalicelib.events.model import SOURCE, Event
from chalicelib.logs import logger

# PutEvents takes at most 10 entries per call.
BATCH = 10


def entry(event: Event, bus_name: str) -> dict[str, Any]:
    return {
        "Source": SOURCE,
        "DetailType": event.type,
        "Detail": json.dumps(event.detail(), separators=(",", ":")),
        "EventBusName": bus_name,
        "Time": rfc3339(event.occurred_at),
    }


class EventPublisher:
    def __init__(self, client: Callable[[], Any], bus_name: str | None):
        self._client = client  # built on first use
        self._bus = bus_name

    def publish(self, events: Sequence[Event]) -> None:
        if not self._bus or not events:
            return
        for start in range(0, len(events), BATCH):
            batch = events[start : start + BATCH]
            try:
                answer = self._client().put_events(
                    Entries=[entry(event, self._bus) for event in batch]
                )
                failed = [
                    event
                    for event, result in zip(batch, answer.get("Entries", []), strict=False)
                    if result.get("ErrorCode")
                ]
                if answer.get("FailedEntryCount") and not failed:
                    failed = list(batch)
            except Exception:  # noqa: BLE001 - whatever failed, the stored event stands
                failed = list(batch)
            for event in failed:
                logger.warning(
                    "event not put on the bus", extra={"event_id": event.id, "type": event.type}
                )
