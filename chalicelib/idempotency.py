"""`Idempotency-Key`: a retried create answers what the first one did (Stripe's convention).

A client that sends `Idempotency-Key: <1-255 printable ASCII characters>` on a request that
creates something (an API key, a rotation's successor) may retry it after any failure, a
503 or an answer that never arrived: within RETENTION, the same key from the same caller
with the same request answers the original result again, and never creates a second one.
The same key with a different request is refused (422 `idempotency_key_reused`).

The record is written before the operation's commit point, with a condition that it does
not exist yet: of two concurrent requests with one key exactly one claims it and makes its
result, and the other answers that result. Nothing secret is stored here: the record
names the result's id, and the caller recovers a secret result (a key's plaintext) from
where it is kept anyway (the vault).

"The same caller" is the same user through the same credential (one API key, or any of the
user's tokens): a retry through a credential with fewer scopes never gets what a broader one
created. "The same request" is the operation, its target and the canonical JSON of the
parsed body, whatever fields the body will grow.

`IdempotencyStore.run` is the one sequence every such operation follows: look the record
up (replay, or refuse a reuse), claim the key for the new result, make it, and on a lost
claim answer the winner's result.

Items (see `items.py`):
  IDEMPOTENCY#<sha256(caller, key)>   IDEMPOTENCY   caller, fingerprint, resultId, createdAt, ttl
"""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from chalicelib import errors, items
from chalicelib.clock import epoch, parse_rfc3339, rfc3339
from chalicelib.table import (
    ABSENT,
    TTL_ATTRIBUTE,
    Item,
    delete,
    get_consistent,
    put,
    to_item,
    write_once,
)

Member = dict[str, Any]  # a write of a change (table.py)
# Claims the key for a result id before the operation's commit point (nothing to write
# with the operation itself: the empty sequence).
Recorder = Callable[[str], Sequence[Member]]

HEADER = "Idempotency-Key"
REPLAYED_HEADER = "Idempotent-Replayed"  # "true" on an answer given again
MAX_KEY_LENGTH = 255
RETENTION = timedelta(hours=24)
# How long a claimed key's result may take to appear: the operation's writes after its commit
# point, or the sweep that completes them after a crash (hourly).
PENDING = timedelta(hours=2)
_IN_PROGRESS = (
    "A request with this Idempotency-Key is still being completed; retry later with the same key."
)


def parse_key(value: str | None) -> str | None:
    """The header's key, None when absent; 400 `invalid_idempotency_key` when malformed."""
    if value is None:
        return None
    if not 1 <= len(value) <= MAX_KEY_LENGTH or not all(" " <= ch <= "~" for ch in value):
        raise errors.INVALID_IDEMPOTENCY_KEY.error()
    return value


def fingerprint(operation: str, target: str | None, body: dict[str, Any]) -> str:
    canonical = json.dumps(
        {"operation": operation, "target": target, "body": body},
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
    )
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class IdempotentRequest:
    """A request sent with an Idempotency-Key: who sent which key for what."""

    key: str
    caller: str
    fingerprint: str

    @classmethod
    def of(
        cls,
        header: str | None,
        caller: str,
        operation: str,
        target: str | None,
        body: dict[str, Any],
    ) -> IdempotentRequest | None:
        idempotency_key = parse_key(header)
        if idempotency_key is None:
            return None
        return cls(idempotency_key, caller, fingerprint(operation, target, body))

    @property
    def record_key(self) -> Item:
        # Hashed: the client's key may hold any printable character, and its length is theirs.
        scoped = f"{self.caller}\n{self.key}".encode()
        return items.idempotency_record(hashlib.sha256(scoped).hexdigest())

    def __repr__(self) -> str:  # the key is the client's: no business in logs
        return f"IdempotentRequest(caller={self.caller!r})"


