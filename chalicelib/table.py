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

and those of the packages that keep their own (each module's docstring has the details):
  login/users.py, login/refresh.py   IDP#…, USER#…/PROFILE, REFRESH#…, RFAMILY#… (grants)
  oauth/clients.py                   OAUTHCLIENT#<clientId>      a registered MCP client
  oauth/pending.py                   OAUTHREQ#<requestId>        an authorization under way
  oauth/codes.py                     OAUTHCODE#<sha256>          an authorization code
  oauth/ratelimit.py                 DCRLIMIT#<address>          registrations per hour
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from decimal import Decimal
from typing import Any

from boto3.dynamodb.types import Binary, TypeDeserializer, TypeSerializer
from botocore.exceptions import BotoCoreError, ClientError

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


def cancellation_reasons(error: ClientError) -> list[str]:
    return [r.get("Code", "None") for r in error.response.get("CancellationReasons", [])]


# Reasons for which DynamoDB cancels a transaction because of what other writers did: a
# condition that no longer holds, or another transaction on one of the items at the same
# moment (TransactionConflict, which botocore does not retry). Either way the caller lost a
# race and must re-read; neither is a failure of DynamoDB itself.
_LOST_RACE = {"ConditionalCheckFailed", "TransactionConflict"}

# Errors in what we sent (an oversized or unencodable value): our bug or an input we failed
# to refuse earlier. Retrying cannot help, so they must not be answered as a 503.
_REQUEST_ERRORS = {"ValidationException", "SerializationException"}


def is_condition_failure(error: ClientError) -> bool:
    """True when a conditional write or transaction lost a race (see _LOST_RACE)."""
    code = error.response.get("Error", {}).get("Code")
    if code == "ConditionalCheckFailedException":
        return True
    if code == "TransactionCanceledException":
        reasons = set(cancellation_reasons(error))
        return bool(reasons & _LOST_RACE) and reasons <= _LOST_RACE | {"None"}
    return False


@contextmanager
def dynamodb_errors() -> Iterator[None]:
    """Any failure of DynamoDB itself (after botocore's retries) becomes a 503.

    Condition failures are not failures of the dependency: callers catch those first.
    """
    try:
        yield
    except ClientError as error:
        code = error.response.get("Error", {}).get("Code")
        if is_condition_failure(error) or code in _REQUEST_ERRORS:
            raise
        raise DependencyUnavailable("DynamoDB") from None
    except BotoCoreError:
        raise DependencyUnavailable("DynamoDB") from None

