"""The one DynamoDB table: its attribute names, item marshalling, and failure translation.

The table layout (single table, `pk`/`sk`, TTL on `ttl`) is declared in
`infra/resources.json`; these names are the code's side of the same fact, and
`tests/functional/test_infra_contract.py` holds the two together.

Every item's key is built in `items.py`, the one registry of the table's items. The stores
write no expression dictionaries: they write expressions (`#attribute`, `:value`) and plain
values, and the shapes below (a query read page by page, a filtered page, transaction
members, a write whose condition decides) name and marshal them.

One sparse global secondary index, `ExpiryNotices` (`noticeShard`, `noticeAt`), holds the
owner items of keys whose expiry notice is still to be made (keys/store.py).
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from decimal import Decimal
from itertools import islice
from typing import Any

from boto3.dynamodb.types import Binary, TypeDeserializer, TypeSerializer
from botocore.exceptions import ClientError

from chalicelib.dependencies import failures_of
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


def get_many_consistent(client: Any, table: str, keys: list[Item]) -> list[dict[str, Any] | None]:
    """Items by their keys in one strongly consistent BatchGetItem: one round trip where
    GetItem would take one per item. In the order of `keys`; None where there is no item."""
    found: dict[tuple[str, str], Item] = {}
    pending = keys
    for attempt in range(UNPROCESSED_ATTEMPTS):
        if attempt:
            time.sleep(UNPROCESSED_BACKOFF_SECONDS * 2 ** (attempt - 1))
        with dynamodb_errors():
            answer = client.batch_get_item(
                RequestItems={table: {"Keys": pending, "ConsistentRead": True}}
            )
        for item in answer.get("Responses", {}).get(table, []):
            found[_key_of(item)] = item
        pending = answer.get("UnprocessedKeys", {}).get(table, {}).get("Keys", [])
        if not pending:
            return [
                from_item(found[_key_of(k)]) if _key_of(k) in found else None for k in keys
            ]
    raise DependencyUnavailable("DynamoDB")


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


# -- transaction members (and their single-item twins) ------------------------------------

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
    """A transaction member that writes a new item and never overwrites an existing one."""
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


def write(client: Any, member: dict[str, Any]) -> None:
    """One member (`put`, `update`, `delete`) written alone. A failed condition raises the
    ClientError (the caller settles its race), any other failure is a 503."""
    ((kind, request),) = member.items()
    with dynamodb_errors():
        getattr(client, _SINGLE_WRITES[kind])(**request)


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


def transact(client: Any, members: Sequence[dict[str, Any]]) -> None:
    """One TransactWriteItems; a failed condition raises the ClientError (the caller settles
    its race), any other failure is a 503."""
    with dynamodb_errors():
        client.transact_write_items(TransactItems=list(members))


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
    while True:
        if start:
            request["ExclusiveStartKey"] = start
        with dynamodb_errors():
            answer = client.query(**request)
        yield from (from_item(item) for item in answer.get("Items", []))
        start = answer.get("LastEvaluatedKey")
        if not start:
            return


def under(
    client: Any, table: str, pk: str, prefix: str, **options: Any
) -> Iterator[dict[str, Any]]:
    """The items of partition `pk` whose sort key starts with `prefix` (`query`'s options)."""
    return query(
        client, table, "#pk = :pk AND begins_with(#sk, :prefix)", {"pk": pk, "prefix": prefix},
        **options,
    )


def page[T](items: Iterable[T], keep: Callable[[T], bool], limit: int) -> list[T]:
    """The first `limit` of `items` that `keep` accepts, reading no further than needed."""
    return list(islice(filter(keep, items), limit))


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
    found = under(
        client, table, pk, prefix, start=start, projection=projection,
        newest_first=True, consistent=True, page_size=100,
    )
    return page(map(read, found), keep, limit)


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
