"""`key.quota_exceeded`: announced at most once per key and UTC day.

The first refusal of a day (in any container) sets a mark on the key's credential item
(`quotaNoticeOn` = the day), conditioned on the mark not being that day yet, with the event
in that write's outbox: of the containers that race, exactly one announces. Each container tries
at most once per key and day (a memo), so a key refused thousands of times makes one write
per container, not one per request. Like `lastUsedAt`, this never fails the request.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, Any

from chalicelib import items
from chalicelib.keys.model import ApiKey, usage_day
from chalicelib.table import EXISTS, update

if TYPE_CHECKING:
    from chalicelib.events.log import EventLog

MEMO_SIZE = 10_000
log = logging.getLogger("memory-auth.last-use")


class QuotaNotices:
    def __init__(self, client: Any, table_name: str, event_log: Callable[[], EventLog]):
        self._client = client
        self._table = table_name
        self._event_log = event_log  # built when the first notice is due
        self._tried: set[tuple[str, str]] = set()
        self._lock = threading.Lock()

    def announce(self, api_key: ApiKey, now: datetime) -> None:
        day = usage_day(now)
        with self._lock:
            if (api_key.id, day) in self._tried:
                return
            if len(self._tried) >= MEMO_SIZE:
                self._tried.clear()  # forgetting costs one conditional write
            self._tried.add((api_key.id, day))
        try:
            outcome = self._announce(api_key, day)
        except Exception:  # bookkeeping: whatever went wrong, the refusal stands
            outcome = "failed"
        log.info("quota exceeded", extra={"key_id": api_key.id, "outcome": outcome})

    def _announce(self, api_key: ApiKey, day: str) -> str:
        from botocore.exceptions import ClientError

        from chalicelib.events import model as events
        from chalicelib.table import commit, is_condition_failure

        event_log = self._event_log()
        event = event_log.new(
            events.KEY_QUOTA_EXCEEDED,
            api_key.owner_id,
            {"userId": api_key.owner_id, "credential": "api_key", "keyId": api_key.id},
            key_id=api_key.id,
            workspace_id=api_key.workspace_id,
            data={"requestsPerDay": api_key.requests_per_day, "day": day},
        )
        # The race this prevents: two containers refusing the key at once, both announcing.
        mark = update(
            self._table,
            items.credential(api_key.key_hash),
            "SET #quotaNoticeOn = :day",
            f"{EXISTS} AND (attribute_not_exists(#quotaNoticeOn) OR #quotaNoticeOn <> :day)",
            {"day": day},
        )
        try:
            # Commit point: the mark; the event leaves through its outbox.
            commit(self._client, mark, [event_log.member(event)])
        except ClientError as error:
            if is_condition_failure(error):
                return "already announced"
            raise
        event_log.published(event)
        return "announced"
