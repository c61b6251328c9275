"""The one DynamoDB table: its attribute names, item marshalling, and failure translation.

The table layout (single table, `pk`/`sk`, TTL on `ttl`) is declared in
`infra/resources.json`; these names are the code's side of the same fact, and
`tests/functional/test_infra_contract.py` holds the two together.

Every item's key is built in `items.py`, the one registry of the table's items. The stores
write no expression dictionaries: they write expressions (`#attribute`, `:value`) and plain
values, and the shapes below (a query read page by page, a filtered page, the one batch
read, a change's writes and its commit point, a write whose condition decides) name and
marshal them.

One sparse global secondary index, `ExpiryNotices` (`noticeShard`, `noticeAt`), holds the
owner items of keys whose expiry notice is still to be made (keys/store.py).
"""

from __future__ import annotations

import base64
import json
import re
import time
import zlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

from boto3.dynamodb.types import Binary, TypeDeserializer, TypeSerializer
from botocore.exceptions import ClientError

from chalicelib.clock import epoch
from chalicelib.dependencies import failures_of, is_dependency_failure
from chalicelib.dependencies import is_lost_race as is_condition_failure
from chalicelib.errors import DependencyUnavailable

PARTITION_KEY = "pk"
SORT_KEY = "sk"
TTL_ATTRIBUTE = "ttl"

Item = dict[str, Any]

_SERIALIZER = TypeSerializer()
_DESERIALIZER = TypeDeserializer()


def to_item(values: dict[str, Any]) -> Item:
    """Plain values to DynamoDB's typed form. None means: leave the attribute out."""
    return {name: to_attribute(value) for name, value in values.items() if value is not None}


def to_attribute(value: Any) -> dict[str, Any]:
    attribute: dict[str, Any] = _SERIALIZER.serialize(value)
    return attribute


def from_item(item: Item) -> dict[str, Any]:
    return {name: _plain(_DESERIALIZER.deserialize(value)) for name, value in item.items()}


def _plain(value: Any) -> Any:
    """boto3's values as the code uses them: whole numbers as int (every number we store is
    one: epochs, counts), binary as bytes, lists as lists, string sets as sorted lists."""
    if isinstance(value, Decimal):
        if value != value.to_integral_value():
            raise TypeError(f"{value} is not a whole number")
        return int(value)
    if isinstance(value, Binary):
        return bytes(value.value)
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, set):
        return sorted(_plain(v) for v in value)
    return value


# -- a record's item, declared once ---------------------------------------------------
#
# Each record's mapping to its item is one `Shape`: its attributes in order, each with the
# record field it holds and how a value is written and read. Writes (`values`), reads
# (`record`) and projections (`projection`) all follow from it, so an attribute's name is
# spelled once. Plain classes: the authorizer's cold start builds the key's shape.


def _same(value: Any) -> Any:
    return value


class Attribute:
    """One attribute of an item: `name` in the item, `field` in the record (the same name
    unless given), `write`/`read` its conversions (None stays None; an item without it reads
    as `missing`). `written=False`: the item carries it, but the record's writes do not set
    it (another writer does)."""

    __slots__ = ("name", "field", "write", "read", "written", "missing")

    def __init__(
        self,
        name: str,
        field: str | None = None,
        write: Callable[[Any], Any] = _same,
        read: Callable[[Any], Any] = _same,
        written: bool = True,
        missing: Any = None,
    ):
        self.name, self.field = name, field or name
        self.write, self.read, self.written = write, read, written
        self.missing = missing


class Shape[T]:
    """A record's mapping to its item: `attributes` drive the writes, the reads and the
    projection; `build` makes the record from its fields; `derived` adds fields computed
    from the whole item (attributes whose names vary, defaults that depend on others)."""

    __slots__ = ("build", "attributes", "derived", "projection")

    def __init__(
        self,
        build: Callable[..., T],
        attributes: Sequence[Attribute],
        derived: Callable[[dict[str, Any], dict[str, Any]], dict[str, Any]] | None = None,
    ):
        self.build, self.attributes, self.derived = build, tuple(attributes), derived
        names = [a.name for a in self.attributes]
        self.projection = ", ".join(["#pk", "#sk", *(f"#{n}" for n in names)])

    def values(self, record: T) -> dict[str, Any]:
        """The record's written attributes, plain (None: left out of the item)."""
        found = {}
        for attribute in self.attributes:
            if attribute.written:
                value = getattr(record, attribute.field)
                found[attribute.name] = None if value is None else attribute.write(value)
        return found

    def record(self, values: dict[str, Any], **known: Any) -> T:
        """The record an item's plain values (`from_item`) hold; `known`: fields the item's
        key holds (a hashed code's digest), not its attributes."""
        fields = {}
        for attribute in self.attributes:
            value = values.get(attribute.name)
            fields[attribute.field] = attribute.missing if value is None else attribute.read(value)
        fields.update(known)
        if self.derived is not None:
            fields.update(self.derived(values, fields))
        return self.build(**fields)


