"""`lastUsedAt` and usage counts: recorded by the request path itself, off the path's result.

Every successful resolution of an API key (by the routes and by the data-plane authorizer;
a delegated token's on its root key) is counted in this container's memory, per key and UTC
hour. The first request for a key in each flush window (USAGE_FLUSH_SECONDS, 5 minutes by
default) sends what this container counted for it since its last flush, with `lastUsedAt`,
as one short series of single-item updates (no transaction: the global stage refuses them):
at most one series per key, window and container, none otherwise.

The series (docs/guides/usage-and-limits.md has the layout):

- the credential item first, the quota's commit point: `lastUsedAt` and `ADD` today's count
  to `requestsOn<day>` (what the quota check reads with the key), removing the previous
  days' counts, under the condition that its `lastFlush` is not this flush already;
- the usage item of each hour counted (`USAGE#<keyId>`/`HOUR#<hour>`): `ADD requests`, and
  this container's flush sequence for that key, under the condition that the item has not
  seen this sequence (or a later one) from this container yet;
- the owner item: the same day count (what a delegated token's judge reads of its root key),
  with the same `lastFlush` condition.

A flush whose outcome is unknown (a timeout: it may have been applied) is kept as it was,
sequence included, and sent again at the next window, until it is known: never dropped, so
a daily quota never fails open. Each item's condition makes the repeat a no-op where the
first send got through: the hour items are never over-counted; the day count is protected
by `lastFlush`, which names the item's latest flush (another container's flush in between
lets a repeat count again: the quota then errs on the strict side). Hours that ended more
than one window ago are no longer written to the usage items (an hour is final one window
after its end: `complete` in the usage API); their requests still count for the day.

The write has its own client: a short timeout and no retry. It never fails a request: any
failure is logged (a key id and an outcome, nothing else) and the flush is sent again.
Nothing here caches a lookup: the memo only holds counts, and revocation is still read on
every request.
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
from chalicelib.table import (
    EXISTS,
    EXPIRY_SHARD,
    TTL_ATTRIBUTE,
    Item,
    expiry_shard,
    expressions,
)

# A DynamoDB write in the same region answers in single milliseconds; half a second is ample
# and bounds what a slow store can add to a request (connect and read, one attempt).
TIMEOUT_SECONDS = 0.5
MEMO_SIZE = 10_000
FLUSH_SECONDS = 300  # the default window: one flush per key and container per 5 minutes
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
            unsent = counter.unsent  # sent again until its outcome is known: never dropped
            if unsent is None:
                counter.sequence += 1
                unsent = counter.unsent = Flush(
                    counter.sequence, last_used_window(now), counter.hours
                )
                counter.hours = {}
            unsent.attempts += 1
            return unsent

    def _send(self, api_key: ApiKey, flush: Flush, now: datetime) -> str:
        final = now - timedelta(seconds=self._flush_seconds)
        try:
            client = self._client()
            members = flush_members(self._table, api_key, flush, self.container_id, now, final)
            outcome = "written"
            for index, member in enumerate(members):
                try:
                    client.update_item(**member["Update"])
                except ClientError as error:
                    if not _condition_failed(error):
                        raise
                    if index == 0:  # the credential: this flush is there, or the key is gone
                        outcome = "already written" if _exists(client, member) else "key gone"
                        if outcome == "key gone":
                            return outcome
            return outcome
        except (ClientError, BotoCoreError):
            return "unknown"
        except Exception:  # bookkeeping: whatever went wrong, the request goes on
            return "unknown"


def _exists(client: Any, member: dict[str, Any]) -> bool:
    request = member["Update"]
    found = client.get_item(
        TableName=request["TableName"], Key=request["Key"], ConsistentRead=True,
        ProjectionExpression="#pk", ExpressionAttributeNames={"#pk": "pk"},
    )
    return "Item" in found


def flush_members(
    table: str,
    api_key: ApiKey,
    flush: Flush,
    container_id: str,
    now: datetime,
    final: datetime | None = None,
) -> list[dict[str, Any]]:
    """The writes of one flush, in order: the credential item (the quota's commit point),
    the usage item of each hour not final yet, the owner item. Each is conditional, so a
    repeated send adds nothing where the first got through."""
    marker = f"flush_{container_id}"
    token = f"{container_id}:{flush.sequence}"
    expires = epoch(now + USAGE_RETENTION)
    day = usage_day(now)
    today = flush.today(day)
    cleaned = [
        f"#{REQUESTS_ON}{usage_day(now - timedelta(days=back))}"
        for back in range(1, DAYS_CLEANED + 1)
    ]

    def day_count(item_key: Item, sets_last_use: bool) -> dict[str, Any]:
        expression = "SET #lastFlush = :token"
        values: dict[str, Any] = {"token": token}
        if sets_last_use:
            expression += ", #lastUsedAt = :window"
            values["window"] = rfc3339(flush.window)
        if today:
            expression += f" ADD #{REQUESTS_ON}{day} :today"
            values["today"] = today
        expression += " REMOVE " + ", ".join(cleaned)
        request = {
            "TableName": table,
            "Key": item_key,
            "UpdateExpression": expression,
            # The race this prevents: a send whose answer was lost, sent again, adding twice.
            "ConditionExpression": f"{EXISTS} AND (attribute_not_exists(#lastFlush)"
            " OR #lastFlush <> :token)",
        }
        return {"Update": expressions(request, values)}

    members = [day_count(items.credential(api_key.key_hash), True)]
    for hour, count in sorted(flush.hours.items()):
        if final is not None and hour + timedelta(hours=1) <= final:
            continue  # a final hour is not written late (its requests still count today)
        request: dict[str, Any] = {
            "TableName": table,
            "Key": items.usage_hour(api_key.id, hour_label(hour)),
            "UpdateExpression": f"ADD #requests :count SET #keyId = :keyId,"
            f" #{TTL_ATTRIBUTE} = :ttl, #{marker} = :sequence",
            # The race this prevents: a send whose answer was lost, sent again, adding twice.
            "ConditionExpression": f"attribute_not_exists(#{marker}) OR #{marker} < :sequence",
        }
        counted = {"count": count, "keyId": api_key.id, "ttl": expires, "sequence": flush.sequence}
        shard = expiry_shard(expires)
        if shard is not None:  # the global stage: deleted by the sweep, not by TTL
            request["UpdateExpression"] += f", #{EXPIRY_SHARD} = :{EXPIRY_SHARD}"
            counted[EXPIRY_SHARD] = shard
        members.append({"Update": expressions(request, counted)})
    members.append(day_count(items.api_key(api_key.owner_id, api_key.id), False))
    return members


def _condition_failed(error: ClientError) -> bool:
    return error.response.get("Error", {}).get("Code") == "ConditionalCheckFailedException"
