"""Trust policies in DynamoDB, under their workspace's partition.

  WS#<ws> / TP#<policy id>     the policy (ids are ULIDs: a query lists them in creation order)
  WS#<ws> / TPCOUNT            how many the workspace has: the limit's conditional counter
  WS#<ws> / WLSEEN#<policy>#<sha256 of the workload sub>   when its last exchange was recorded

A workload token's every decision reads its policy with one strongly consistent GetItem, so a
deleted policy refuses its tokens on the very next request.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from datetime import datetime, timedelta
from types import MappingProxyType
from typing import Any

from botocore.exceptions import ClientError

from chalicelib import items
from chalicelib.clock import epoch, parse_rfc3339, rfc3339
from chalicelib.table import (
    ABSENT,
    EXISTS,
    TTL_ATTRIBUTE,
    Attribute,
    Pending,
    Shape,
    commit,
    complete,
    delete,
    get_consistent,
    give_back,
    is_condition_failure,
    put,
    put_if_absent,
    take_one,
    to_item,
    under,
    was_retried,
)
from chalicelib.workloads.model import TrustPolicy

EXCHANGE_RECORD_WINDOW = timedelta(minutes=5)


class LimitReached(Exception):
    """The workspace has as many trust policies as the stage allows (TRUST_POLICY_LIMIT)."""

    def __init__(self, limit: int):
        super().__init__(limit)
        self.limit = limit


def _moment(text: str) -> datetime:
    parsed = parse_rfc3339(text)
    assert parsed is not None  # written by rfc3339
    return parsed


def _json_object(value: Any) -> str:
    # Nested values as JSON text: the table layer marshals flat values only.
    return json.dumps(dict(value), separators=(",", ":"))


POLICY_SHAPE = Shape(
    TrustPolicy,
    [
        Attribute("policyId", "id"),
        Attribute("workspaceId", "workspace_id"),
        Attribute("name"),
        Attribute("issuer"),
        Attribute("audience"),
        Attribute("subject"),
        Attribute("claims", write=_json_object, read=json.loads, missing=MappingProxyType({})),
        Attribute("scopes", write=list, read=tuple),
        Attribute("maxLifetimeSeconds", "max_lifetime_seconds", read=int),
        Attribute("createdAt", "created_at", rfc3339, _moment),
        Attribute("createdBy", "created_by"),
    ],
)


def to_policy(values: dict[str, Any]) -> TrustPolicy:
    return POLICY_SHAPE.record(values)


def subject_digest(subject: str) -> str:
    return hashlib.sha256(subject.encode()).hexdigest()


class TrustPolicyStore:
    def __init__(self, client: Any, table_name: str, limit: int):
        self._client = client
        self._table = table_name
        self._limit = limit  # policies per workspace (TRUST_POLICY_LIMIT)

    def create(self, policy: TrustPolicy, also: Sequence[dict[str, Any] | Pending] = ()) -> None:
        """Writes the policy and `also` (its event) with the workspace's count raised; raises
        LimitReached when the count is at the limit already. The conditional counter is
        what keeps two concurrent creations from both passing a count read as one below it."""
        record = to_item(POLICY_SHAPE.values(policy))
        record.update(items.trust_policy(policy.workspace_id, policy.id))
        if not take_one(
            self._client,
            self._table,
            items.trust_policy_count(policy.workspace_id),
            "policies",
            self._limit,
        ):
            raise LimitReached(self._limit)
        try:
            # Commit point: the policy, put only if absent (the exchange reads it).
            commit(self._client, put_if_absent(self._table, record), also)
        except ClientError as error:
            if not is_condition_failure(error):
                raise
            # A fresh policy id never collides: if it is there, an earlier attempt of this
            # very write was applied and its answer lost.
            if self.get(policy.workspace_id, policy.id) is None:
                give_back(
                    self._client,
                    self._table,
                    items.trust_policy_count(policy.workspace_id),
                    "policies",
                )
                raise LimitReached(self._limit) from None
            complete(self._client, put_if_absent(self._table, record))

    def get(self, workspace_id: str, policy_id: str) -> TrustPolicy | None:
        values = get_consistent(
            self._client, self._table, items.trust_policy(workspace_id, policy_id)
        )
        return to_policy(values) if values else None

    def list(self, workspace_id: str) -> list[TrustPolicy]:
        """In creation order (the first that matches an exchange wins)."""
        found = under(
            self._client,
            self._table,
            items.workspace_pk(workspace_id),
            items.TRUST_POLICY_PREFIX,
            consistent=True,
        )
        return [to_policy(values) for values in found]

    def delete(
        self, workspace_id: str, policy_id: str, also: Sequence[dict[str, Any] | Pending] = ()
    ) -> bool:
        """True when deleted; False when there was no such policy."""
        # Commit point: the policy deleted (of two deletions, one passes); the count and the
        # event follow it.
        point = delete(self._table, items.trust_policy(workspace_id, policy_id), EXISTS)
        try:
            commit(self._client, point, also)
        except ClientError as error:
            if not is_condition_failure(error):
                raise
            return was_retried(error)  # the first attempt deleted it, its answer lost
        give_back(self._client, self._table, items.trust_policy_count(workspace_id), "policies")
        return True

    def record_exchange(
        self, policy: TrustPolicy, subject: str, now: datetime, event: Pending
    ) -> bool:
        """Stores `event` (a workload.exchanged) unless one was stored for this policy and
        workload sub in the last five minutes: True when stored. The condition on the marker
        is what keeps a CI matrix of 50 jobs exchanging at once from storing 50 events."""
        until = now + EXCHANGE_RECORD_WINDOW
        marker = to_item({"until": epoch(until), TTL_ATTRIBUTE: epoch(until)})
        marker.update(items.workload_seen(policy.workspace_id, policy.id, subject_digest(subject)))
        claim = put(self._table, marker, f"{ABSENT} OR #until <= :now", {"now": epoch(now)})
        try:
            commit(self._client, claim, [event])
        except ClientError as error:
            if not is_condition_failure(error):
                raise
            return False
        return True