def key(pk: str, sk: str) -> Item:
    return {PARTITION_KEY: {"S": pk}, SORT_KEY: {"S": sk}}


def get_consistent(
    client: Any, table: str, item_key: Item, projection: str | None = None
) -> dict[str, Any] | None:
    """One item by its key (`items.py`) with a strongly consistent read (never a stale
    revocation)."""
    request: dict[str, Any] = {"TableName": table, "Key": item_key, "ConsistentRead": True}
    if projection is not None:
        request.update(expressions({"ProjectionExpression": projection}))
    with dynamodb_errors():
        answer = client.get_item(**request)
    item = answer.get("Item")
    return from_item(item) if item else None


# BatchGetItem may leave keys unprocessed (throttling, or an answer over 16 MB). They are
# asked again after a short exponential backoff, a bounded number of times: the request path
# has a latency budget, and failing closed (503, or the authorizer raising) is safe.
UNPROCESSED_ATTEMPTS = 3
UNPROCESSED_BACKOFF_SECONDS = 0.025
BATCH_KEYS = 100  # BatchGetItem's most keys per request


def get_many(
    client: Any,
    table: str,
    keys: Sequence[Item],
    *,
    projection: str | None = None,
    consistent: bool = True,
) -> list[dict[str, Any] | None]:
    """Items by their keys, in the order of `keys` (None where there is no item): the one
    batch read of every store. One BatchGetItem per 100 keys (a decision's two or three
    keys: one round trip where GetItem would take one per item); unprocessed keys asked
    again after a backoff, then 503. Strongly consistent unless `consistent` is False (a
    figure, not a decision); `projection` names the attributes read (the key's own always
    come too, to place each item)."""
    found: dict[tuple[str, str], Item] = {}
    for start in range(0, len(keys), BATCH_KEYS):
        _read_batch(client, table, list(keys[start : start + BATCH_KEYS]),
                    projection, consistent, found)
    return [from_item(found[_key_of(k)]) if _key_of(k) in found else None for k in keys]


def _read_batch(
    client: Any,
    table: str,
    pending: list[Item],
    projection: str | None,
    consistent: bool,
    found: dict[tuple[str, str], Item],
) -> None:
    request: dict[str, Any] = {"ConsistentRead": consistent}
    if projection is not None:
        request["ProjectionExpression"] = f"#pk, #sk, {projection}"
        expressions(request)
    for attempt in range(UNPROCESSED_ATTEMPTS):
        if attempt:
            time.sleep(UNPROCESSED_BACKOFF_SECONDS * 2 ** (attempt - 1))
        with dynamodb_errors():
            answer = client.batch_get_item(RequestItems={table: {**request, "Keys": pending}})
        for item in answer.get("Responses", {}).get(table, []):
            found[_key_of(item)] = item
        pending = answer.get("UnprocessedKeys", {}).get(table, {}).get("Keys", [])
        if not pending:
            return
    raise DependencyUnavailable("DynamoDB")


def get_many_consistent(client: Any, table: str, keys: list[Item]) -> list[dict[str, Any] | None]:
    """`get_many`, strongly consistent, whole items (a decision's one round trip)."""
    return get_many(client, table, keys)


def _key_of(item: Item) -> tuple[str, str]:
    return item[PARTITION_KEY]["S"], item[SORT_KEY]["S"]


# -- expressions ---------------------------------------------------------------------------
#
# Every expression names an attribute `a` as `#a` and a value `v` as `:v`: the placeholders
# are derived from the expressions themselves, and values are given plain (marshalled here),
# so no store writes ExpressionAttributeNames or ExpressionAttributeValues by hand.

_NAME = re.compile(r"#([A-Za-z0-9_]+)")
_EXPRESSIONS = (
    "KeyConditionExpression",
    "FilterExpression",
    "ProjectionExpression",
    "UpdateExpression",
    "ConditionExpression",
)


