"""The one DynamoDB table: its attribute names, item marshalling, and failure translation.

The table layout (single table, `pk`/`sk`, TTL on `ttl`) is declared in
`infra/resources.json`; these names are the code's side of the same fact, and
`tests/functional/test_infra_contract.py` holds the two together.

Items:
  USER#<userId>   KEY#<keyId>        an API key, as its owner sees it (list, get, reveal)
  CRED#<sha256>   CRED               the same key, found by the hash of its plaintext
  WS#<wsId>       WS                 a workspace
  WS#<wsId>       MEMBER#<userId>    a membership, as the workspace sees it
  USER#<userId>   WS#<wsId>          the same membership, as the member sees it
  USER#<userId>   EVT#<evtId>        an audit event of that user's log (events/store.py)

and those of the packages that keep their own (each module's docstring has the details):
  sessions/users.py, sessions/refresh.py   IDP#…, USER#…/PROFILE, REFRESH#…, RFAMILY#… (grants)
  oauth/clients.py                   OAUTHCLIENT#<clientId>      a registered MCP client
  oauth/pending.py                   OAUTHREQ#<requestId>        an authorization under way
  oauth/codes.py                     OAUTHCODE#<sha256>          an authorization code
  oauth/ratelimit.py                 DCRLIMIT#<address>          registrations per hour
  idempotency.py                     IDEMPOTENCY#<sha256>        an Idempotency-Key's result

One sparse global secondary index, `ExpiryNotices` (`noticeShard`, `noticeAt`), holds the
owner items of keys whose expiry notice is still to be made (keys/store.py).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from decimal import Decimal
from typing import Any

from boto3.dynamodb.types import Binary, TypeDeserializer, TypeSerializer
from botocore.exceptions import ClientError

from chalicelib.dependencies import failures_of
from chalicelib.dependencies import is_lost_race as is_condition_failure  # noqa: F401 (stores')
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


def user_pk(user_id: str) -> str:
    """The partition of everything a user owns: keys, memberships, profile."""
    return f"USER#{user_id}"


def get_consistent(
    client: Any, table: str, pk: str, sk: str, projection: str | None = None
) -> dict[str, Any] | None:
    """One item by its key with a strongly consistent read (never a stale revocation)."""
    request: dict[str, Any] = {"TableName": table, "Key": key(pk, sk), "ConsistentRead": True}
    if projection is not None:
        request["ProjectionExpression"] = projection
        request["ExpressionAttributeNames"] = {"#pk": PARTITION_KEY}
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


def put_if_absent(table: str, item: Item) -> dict[str, Any]:
    """A transaction member that writes a new item and never overwrites an existing one."""
    return {
        "Put": {
            "TableName": table,
            "Item": item,
            "ConditionExpression": "attribute_not_exists(#pk)",
            "ExpressionAttributeNames": {"#pk": PARTITION_KEY},
        }
    }


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
