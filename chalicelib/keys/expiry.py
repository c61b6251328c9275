"""The hourly expiry sweep: `key.expiring` 7 days ahead and `key.expired` once it passes.

It reads only the sparse index `ExpiryNotices` (keys/store.py): each active key sits in it,
sorted by when its next notice is due, and leaves it once its expiry was announced, or when
it is revoked or rotated. A run asks each of the index's few shards for the notices due by
now: one Query per shard, whatever the table's size, and a missed run (or a week of them) is
caught up by the next. It never scans the table.

Each notice is one conditional transaction (the key's notice moves on, the event is stored):
two sweeps at once, or a sweep and a reader that sees the key expired first, announce it once.
"""

from __future__ import annotations

from dataclasses import dataclass

from chalicelib.clock import Clock, rfc3339
from chalicelib.events import model as events
from chalicelib.events.log import EventLog
from chalicelib.keys.notice import Notice
from chalicelib.keys.store import NOTICE_SHARDS, KeyStore
from chalicelib.logs import logger


@dataclass
class SweepResult:
    expiring: int = 0
    expired: int = 0
    already_announced: int = 0


class ExpirySweep:
    def __init__(self, keys: KeyStore, events_log: EventLog, clock: Clock):
        self._keys = keys
        self._events = events_log
        self._clock = clock

    def run(self) -> SweepResult:
        now = self._clock.now()
        result = SweepResult()
        for shard in NOTICE_SHARDS:
            for notice in self._keys.due_notices(shard, now):
                self._announce(notice, result)
        logger.info(
            "expiry sweep",
            extra={
                "expiring": result.expiring,
                "expired": result.expired,
                "already_announced": result.already_announced,
            },
        )
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