def expressions(request: dict[str, Any], values: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """`request` with the names its expressions use and `values` (placeholder without its
    colon -> plain value) in DynamoDB's form."""
    used = [n for field in _EXPRESSIONS for n in _NAME.findall(request.get(field) or "")]
    if used:
        request["ExpressionAttributeNames"] = {f"#{name}": name for name in dict.fromkeys(used)}
    if values:
        request["ExpressionAttributeValues"] = {
            f":{name}": to_attribute(value) for name, value in values.items()
        }
    return request


def assignments(values: Mapping[str, Any]) -> str:
    """`#a = :a, #b = :b` for a SET clause whose values are named after their attributes."""
    return ", ".join(f"#{name} = :{name}" for name in values)


# -- writes: a change's members --------------------------------------------------------

EXISTS = "attribute_exists(#pk)"
ABSENT = "attribute_not_exists(#pk)"


def put(
    table: str, item: Item, condition: str | None = None, values: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    request: dict[str, Any] = {"TableName": table, "Item": item}
    if condition is not None:
        request["ConditionExpression"] = condition
    return {"Put": expressions(request, values)}


def put_if_absent(table: str, item: Item) -> dict[str, Any]:
    """A member that writes a new item and never overwrites an existing one."""
    return put(table, item, ABSENT)


def update(
    table: str,
    item_key: Item,
    expression: str,
    condition: str | None = None,
    values: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    request: dict[str, Any] = {"TableName": table, "Key": item_key, "UpdateExpression": expression}
    if condition is not None:
        request["ConditionExpression"] = condition
    return {"Update": expressions(request, values)}


def delete(
    table: str, item_key: Item, condition: str, values: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    request = {"TableName": table, "Key": item_key, "ConditionExpression": condition}
    return {"Delete": expressions(request, values)}


def check(
    table: str, item_key: Item, condition: str, values: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    request = {"TableName": table, "Key": item_key, "ConditionExpression": condition}
    return {"ConditionCheck": expressions(request, values)}


_SINGLE_WRITES = {"Put": "put_item", "Update": "update_item", "Delete": "delete_item"}
# A write another Region was changing at the same moment (multi-Region strong consistency):
# nothing was applied, so the write is sent once more, then the caller answers 503.
REPLICATED_WRITE_CONFLICT = "ReplicatedWriteConflictException"


def write(client: Any, member: dict[str, Any], again_if_unknown: bool = True) -> None:
    """One member (`put`, `update`, `delete`) written alone. A failed condition raises the
    ClientError (the caller settles its race), any other failure is a 503.

    Sent a second time when the first failed: a replicated write conflict (nothing was
    applied), or, with `again_if_unknown`, a failed dependency (the write may have been
    applied: its condition then fails, and that ClientError says it was sent twice, as
    botocore's own retries do: `was_retried`). Only for idempotent or conditional writes
    whose repeat the caller settles; a counter's decrement is sent once."""
    ((kind, request),) = member.items()
    if _EXPIRE_BY_SWEEP:
        request = _with_expiry_shard(kind, request)
    send = getattr(client, _SINGLE_WRITES[kind])
    with dynamodb_errors():
        try:
            send(**request)
            return
        except ClientError as error:
            code = error.response.get("Error", {}).get("Code")
            if code != REPLICATED_WRITE_CONFLICT and not (
                again_if_unknown and is_dependency_failure(error)
            ):
                raise
            unknown = code != REPLICATED_WRITE_CONFLICT
        except Exception as error:
            if not (again_if_unknown and is_dependency_failure(error)):
                raise
            unknown = True
        try:
            send(**request)
        except ClientError as error:
            if unknown and is_condition_failure(error):
                metadata = error.response.setdefault("ResponseMetadata", {})
                metadata["RetryAttempts"] = max(1, int(metadata.get("RetryAttempts", 0)))
            raise


def write_once(client: Any, member: dict[str, Any]) -> bool:
    """One member written alone: True when its condition held and the write was made, False
    when it did not (another writer won, or the item is not as required)."""
    try:
        write(client, member)
    except ClientError as error:
        if not is_condition_failure(error):
            raise
        return False
    return True


# -- commit points ---------------------------------------------------------------------
#
# No change uses a transaction (a multi-Region strongly consistent table refuses them).
# Each change is one conditional single-item write, its commit point: the item the decision
# path reads, whose condition settles the change's race. Everything else is written after
# it and is idempotent (new items are put only if absent, under ids derived from the change;
# updates set what the change set), so a retry of the change, or the sweep, completes it.
#
# Audit events leave through an outbox: the commit item carries them (`outbox`, each one
# the JSON of its item) and sits in the sparse index `Outbox` until a write after the commit
# has stored them (each put only if absent: never twice) and cleared the mark. The hourly
# sweep drains what a crash left (`drain_outbox`). A change whose commit point deletes its
# item keeps its outbox in an item of its own, written just before the delete: the sweep
# delivers it only once the deleted item is gone, and drops it if the delete never happened.

OUTBOX = "outbox"
OUTBOX_INDEX = "Outbox"
OUTBOX_SHARD = "outboxShard"
OUTBOX_AT = "outboxAt"
OUTBOX_UNLESS = "outboxUnless"  # an outbox item's: the key of the item its change deleted
SHARDS = tuple(str(shard) for shard in range(4))


class Pending:
    """A write after its change's commit point, through the commit item's outbox: a new
    item put only if absent (an audit event, a key's other item) or an update that sets what
    the change set; idempotent either way, so it is made exactly once whoever delivers it.
    `at` (when the change was made) orders the outbox in its index. (A plain class: this
    module loads on the authorizer's cold start, where a dataclass costs its build.)"""

    __slots__ = ("member", "at")

    def __init__(self, member: dict[str, Any], at: datetime):
        self.member = member
        self.at = at

    @classmethod
    def new_item(cls, table: str, item: Item, at: datetime) -> Pending:
        return cls(put_if_absent(table, item), at)


def shard_of(text: str) -> str:
    return SHARDS[zlib.crc32(text.encode()) % len(SHARDS)]


def commit(
    client: Any, point: dict[str, Any], after: Sequence[dict[str, Any] | Pending] = ()
) -> None:
    """The change whose commit point is `point` (a `put`, `update` or `delete` with its
    condition), then `after`: members written alone, in order, each idempotent (a failed
    condition means it was written before), and `Pending` items through the outbox.

    A failed condition of `point` raises the ClientError: nothing was written, the caller
    settles its race. A failure after the commit point is a 503, and the change has
    happened: a retry of it, or the sweep, completes what is missing."""
    pending = [m for m in after if isinstance(m, Pending)]
    then = [m for m in after if not isinstance(m, Pending)]
    ((kind, request),) = point.items()
    if pending and kind == "Delete":
        outbox_key = _outbox_item_key(pending)
        outbox = _outbox_values(pending)
        outbox[OUTBOX_UNLESS] = json.dumps(from_item(request["Key"]), separators=(",", ":"))
        item = to_item(outbox)
        item.update(outbox_key)
        write(client, {"Put": {"TableName": request["TableName"], "Item": item}})
        try:
            write(client, point)
        except ClientError as error:
            if is_condition_failure(error):
                _write_quietly(client, {"Delete": _keyed(request["TableName"], outbox_key)})
            raise
        _deliver(client, request["TableName"], outbox_key, pending, own_item=True)
    else:
        write(client, _with_outbox(kind, request, pending) if pending else point)
    for member in then:
        write_once(client, member)
    if pending and kind != "Delete":
        _deliver(client, request["TableName"], _key_of_request(kind, request), pending)


def committed(
    client: Any, point: dict[str, Any], after: Sequence[dict[str, Any] | Pending] = ()
) -> bool:
    """`commit`, answered as whether the change happened: False when `point`'s condition
    failed (the race is lost, nothing was written). A condition that failed on a call botocore
    sent again is the call meeting its own first attempt, applied and its answer lost: the
    change happened, and what follows it is completed here, from the item's outbox or, for a
    deletion (its item and outbox gone with it), by writing `after` again, each member only if
    absent."""
    try:
        commit(client, point, after)
    except ClientError as error:
        if not is_condition_failure(error):
            raise
        if not was_retried(error):
            return False
        if "Delete" in point:
            for member in after:
                write_once(client, member.member if isinstance(member, Pending) else member)
        else:
            complete(client, point)
    return True


def complete(client: Any, point: dict[str, Any]) -> None:
    """What follows the commit point `point`, written again from its item's outbox: for the
    retry of a change whose first attempt was applied and its answer lost (or that crashed
    after its commit point). Nothing when the outbox was delivered already."""
    ((kind, request),) = point.items()
    holder = _key_of_request(kind, request)
    found = get_consistent(client, request["TableName"], holder)
    if found and found.get(OUTBOX):
        pending = [
            Pending(_from_jsonable(json.loads(e)), _outbox_time(found[OUTBOX_AT]))
            for e in found[OUTBOX]
        ]
        _deliver(client, request["TableName"], holder, pending)


def _keyed(table: str, item_key: Item) -> dict[str, Any]:
    return {"TableName": table, "Key": item_key}


def _write_quietly(client: Any, member: dict[str, Any]) -> None:
    with suppress(ClientError, DependencyUnavailable):
        write(client, member)


def _outbox_item_key(pending: Sequence[Pending]) -> Item:
    first = _key_of_member(pending[0].member)
    return key(OUTBOX_PK, f"{first[PARTITION_KEY]['S']}#{first[SORT_KEY]['S']}")


OUTBOX_PK = "OUTBOX"


def _outbox_values(pending: Sequence[Pending]) -> dict[str, Any]:
    entries = [json.dumps(_jsonable(p.member), separators=(",", ":")) for p in pending]
    return {
        OUTBOX: entries,
        OUTBOX_SHARD: shard_of(entries[0]),
        OUTBOX_AT: min(p.at for p in pending).astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
    }


def _jsonable(value: Any) -> Any:
    """A member in DynamoDB's typed form, as JSON can hold it (binary in base64)."""
    if isinstance(value, dict):
        if set(value) == {"B"}:
            return {"B64": base64.b64encode(value["B"]).decode()}
        return {name: _jsonable(v) for name, v in value.items()}
    if isinstance(value, list):
        return [_jsonable(v) for v in value]
    return value


def _from_jsonable(value: Any) -> Any:
    if isinstance(value, dict):
        if set(value) == {"B64"}:
            return {"B": base64.b64decode(value["B64"])}
        return {name: _from_jsonable(v) for name, v in value.items()}
    if isinstance(value, list):
        return [_from_jsonable(v) for v in value]
    return value


def _with_outbox(kind: str, request: dict[str, Any], pending: Sequence[Pending]) -> dict[str, Any]:
    outbox = _outbox_values(pending)
    request = dict(request)
    if kind == "Put":
        request["Item"] = {**request["Item"], **to_item(outbox)}
        return {"Put": request}
    # An update appends to what an earlier change may have left there (not delivered yet).
    ours = (
        f"#{OUTBOX} = list_append(if_not_exists(#{OUTBOX}, :outboxNone), :{OUTBOX}),"
        f" #{OUTBOX_SHARD} = :{OUTBOX_SHARD},"
        f" #{OUTBOX_AT} = if_not_exists(#{OUTBOX_AT}, :{OUTBOX_AT})"
    )
    expression = request["UpdateExpression"]
    if re.search(r"\bSET\b", expression):
        expression = re.sub(r"\bSET\b", f"SET {ours},", expression, count=1)
    else:
        expression = f"SET {ours} {expression}"
    request["UpdateExpression"] = expression
    names = dict(request.get("ExpressionAttributeNames") or {})
    names.update({f"#{n}": n for n in (OUTBOX, OUTBOX_SHARD, OUTBOX_AT)})
    request["ExpressionAttributeNames"] = names
    values = dict(request.get("ExpressionAttributeValues") or {})
    values.update({f":{n}": to_attribute(v) for n, v in outbox.items()})
    values[":outboxNone"] = {"L": []}
    request["ExpressionAttributeValues"] = values
    return {"Update": request}


def _key_of_member(member: dict[str, Any]) -> Item:
    ((kind, request),) = member.items()
    return _key_of_request(kind, request)


def _key_of_request(kind: str, request: dict[str, Any]) -> Item:
    if kind == "Put":
        return key(request["Item"][PARTITION_KEY]["S"], request["Item"][SORT_KEY]["S"])
    return dict(request["Key"])


def _deliver(
    client: Any, table: str, holder: Item, pending: Sequence[Pending], own_item: bool = False
) -> list[Item]:
    """Makes the outbox's writes (each idempotent) and clears the mark: the new items this
    call stored, in order (those an earlier delivery stored are not stored again)."""
    stored = [
        p.member["Put"]["Item"]
        for p in pending
        if write_once(client, p.member) and "Put" in p.member
    ]
    if own_item:
        _write_quietly(client, {"Delete": _keyed(table, holder)})
    else:
        # Cleared only if no later change appended to it meanwhile: the sweep delivers both.
        clear = update(
            table,
            holder,
            f"REMOVE #{OUTBOX}, #{OUTBOX_SHARD}, #{OUTBOX_AT}",
            f"attribute_exists(#{OUTBOX}) AND size(#{OUTBOX}) = :count",
            {"count": len(pending)},
        )
        write_once(client, clear)
    return stored


def _outbox_time(text: str) -> datetime:
    return datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)


def drain_outbox(client: Any, table: str, before: datetime) -> list[Item]:
    """What crashes left in the outbox, delivered (the sweep): every outbox whose first
    entry is older than `before`, read from the sparse index (one Query per shard). The
    new items this call stored (each stored exactly once, whoever delivers it)."""
    stored: list[Item] = []
    for shard in SHARDS:
        found = query(
            client,
            table,
            f"#{OUTBOX_SHARD} = :shard AND #{OUTBOX_AT} < :before",
            {"shard": shard, "before": before.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")},
            index=OUTBOX_INDEX,
        )
        for values in found:
            holder = key(values[PARTITION_KEY], values[SORT_KEY])
            pending = [
                Pending(_from_jsonable(json.loads(e)), _outbox_time(values[OUTBOX_AT]))
                for e in values[OUTBOX]
            ]
            unless = values.get(OUTBOX_UNLESS)
            if unless is not None:
                deleted = json.loads(unless)
                gone = key(deleted[PARTITION_KEY], deleted[SORT_KEY])
                if get_consistent(client, table, gone, "#pk") is not None:
                    # The delete it announces never happened (a crash before it): no event.
                    _write_quietly(client, {"Delete": _keyed(table, holder)})
                    continue
            stored += _deliver(client, table, holder, pending, own_item=unless is not None)
    return stored


# -- counters: maximum counts ----------------------------------------------------------
#
# A maximum count (keys per owner, workspaces per owner, members per workspace, trust
# policies per workspace) is a counter item taken before the commit point with one
# conditional ADD: of N+1 concurrent creations at N-1 used, exactly one takes the last one.
# A creation that fails gives it back; a crash in between leaves it taken (the limit errs
# on the strict side, never the loose one).


def take_one(
    client: Any,
    table: str,
    counter: Item,
    attribute: str,
    limit: int,
    initial: Callable[[], int] | None = None,
) -> bool:
    """One more counted, if fewer than `limit` are: True when taken. `initial` counts what
    there is when the counter item does not exist yet (things made before it existed): read
    once, then the counter holds it."""
    if initial is None:
        taken = update(
            table,
            counter,
            f"ADD #{attribute} :one",
            f"attribute_not_exists(#{attribute}) OR #{attribute} < :max",
            {"one": 1, "max": limit},
        )
        return write_once(client, taken)
    taken = update(
        table,
        counter,
        f"ADD #{attribute} :one",
        f"attribute_exists(#{attribute}) AND #{attribute} < :max",
        {"one": 1, "max": limit},
    )
    if write_once(client, taken):
        return True
    if (get_consistent(client, table, counter) or {}).get(attribute) is None:
        # The first count; a concurrent first count is as good (if_not_exists keeps it).
        start = update(
            table, counter, f"SET #{attribute} = if_not_exists(#{attribute}, :counted)",
            values={"counted": initial()},
        )
        write(client, start)
    # Asked again either way: a counter found made was at the limit, or was made by a
    # concurrent first count after the write above failed (then there may be room).
    return write_once(client, taken)


def give_back(client: Any, table: str, counter: Item, attribute: str) -> None:
    """One fewer counted (never below zero)."""
    given = update(
        table,
        counter,
        f"ADD #{attribute} :less",
        f"attribute_exists(#{attribute}) AND #{attribute} > :none",
        {"less": -1, "none": 0},
    )
    try:
        write(client, given, again_if_unknown=False)  # sent twice, it would count two
    except ClientError as error:
        if not is_condition_failure(error):
            raise


class WindowCounter:
    """At most `limit` calls per name (a source address) and fixed window of `window`
    seconds: a rate limit. Each call is counted and checked by one conditional update of the
    window's item (`item(name, window start)`), atomic, so concurrent calls cannot overshoot;
    its `ttl` removes it one window after it ends."""

    def __init__(
        self,
        client: Any,
        table: str,
        item: Callable[[str, int], Item],
        limit: int,
        window: int,
    ):
        self._client = client
        self._table = table
        self._item = item
        self._limit = limit
        self._window = window

    def admit(self, name: str, now: datetime) -> int | None:
        """None when this call may go ahead, else the seconds to wait."""
        seconds = epoch(now)
        start = seconds - seconds % self._window
        counted = update(
            self._table,
            self._item(name, start),
            "ADD #count :one SET #ttl = :ttl",
            # Counted and checked in one write: no read-then-write race.
            "attribute_not_exists(#count) OR #count < :limit",
            {"one": 1, "limit": self._limit, "ttl": start + 2 * self._window},
        )
        if write_once(self._client, counted):
            return None
        return max(1, start + self._window - seconds)


# -- expiry without TTL (the global stage) ---------------------------------------------
#
# A multi-Region strongly consistent table has no TTL: there, every write of an item with a
# `ttl` also gives it `ttlShard`, which puts it in the sparse index `Expiry` (`ttlShard`,
# `ttl`), and the hourly sweep deletes what is past its `ttl` from that index, never
# scanning the table. Single-Region stages leave the index empty and keep DynamoDB's TTL.
# Every read treats an item past its `ttl` as gone in both.

EXPIRY_INDEX = "Expiry"
EXPIRY_SHARD = "ttlShard"
_EXPIRE_BY_SWEEP = False


def expire_by_sweep(enabled: bool) -> None:
    """The stage deletes expired items in its sweep (the global stage, EXPIRY_BY_SWEEP)."""
    global _EXPIRE_BY_SWEEP
    _EXPIRE_BY_SWEEP = enabled


def expiry_shard(ttl: int) -> str | None:
    """The `Expiry` index's shard of an item expiring at `ttl`: in the global stage only
    (None elsewhere, where DynamoDB's TTL deletes it and the index stays empty)."""
    return shard_of(str(ttl)) if _EXPIRE_BY_SWEEP else None


def _with_expiry_shard(kind: str, request: dict[str, Any]) -> dict[str, Any]:
    if kind == "Put" and TTL_ATTRIBUTE in request["Item"]:
        ttl = request["Item"][TTL_ATTRIBUTE]["N"]
        return {**request, "Item": {**request["Item"], EXPIRY_SHARD: {"S": shard_of(ttl)}}}
    values = request.get("ExpressionAttributeValues") or {}
    expression = request.get("UpdateExpression") or ""
    if kind == "Update" and f"#{TTL_ATTRIBUTE} = :" in expression and ":ttlShard" not in values:
        written = re.search(rf"#{TTL_ATTRIBUTE} = (:[A-Za-z0-9_]+)", expression)
        if written is None or written.group(1) not in values:
            return request
        shard = shard_of(values[written.group(1)]["N"])
        ours = f"SET #{EXPIRY_SHARD} = :{EXPIRY_SHARD},"
        expression = re.sub(r"\bSET\b", ours, expression, count=1)
        return {
            **request,
            "UpdateExpression": expression,
            "ExpressionAttributeNames": {
                **(request.get("ExpressionAttributeNames") or {}),
                f"#{EXPIRY_SHARD}": EXPIRY_SHARD,
            },
            "ExpressionAttributeValues": {**values, f":{EXPIRY_SHARD}": {"S": shard}},
        }
    return request


def delete_expired(client: Any, table: str, now_epoch: int) -> int:
    """Deletes every item past its `ttl` (the sparse index `Expiry`, one Query per shard),
    each only if it is still past its ttl (a write may have extended it): how many."""
    deleted = 0
    for shard in SHARDS:
        found = query(
            client,
            table,
            f"#{EXPIRY_SHARD} = :shard AND #{TTL_ATTRIBUTE} <= :now",
            {"shard": shard, "now": now_epoch},
            index=EXPIRY_INDEX,
        )
        for values in found:
            gone = delete(
                table,
                key(values[PARTITION_KEY], values[SORT_KEY]),
                f"#{TTL_ATTRIBUTE} <= :now",
                {"now": now_epoch},
            )
            deleted += write_once(client, gone)
    return deleted


# -- queries -------------------------------------------------------------------------------


def query(
    client: Any,
    table: str,
    key_condition: str,
    values: Mapping[str, Any],
    *,
    index: str | None = None,
    projection: str | None = None,
    consistent: bool = False,
    newest_first: bool = False,
    page_size: int | None = None,
    start: Item | None = None,
) -> Iterator[dict[str, Any]]:
    """The items of one key condition, page after page as they are consumed: a caller that
    stops early asks for no further page."""
    request: dict[str, Any] = {"TableName": table, "KeyConditionExpression": key_condition}
    if index is not None:
        request["IndexName"] = index
    if projection is not None:
        request["ProjectionExpression"] = projection
    if consistent:
        request["ConsistentRead"] = True
    if newest_first:
        request["ScanIndexForward"] = False
    if page_size is not None:
        request["Limit"] = page_size
    expressions(request, values)
    for found, _ in _answers(client, request, start):
        yield from found


def _answers(
    client: Any, request: dict[str, Any], start: Item | None
) -> Iterator[tuple[list[dict[str, Any]], bool]]:
    """Each Query call's items, and whether more follow, as they are consumed."""
    while True:
        if start:
            request["ExclusiveStartKey"] = start
        with dynamodb_errors():
            answer = client.query(**request)
        start = answer.get("LastEvaluatedKey")
        yield [from_item(item) for item in answer.get("Items", [])], bool(start)
        if not start:
            return


def under(
    client: Any, table: str, pk: str, prefix: str, **options: Any
) -> Iterator[dict[str, Any]]:
    """The items of partition `pk` whose sort key starts with `prefix` (`query`'s options)."""
    return query(
        client,
        table,
        "#pk = :pk AND begins_with(#sk, :prefix)",
        {"pk": pk, "prefix": prefix},
        **options,
    )


def newest_page[T](
    client: Any,
    table: str,
    pk: str,
    prefix: str,
    *,
    read: Callable[[dict[str, Any]], T],
    keep: Callable[[T], bool],
    limit: int,
    start: Item | None,
    projection: str | None = None,
) -> list[T]:
    """A list's page: newest first (ids are ULIDs), after `start` (the cursor's item), the
    first `limit` items under `prefix` that `keep` accepts. Strongly consistent: a list read
    right after a change shows it. Read 100 items at a time, and no further than needed."""
    found, _ = newest_page_within(
        client,
        table,
        pk,
        prefix,
        read=read,
        keep=keep,
        limit=limit,
        start=start,
        reads=None,
        projection=projection,
    )
    return found


def newest_page_within[T](
    client: Any,
    table: str,
    pk: str,
    prefix: str,
    *,
    read: Callable[[dict[str, Any]], T],
    keep: Callable[[T], bool],
    limit: int,
    start: Item | None,
    reads: int | None,
    projection: str | None = None,
) -> tuple[list[T], T | None]:
    """`newest_page` with at most `reads` Query calls (of 100 items; None: no bound), and
    where the next page starts: the page, and the item it ends after (its last item when it
    holds `limit`; the last item read when the bound stopped it short with more to read;
    None once the partition is read to its end). A page stopped by the bound may hold fewer
    than `limit` items, or none."""
    request: dict[str, Any] = {
        "TableName": table,
        "KeyConditionExpression": "#pk = :pk AND begins_with(#sk, :prefix)",
        "ConsistentRead": True,
        "ScanIndexForward": False,
        "Limit": 100,
    }
    if projection is not None:
        request["ProjectionExpression"] = projection
    expressions(request, {"pk": pk, "prefix": prefix})
    kept: list[T] = []
    last: T | None = None
    for done, (found, more) in enumerate(_answers(client, request, start), start=1):
        for values in found:
            last = read(values)
            if keep(last):
                kept.append(last)
                if len(kept) == limit:
                    return kept, last
        if not more:
            return kept, None
        if reads is not None and done >= reads:
            return kept, last
    return kept, None


@contextmanager
def dynamodb_errors() -> Iterator[None]:
    """Any failure of DynamoDB itself (after botocore's retries) becomes a 503.

    Condition failures are not failures of the dependency: callers catch those first.
    """
    with failures_of("DynamoDB"):
        yield


def was_retried(error: ClientError) -> bool:
    """True when botocore sent the failed call more than once: an earlier attempt may have
    been applied (its answer lost), so a condition failure may be the call meeting itself."""
    return int(error.response.get("ResponseMetadata", {}).get("RetryAttempts", 0)) > 0
