"""`lastUsedAt` and usage counts: recorded by the request path itself, off the path's result.

Every successful resolution of an API key (by the routes and by the data-plane authorizer;
a delegated token's on its root key) is counted in this container's memory, per key and UTC
hour. The first request for a key in each flush window (USAGE_FLUSH_SECONDS, 5 minutes by
default) sends what this container counted for it since its last flush, with `lastUsedAt`,
in one transaction: at most one write per key, window and container, none otherwise.

The transaction (docs/guides/usage-and-limits.md has the layout):

- the usage item of each hour counted (`USAGE#<keyId>`/`HOUR#<hour>`): `ADD requests`, and
  this container's flush sequence for that key, under the condition that the item has not
  seen this sequence (or a later one) from this container yet;
- the credential item: `lastUsedAt` and `ADD` today's count to `requestsOn<day>` (what the
  quota check reads with the key), removing the previous days' counts;
- the owner item: the same day count (what a delegated token's judge reads of its root key).

Never over-counted: a flush whose outcome is unknown (a timeout: it may have committed) is
kept as it was, sequence included, and sent again at the next window; if it had committed,
its condition fails and it is taken as done; so it is applied at most once. A flush that
still fails after `ATTEMPTS` is dropped (under-counted, never over). The loss is bounded: a
container that is discarded loses what it counted since its last flush of each key, i.e.
the requests after the first of its latest window (plus a flush that never succeeded).
Counts of an hour that ended more than one window ago are dropped rather than written late,
so that an hour is final one window after its end (`complete` in the usage API).

The write has its own client: a short timeout and no retry. It never fails a request: any
failure is logged (a key id and an outcome, nothing else) and dropped. Nothing here caches a
lookup: the memo only holds counts, and revocation is still read on every request.
"""

from __future__ import annotations

import logging
import secrets
import threading
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from chalicelib import items
from chalicelib.clock import epoch, rfc3339
from chalicelib.keys.model import (
    REQUESTS_ON,
    ApiKey,
    last_used_window,
    usage_day,
    usage_hour,
)
from chalicelib.table import EXISTS, TTL_ATTRIBUTE, expressions

# A DynamoDB write in the same region answers in single milliseconds; half a second is ample
# and bounds what a slow store can add to a request (connect and read, one attempt).
TIMEOUT_SECONDS = 0.5
MEMO_SIZE = 10_000
FLUSH_SECONDS = 300  # the default window: one flush per key and container per 5 minutes
ATTEMPTS = 3  # sends of one flush whose outcome stayed unknown, then it is dropped
USAGE_RETENTION = timedelta(days=400)
# The earlier days' counts a flush removes from the key's items (older ones, left by a key
# unused for more than a week, are never read: the check reads today's attribute only).
DAYS_CLEANED = 7

# A child of the service's logger: through Powertools' handler where the routes run, through
# the runtime's root handler in the authorizer, which never loads Powertools.
log = logging.getLogger("memory-auth.last-use")


def hour_label(hour: datetime) -> str:
    """The usage item's hour: `yyyy-mm-ddThh`, UTC."""
    return hour.strftime("%Y-%m-%dT%H")


# Plain classes, not dataclasses: this module loads with the authorizer's first decision
# (a dataclass costs 1-2 ms to build; chalicelib/records.py).
class Flush:
    """One write of counts: sent again as it is while its outcome is unknown."""

    __slots__ = ("sequence", "window", "hours", "attempts")

    def __init__(self, sequence: int, window: datetime, hours: dict[datetime, int]):
        self.sequence = sequence
        self.window = window  # the 5-minute window `lastUsedAt` records
        self.hours = hours
        self.attempts = 0

    def today(self, day: str) -> int:
        return sum(n for hour, n in self.hours.items() if usage_day(hour) == day)


class Counter:
    """What one container knows of one key."""

    __slots__ = ("hours", "window", "sequence", "unsent")

    def __init__(self) -> None:
        self.hours: dict[datetime, int] = {}  # counted, not yet in a flush
        self.window: datetime | None = None  # the flush window of this container's last flush
        self.sequence = 0
        self.unsent: Flush | None = None  # a flush whose outcome is unknown


