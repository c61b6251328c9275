"""`Idempotency-Key`: a retried create answers what the first one did (Stripe's convention).

A client that sends `Idempotency-Key: <1-255 printable ASCII characters>` on a request that
creates something (an API key, a rotation's successor) may retry it after any failure, a
503 or an answer that never arrived: within RETENTION, the same key from the same caller
with the same request answers the original result again, and never creates a second one.
The same key with a different request is refused (422 `idempotency_key_reused`).

The record is written in the same DynamoDB transaction as what it records, with a
condition that it does not exist yet: two concurrent requests with one key cannot both
commit, and the loser answers the winner's result. Nothing secret is stored here: the record
names the result's id, and the caller recovers a secret result (a key's plaintext) from
where it is kept anyway (the vault).

"The same caller" is the same user through the same credential (one API key, or any of the
user's tokens): a retry through a credential with fewer scopes never gets what a broader one
created. "The same request" is the operation, its target and the canonical JSON of the
parsed body, whatever fields the body will grow.

`IdempotencyStore.run` is the one sequence every such operation follows: look the record
up (replay, or refuse a reuse), run the business transaction with the record's put in it,
and on a lost race answer the winner's result.

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
from chalicelib.clock import epoch, rfc3339
from chalicelib.table import ABSENT, TTL_ATTRIBUTE, Item, get_consistent, put, to_item

Member = dict[str, Any]  # a member of a TransactWriteItems
# What the business transaction writes besides its own items: the record of its result.
Recorder = Callable[[str], Sequence[Member]]

HEADER = "Idempotency-Key"
REPLAYED_HEADER = "Idempotent-Replayed"  # "true" on an answer given again
MAX_KEY_LENGTH = 255
RETENTION = timedelta(hours=24)


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
        found = get_consistent(self._client, self._table, request.record_key)
        if found is None or found[TTL_ATTRIBUTE] <= epoch(now):
            return None
        if not hmac.compare_digest(found["fingerprint"], request.fingerprint):
            raise errors.IDEMPOTENCY_KEY_REUSED.error()
        return str(found["resultId"])

    def claim(self, request: IdempotentRequest, result_id: str, now: datetime) -> dict[str, Any]:
        """The transaction member that records `result_id` for this key, if no live record
        has it: of two requests with one key racing, exactly one transaction commits."""
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
        replay: Callable[[str], T],
        commit: Callable[[Recorder], T],
        lost: type[Exception],
    ) -> tuple[T, bool]:
        """One operation made safe to retry: (its result, whether it is given again).

        1. A live record of this caller's key answers `replay(its result id)` (422 when the
           key was used for another request), and nothing runs.
        2. Else `commit` runs the operation: it writes `record(result id)`'s members in its
           own transaction, so the record exists if and only if the operation committed.
        3. When that transaction fails with `lost`, a concurrent request with the same key
           may have committed first: its result is the answer to both. Without a record
           (or without a key), `lost` propagates for the caller to answer.
        """

        def record(result_id: str) -> Sequence[Member]:
            return () if request is None else (self.claim(request, result_id, now()),)

        first = None if request is None else self.first_result(request, now())
        if first is not None:
            return replay(first), True
        try:
            return commit(record), False
        except lost:
            first = None if request is None else self.first_result(request, now())
            if first is None:
                raise
        return replay(first), True
