"""Writes per change: what a key creation, a rotation and a sign-in write, in capacity units.

In-process (the functional tier's moto, chalice's test client): each change is made through
the API and every DynamoDB write it sends is recorded. A write's capacity is DynamoDB's rule:
one write capacity unit per started KB of the item (for an update, the larger of the item
before and after; a delete, the item deleted), twice that inside a transaction; each global
secondary index the item is in before or after the write costs one more write (its
projections here are small: KEYS_ONLY or a few attributes). Item sizes follow DynamoDB's
sizing (attribute names plus values).

    python -m bench.writes            # the table of docs/performance.md, "Writes per change"
"""

from __future__ import annotations

import importlib
import json
import math
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

# (index name, its key attributes): an item with both is in the index.
INDEXES = (
    ("ExpiryNotices", ("noticeShard", "noticeAt")),
    ("Outbox", ("outboxShard", "outboxAt")),
    ("Expiry", ("ttlShard", "ttl")),
)


def attribute_size(value: dict[str, Any]) -> int:
    ((kind, content),) = value.items()
    if kind == "S":
        return len(content.encode())
    if kind == "N":
        digits = len(str(Decimal(content)).replace("-", "").replace(".", "").lstrip("0"))
        return math.ceil(max(digits, 1) / 2) + 1
    if kind == "B":
        return len(content)
    if kind in ("BOOL", "NULL"):
        return 1
    if kind == "L":
        return 3 + sum(1 + attribute_size(v) for v in content)
    if kind == "M":
        return 3 + sum(len(k.encode()) + 1 + attribute_size(v) for k, v in content.items())
    if kind in ("SS", "NS", "BS"):
        return sum(attribute_size({kind[0]: v}) for v in content)
    raise ValueError(kind)


def item_size(item: dict[str, Any] | None) -> int:
    if not item:
        return 0
    return sum(len(name.encode()) + attribute_size(value) for name, value in item.items())


def indexes_of(item: dict[str, Any] | None) -> set[str]:
    return {name for name, keys in INDEXES if item and all(k in item for k in keys)}


@dataclass
class Tally:
    calls: list[str] = field(default_factory=list)
    units: float = 0
    index_writes: int = 0


class Recorder:
    """Every write of the client, with the items before and after it."""

    def __init__(self, client: Any, table: str):
        self._client = client
        self._table = table
        self.tally = Tally()
        self._before: list[tuple[str, dict[str, Any], dict[str, Any] | None]] = []
        events = client.meta.events
        events.register("provide-client-params.dynamodb.*", self._about_to_write)
        events.register("after-call.dynamodb.*", self._written)

    def _get(self, item_key: dict[str, Any]) -> dict[str, Any] | None:
        answer = self._client.get_item(TableName=self._table, Key=item_key, ConsistentRead=True)
        found: dict[str, Any] | None = answer.get("Item")
        return found

    def _targets(self, operation: str, params: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
        if operation in ("PutItem", "UpdateItem", "DeleteItem"):
            key = params.get("Key") or {k: params["Item"][k] for k in ("pk", "sk")}
            return [(operation, key)]
        if operation == "TransactWriteItems":
            found = []
            for member in params["TransactItems"]:
                ((kind, request),) = member.items()
                if kind == "ConditionCheck":
                    continue
                key = request.get("Key") or {k: request["Item"][k] for k in ("pk", "sk")}
                found.append((f"Transact{kind}", key))
            return found
        return []

    def _about_to_write(self, params: dict[str, Any], model: Any, **_: Any) -> None:
        if getattr(self, "_reading", False):
            return
        self._reading = True
        try:
            self._before = [(kind, key, self._get(key)) for kind, key in
                            self._targets(model.name, params)]
        finally:
            self._reading = False

    def _written(self, model: Any, parsed: dict[str, Any], **_: Any) -> None:
        if getattr(self, "_reading", False) or not self._before:
            return
        self._reading = True
        try:
            for kind, key, before in self._before:
                after = self._get(key)
                size = max(item_size(before), item_size(after))
                if "Error" in parsed:
                    continue
                units = max(1, math.ceil(size / 1024))
                self.tally.units += units * (2 if kind.startswith("Transact") else 1)
                self.tally.index_writes += len(indexes_of(before) | indexes_of(after))
                self.tally.calls.append(kind)
            self._before = []
        finally:
            self._reading = False


def measure() -> dict[str, dict[str, Any]]:
    import boto3
    from chalice.test import Client
    from moto import mock_aws

    from chalicelib import runtime
    from chalicelib.clock import FrozenClock
    from chalicelib.runtime import Services
    from local.resources import create_all
    from tests.functional.conftest import Api, one_session, test_settings
    # Not type-checked from here (the tests' helpers are checked with the tests).
    trust = importlib.import_module("tests.functional.oauth").trust
    from tests.oidc_issuer import FakeIssuer

    results: dict[str, dict[str, Any]] = {}
    with mock_aws():
        boto3.DEFAULT_SESSION = one_session()
        services = Services(test_settings(), FrozenClock())
        create_all(services.dynamodb, services.kms, "dev", services.events_client)
        runtime.use(services)
        issuer = FakeIssuer()
        trust(services, issuer)
        from app import app

        with Client(app) as client:
            api = Api(client, services)
            token = api.token("usr_bench")
            api.create_key(token)  # the owner's first key (a first count, where there is one)
            clients = {id(c): c for c in (services.dynamodb, services.last_use_dynamodb)}
            recorders = [Recorder(c, services.settings.table_name) for c in clients.values()]

            def change(name: str, make: Callable[[], Any]) -> Any:
                for recorder in recorders:
                    recorder.tally = Tally()
                made = make()
                tallies = [r.tally for r in recorders]
                results[name] = {
                    "writes": sum(len(t.calls) for t in tallies),
                    "writeCapacityUnits": sum(t.units for t in tallies),
                    "indexWrites": sum(t.index_writes for t in tallies),
                    "calls": [c for t in tallies for c in t.calls],
                }
                return made

            key = change("key creation", lambda: api.create_key(token))
            change(
                "rotation",
                lambda: api.call("POST", f"/v1/auth/api-keys/{key['id']}/rotate", token),
            )
            sent = {"id_token": issuer.id_token("bench-subject")}
            change("first sign-in", lambda: api.call("POST", "/v1/auth/exchange", body=sent))
            sent = {"id_token": issuer.id_token("bench-subject")}
            change("sign-in", lambda: api.call("POST", "/v1/auth/exchange", body=sent))
        runtime.use(None)
    return results


def main() -> int:
    results = measure()
    json.dump(results, sys.stdout, indent=2)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
