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
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from botocore.exceptions import BotoCoreError, ClientError

from chalicelib.errors import DependencyUnavailable

PARTITION_KEY = "pk"
SORT_KEY = "sk"
TTL_ATTRIBUTE = "ttl"

Item = dict[str, Any]
T = TypeVar("T")


def to_item(values: dict[str, Any]) -> Item:
    """Plain values to DynamoDB's typed form. None means: leave the attribute out."""
    item: Item = {}
    for name, value in values.items():
        if value is None:
            continue
        item[name] = to_attribute(value)
    return item


def to_attribute(value: Any) -> dict[str, Any]:
    if isinstance(value, bool):
        return {"BOOL": value}
    if isinstance(value, str):
        return {"S": value}
    if isinstance(value, int):
        return {"N": str(value)}
    if isinstance(value, bytes):
        return {"B": value}
    if isinstance(value, list | tuple):
        return {"L": [to_attribute(v) for v in value]}
    raise TypeError(f"unsupported attribute type {type(value).__name__}")


def from_item(item: Item) -> dict[str, Any]:
    return {name: from_attribute(value) for name, value in item.items()}


def from_attribute(value: dict[str, Any]) -> Any:
    (kind, raw), = value.items()
    if kind == "S" or kind == "BOOL":
        return raw
    if kind == "N":
        return int(raw)
    if kind == "B":
        return bytes(raw)
    if kind == "L":
        return [from_attribute(v) for v in raw]
    if kind == "SS":
        return list(raw)
    if kind == "NULL":
        return None
    raise TypeError(f"unsupported DynamoDB type {kind}")


def key(pk: str, sk: str) -> Item:
    return {PARTITION_KEY: {"S": pk}, SORT_KEY: {"S": sk}}


def cancellation_reasons(error: ClientError) -> list[str]:
    return [r.get("Code", "None") for r in error.response.get("CancellationReasons", [])]


def is_condition_failure(error: ClientError) -> bool:
    code = error.response.get("Error", {}).get("Code")
    if code == "ConditionalCheckFailedException":
        return True
    if code == "TransactionCanceledException":
        reasons = cancellation_reasons(error)
        return "ConditionalCheckFailed" in reasons and all(
            r in ("None", "ConditionalCheckFailed") for r in reasons
        )
    return False


@contextmanager
def dynamodb_errors() -> Iterator[None]:
    """Any failure of DynamoDB itself (after botocore's retries) becomes a 503.

    Condition failures are not failures of the dependency: callers catch those first.
    """
    try:
        yield
    except ClientError as error:
        if is_condition_failure(error):
            raise
        raise DependencyUnavailable("DynamoDB") from None
    except BotoCoreError:
        raise DependencyUnavailable("DynamoDB") from None


def guarded(call: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    with dynamodb_errors():
        return call(*args, **kwargs)