class LastUse:
    def __init__(
        self,
        client: Callable[[], Any],
        table_name: str,
        memo_size: int = MEMO_SIZE,
        flush_seconds: int = FLUSH_SECONDS,
    ):
        self._client = client  # built on the first write: most decisions never need one
        self._table = table_name
        self._counters: dict[str, Counter] = {}
        self._memo_size = memo_size
        self._flush_seconds = flush_seconds
        self._lock = threading.Lock()
        # Names this container's flush sequences on the usage items: unique per container.
        self.container_id = secrets.token_hex(8)

    def _window(self, now: datetime) -> datetime:
        seconds = self._flush_seconds
        return datetime.fromtimestamp(int(now.timestamp()) // seconds * seconds, tz=now.tzinfo)

    def counted_today(self, api_key: ApiKey, now: datetime) -> int:
        """Today's requests of `api_key` as far as this container knows: what the item read
        says plus what this container counted and has not sent. A flush in flight is left
        out (it may already be in the item): the sum is never more than the truth."""
        day = usage_day(now)
        with self._lock:
            counter = self._counters.get(api_key.id)
            own = sum(n for h, n in counter.hours.items() if usage_day(h) == day) if counter else 0
        return api_key.requests_on(day) + own

    def record(self, api_key: ApiKey, now: datetime) -> None:
        flush = self._count(api_key.id, now)
        if flush is None:
            return
        outcome = self._send(api_key, flush, now)
        with self._lock:
            counter = self._counters.get(api_key.id)
            if counter is not None and counter.unsent is flush and outcome != "unknown":
                counter.unsent = None
        # The caller is this key's owner using it: the line names them as every line of a
        # request names its actor (the routes identify theirs only after resolution).
        actor = {"user_id": api_key.owner_id, "key_id": api_key.id}
        log.info(
            "api key use recorded",
            extra={"key_id": api_key.id, "outcome": outcome, "actor": actor},
        )

    def _count(self, key_id: str, now: datetime) -> Flush | None:
        """Counts this request; the flush to send when it is this key's first request of a
        new window in this container, else None."""
        hour, window = usage_hour(now), self._window(now)
        with self._lock:
            counter = self._counters.get(key_id)
            if counter is None:
                if len(self._counters) >= self._memo_size:
                    # Forgetting loses unsent counts (under-counted, never over).
                    self._counters.clear()
                counter = self._counters[key_id] = Counter()
            counter.hours[hour] = counter.hours.get(hour, 0) + 1
            if counter.window is not None and counter.window >= window:
                return None
            counter.window = window
            # An hour is final one window after its end: older counts are not written late.
            final = now - timedelta(seconds=self._flush_seconds)
            unsent = counter.unsent
            if unsent is not None and (
                unsent.attempts >= ATTEMPTS
                or any(h + timedelta(hours=1) <= final for h in unsent.hours)
            ):
                unsent = counter.unsent = None  # dropped: under-counted, never over
            if unsent is None:
                counter.sequence += 1
                hours = {h: n for h, n in counter.hours.items() if h + timedelta(hours=1) > final}
                unsent = counter.unsent = Flush(counter.sequence, last_used_window(now), hours)
                counter.hours = {}
            unsent.attempts += 1
            return unsent

    def _send(self, api_key: ApiKey, flush: Flush, now: datetime) -> str:
        try:
            self._client().transact_write_items(
                TransactItems=flush_members(
                    self._table, api_key, flush, self.container_id, now
                )
            )
            return "written"
        except ClientError as error:
            if _sequence_seen(error):
                return "already written"  # an earlier send of this very flush committed
            if _condition_failed(error):
                return "key gone"  # its items are gone: nothing to count on
            return "unknown"
        except BotoCoreError:
            return "unknown"
        except Exception:  # bookkeeping: whatever went wrong, the request goes on
            return "unknown"


def flush_members(
    table: str, api_key: ApiKey, flush: Flush, container_id: str, now: datetime
) -> list[dict[str, Any]]:
    """The transaction of one flush: the usage items first (their conditions make a repeated
    send fail as a whole), then the credential and owner items."""
    members: list[dict[str, Any]] = []
    marker = f"flush_{container_id}"
    expires = epoch(now + USAGE_RETENTION)
    for hour, count in sorted(flush.hours.items()):
        request = {
            "TableName": table,
            "Key": items.usage_hour(api_key.id, hour_label(hour)),
            "UpdateExpression": f"ADD #requests :count SET #keyId = :keyId,"
            f" #{TTL_ATTRIBUTE} = :ttl, #{marker} = :sequence",
            # The race this prevents: a send whose answer was lost, sent again, adding twice.
            "ConditionExpression": f"attribute_not_exists(#{marker}) OR #{marker} < :sequence",
        }
        counted = {"count": count, "keyId": api_key.id, "ttl": expires, "sequence": flush.sequence}
        members.append({"Update": expressions(request, counted)})
    day = usage_day(now)
    today = flush.today(day)
    cleaned = [
        f"#{REQUESTS_ON}{usage_day(now - timedelta(days=back))}"
        for back in range(1, DAYS_CLEANED + 1)
    ]
    for item_key, sets_last_use in (
        (items.credential(api_key.key_hash), True),
        (items.api_key(api_key.owner_id, api_key.id), False),
    ):
        expression = "SET #lastUsedAt = :window" if sets_last_use else ""
        values: dict[str, Any] = {"window": rfc3339(flush.window)} if sets_last_use else {}
        if today:
            expression += f" ADD #{REQUESTS_ON}{day} :today"
            values["today"] = today
        expression += " REMOVE " + ", ".join(cleaned)
        request = {
            "TableName": table,
            "Key": item_key,
            "UpdateExpression": expression.strip(),
            "ConditionExpression": EXISTS,
        }
        members.append({"Update": expressions(request, values)})
    return members


def _reasons(error: ClientError) -> list[str]:
    if error.response.get("Error", {}).get("Code") != "TransactionCanceledException":
        return []
    reasons = error.response.get("CancellationReasons") or []
    return [str(reason.get("Code") or "None") for reason in reasons]


def _sequence_seen(error: ClientError) -> bool:
    """The transaction was cancelled by a usage item's condition: this flush is there."""
    reasons = _reasons(error)
    return bool(reasons) and reasons[0] == "ConditionalCheckFailed"


def _condition_failed(error: ClientError) -> bool:
    return "ConditionalCheckFailed" in _reasons(error)
