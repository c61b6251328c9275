"""The hourly expiry sweep: `key.expiring` 7 days ahead and `key.expired` once it passes.

It reads only the sparse index `ExpiryNotices` (keys/store.py): each active key sits in it,
sorted by when its next notice is due, and leaves it once its expiry was announced, or when
it is revoked or rotated. A run asks each of the index's few shards for the notices due by
now: one Query per shard, whatever the table's size, and a missed run (or a week of them) is
caught up by the next. It never scans the table.

Each notice is one conditional write, its commit point (the key's notice moves on), with the
event in its outbox: two sweeps at once, or a sweep and a reader that sees the key expired
first, announce it once.

The same hourly run completes what a crash left after a commit point (table.py, "commit
points"): it drains the sparse index `Outbox` of changes older than OUTBOX_GRACE, so an
event or an owner item is at most about an hour late, never lost and never doubled. In the
global stage (no DynamoDB TTL) it also deletes the items past their `ttl` from the sparse
index `Expiry`, so that storage stays bounded; every read treats such an item as gone anyway.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from datetime import timedelta
from typing import Any

from chalicelib import items
from chalicelib.clock import Clock, epoch, rfc3339
from chalicelib.events import model as events
from chalicelib.events.log import EventLog
from chalicelib.events.store import from_event_item
from chalicelib.keys.notice import Notice
from chalicelib.keys.store import NOTICE_SHARDS, KeyStore
from chalicelib.logs import logger
from chalicelib.table import Item, delete_expired, drain_outbox, from_item

# A change's own call delivers its outbox within milliseconds: the sweep leaves younger
# outboxes alone (it would only race the writer; both would be harmless).
OUTBOX_GRACE = timedelta(minutes=5)


@dataclass
class SweepResult:
    expiring: int = 0
    expired: int = 0
    already_announced: int = 0
    outbox_delivered: int = 0
    expired_items_deleted: int = 0


class ExpirySweep:
    def __init__(
        self,
        keys: KeyStore,
        events_log: EventLog,
        clock: Clock,
        dynamodb: Any = None,
        table_name: str = "",
        delete_expired: bool = False,
    ):
        self._keys = keys
        self._events = events_log
        self._clock = clock
        self._dynamodb = dynamodb
        self._table = table_name
        self._delete_expired = delete_expired

    def run(self) -> SweepResult:
        now = self._clock.now()
        result = SweepResult()
        for shard in NOTICE_SHARDS:
            for notice in self._keys.due_notices(shard, now):
                self._announce(notice, result)
        if self._dynamodb is not None:
            stored = drain_outbox(self._dynamodb, self._table, now - OUTBOX_GRACE)
            result.outbox_delivered = len(stored)
            self._events.published(*(from_event_item(from_item(i)) for i in stored if _event(i)))
            if self._delete_expired:
                result.expired_items_deleted = delete_expired(
                    self._dynamodb, self._table, epoch(now)
                )
        logger.info("expiry sweep", extra=asdict(result))
        return result

    def _announce(self, notice: Notice, result: SweepResult) -> None:
        now = self._clock.now()
        expired = notice.expires_at <= now
        event = self._events.new(
            events.KEY_EXPIRED if expired else events.KEY_EXPIRING,
            notice.owner_id,
            events.system(events.EXPIRY),
            key_id=notice.key_id,
            workspace_id=notice.workspace_id,
            data={
                "label": notice.label,
                "hint": notice.hint,
                "expiresAt": rfc3339(notice.expires_at),
            },
        )
        member = [self._events.member(event)]
        if expired:
            announced = self._keys.announce_expired(notice, now, member)
        else:
            announced = self._keys.announce_expiring(notice, now, member)
        if not announced:
            result.already_announced += 1
            return
        self._events.published(event)
        if expired:
            result.expired += 1
        else:
            result.expiring += 1


def _event(item: Item) -> bool:
    return item.get("sk", {}).get("S", "").startswith(items.EVENT_PREFIX)