class IdempotencyStore:
    def __init__(self, client: Any, table_name: str):
        self._client = client
        self._table = table_name

    def first_result(self, request: IdempotentRequest, now: datetime) -> str | None:
        """The id this caller's key first answered with, or None (never used, or older than
        24 h); 422 `idempotency_key_reused` when the key was used for another request."""
        first = self._first(request, now)
        return None if first is None else first[0]

    def claim(self, request: IdempotentRequest, result_id: str, now: datetime) -> dict[str, Any]:
        """The write that records `result_id` for this key, if no live record has it: of two
        requests with one key racing, exactly one makes it."""
        item = to_item(
            {
                "caller": request.caller,
                "fingerprint": request.fingerprint,
                "resultId": result_id,
                "createdAt": rfc3339(now),
                TTL_ATTRIBUTE: epoch(now + RETENTION),
            }
        )
        item.update(request.record_key)
        # DynamoDB's TTL deletes lazily: an expired record may still be there.
        return put(self._table, item, f"{ABSENT} OR #ttl <= :now", {"now": epoch(now)})

    def run[T](
        self,
        request: IdempotentRequest | None,
        now: Callable[[], datetime],
        replay: Callable[[str], T | None],
        commit: Callable[[Recorder], T],
        lost: type[Exception],
    ) -> tuple[T, bool]:
        """One operation made safe to retry: (its result, whether it is given again).

        1. A live record of this caller's key answers `replay(its result id)` (422 when the
           key was used for another request), and nothing runs; `replay` answers None when
           that result is not there (see 4).
        2. Else `commit` runs the operation: `record(result id)` claims the key for that
           result before the operation's commit point (one conditional write: of two
           requests with one key, exactly one claims it), so a result is never made twice.
        3. When the claim is lost, the other request's result is the answer to both. A
           refusal of the operation (4xx, or `lost`) gives the key back.
        4. A record whose result is not there (yet): its operation is still being written,
           or failed before its commit point. Within PENDING it answers 503 (retry later);
           after it, the record is given back and the operation runs again.
        """
        claimed: list[str] = []

        def record(result_id: str) -> Sequence[Member]:
            if request is None:
                return ()
            if not write_once(self._client, self.claim(request, result_id, now())):
                first = self._first(request, now())
                if first is None or first[0] != result_id:
                    raise lost(result_id)  # another request with this key claimed it first
                # Else this claim's earlier send was applied, its answer lost: it is ours.
            claimed.append(result_id)
            return ()

        first = None if request is None else self._first(request, now())
        if first is not None:
            answer = self._replay(request, first, now(), replay)
            if answer is not None:
                return answer, True
        try:
            return commit(record), False
        except lost:
            if claimed:
                self._release(request, claimed[0])
            first = None if request is None else self._first(request, now())
            if first is None or claimed:
                raise
        except errors.ServiceError as refusal:
            if claimed and refusal.status < 500:
                self._release(request, claimed[0])
            raise
        answer = self._replay(request, first, now(), replay)
        if answer is None:
            raise errors.DependencyUnavailable("DynamoDB", _IN_PROGRESS)
        return answer, True

    def _first(self, request: IdempotentRequest, now: datetime) -> tuple[str, datetime] | None:
        found = get_consistent(self._client, self._table, request.record_key)
        if found is None or found[TTL_ATTRIBUTE] <= epoch(now):
            return None
        if not hmac.compare_digest(found["fingerprint"], request.fingerprint):
            raise errors.IDEMPOTENCY_KEY_REUSED.error()
        created = parse_rfc3339(found["createdAt"])
        assert created is not None  # written by `claim`
        return str(found["resultId"]), created

    def _replay[T](
        self,
        request: IdempotentRequest | None,
        first: tuple[str, datetime],
        now: datetime,
        replay: Callable[[str], T | None],
    ) -> T | None:
        """The first result given again; None when the record is stale (its result was
        never made, and it was given back); 503 while its result may still be written."""
        result_id, claimed_at = first
        answer = replay(result_id)
        if answer is not None or request is None:
            return answer
        if now - claimed_at < PENDING:
            raise errors.DependencyUnavailable("DynamoDB", _IN_PROGRESS)
        self._release(request, result_id)
        return None

    def _release(self, request: IdempotentRequest | None, result_id: str) -> None:
        """Gives the key back, if it still names `result_id`."""
        if request is None:
            return
        gone = delete(self._table, request.record_key, "#resultId = :result", {"result": result_id})
        write_once(self._client, gone)
