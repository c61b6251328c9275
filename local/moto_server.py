"""moto's server, single-threaded and with bounded memory.

moto's DynamoDB backend is not thread-safe: under its default threaded server, concurrent
conditional writes on one item can both succeed. Real DynamoDB is atomic per item, and our
rotation race depends on that, so the local stack serves moto one request at a time.

Two habits of moto 5.2 made the local stack's memory grow without bound, measured by
`make load` (README, "Local stack memory"), and two more made it slow; all four are switched
off here, in this process only:

- Every model object moto ever creates (each item written, each copy of one) is appended
  to a class-level list, `instances_tracked`, for its web dashboard, which this server does
  not serve. Nothing is ever freed.
- (`TransactWriteItems` is refused here, as a multi-Region strongly consistent table refuses
  it: `behaves_like_a_global_table`; the rollback below stays for a moto that accepts it.)
- `TransactWriteItems` deep-copies every table a transaction touches, once per member,
  to roll back on failure: O(table size) time per transaction, and, through the list
  above, O(table size) memory kept forever. Here a transaction keeps a copy of the items it
  touches instead, and restores those if it fails: the same all-or-nothing result.
- moto writes each DynamoDB answer by walking botocore's output shape, member by member:
  about 4 ms per item, so a page of 100 keys took 0.4 s and made every caller queued behind
  it (moto serves one request at a time) miss its read timeout under `make load`. A DynamoDB
  result is already in the wire's JSON shape, so here it is written with `json.dumps`,
  binary values in base64 and times in epoch seconds, as the JSON protocol has them; the
  answers botocore parses are the same (`tests/unit/local/test_moto_server.py`).
- A `Query` with a `ProjectionExpression` converts each item it returns to plain JSON once
  per projected attribute (a key listing names 18). Counting a user's keys (the key limit,
  on every create) reads all of them, so as `make load` created keys moto slowed down: a
  run of 2,000 requests fell to 6 requests/s with about 400 answers of 503 (reads queued
  past their budget), and in a profile of it 280 queries took 150 of moto's 185 s, 135 s
  of that projecting. Here an item projected on top-level attributes is converted once
  (the same run: 13 requests/s, no 503). And a `Query` of the table gathers and sorts every
  item of the table to keep its partition's; here it reads its partition only (a query of
  an index is moto's own).

`--regions us-east-1,us-east-2,us-west-2` (`make run REGIONS=3`) makes DynamoDB one store in
those Regions, the first's: a request signed for any of them reads and writes the same tables,
as each Region's replica of a global table with strong consistency answers. KMS stays per
Region, as it is: the local stack replicates its multi-Region keys into each (and what such a
key encrypts can be decrypted here, which moto's own ciphertexts do not allow).

    python -m local.moto_server --port 5000 [--regions r1,r2,r3]
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import copy
import itertools
import json
import sys
from datetime import datetime
from typing import Any

from moto.moto_server.werkzeug_app import (
    DomainDispatcherApplication,
    create_backend_app,
)
from moto.server import MotoRequestHandler
from werkzeug.serving import make_server


def without_instance_tracking() -> None:
    """moto's models stop recording every instance (nothing reads the record here)."""
    from moto.core.common_models import BaseModel

    def untracked(cls: type, *args: Any, **kwargs: Any) -> Any:
        return super(BaseModel, cls).__new__(cls)  # type: ignore[misc]

    BaseModel.__new__ = staticmethod(untracked)  # type: ignore[method-assign]


def transactions_roll_back_their_items() -> None:
    """TransactWriteItems keeps a copy of the items it touches, not of whole tables."""
    from moto.dynamodb.models import DynamoDBBackend
    from moto.dynamodb.models.table import Table

    # moto's own backup becomes the table itself, at no cost; the wrapper below does the
    # rollback moto would have done with it.
    Table.__deepcopy__ = lambda self, memo: self  # type: ignore[attr-defined]
    applied = DynamoDBBackend.transact_write_items

    def transact_write_items(self: Any, transact_items: list[dict[str, Any]]) -> None:
        before = [_snapshot(self, member) for member in transact_items]
        try:
            applied(self, transact_items)
        except Exception:
            for table_name, key, attributes in reversed([b for b in before if b]):
                if attributes is None:
                    self.delete_item(table_name, key)
                else:
                    self.put_item(table_name, attributes)
            raise

    DynamoDBBackend.transact_write_items = transact_write_items  # type: ignore[method-assign]


# What a multi-Region strongly consistent table answers a transaction: MRSC replicas "do not
# support transaction operations, and will return an error" (DynamoDB developer guide,
# "Global tables: consistency modes"). The local store answers the same, so that no tier
# can pass with code the global stage would refuse.
TRANSACTIONS_REFUSED = (
    "Transactions are not supported for tables with multi-Region strong consistency"
)
# The fault switch: the share (0 to 1) of conditional single-item writes answered
# ReplicatedWriteConflictException, as when another Region changes the item at the same
# moment. Deterministic: one in every 1/share such writes fails, spread evenly.
WRITE_CONFLICTS = "LOCAL_WRITE_CONFLICT_SHARE"


def behaves_like_a_global_table(conflict_share: float | None = None) -> WriteConflicts:
    """moto answers as an MRSC replica: transactions refused (ValidationException), and,
    with a share, that share of conditional writes refused as replicated write conflicts."""
    import os

    from moto.dynamodb.exceptions import DynamodbException, MockValidationException
    from moto.dynamodb.responses import DynamoHandler

    def refused(self: Any) -> Any:
        raise MockValidationException(TRANSACTIONS_REFUSED)

    DynamoHandler.transact_write_items = refused  # type: ignore[method-assign]
    DynamoHandler.transact_get_items = refused  # type: ignore[method-assign]

    share = conflict_share
    if share is None:
        share = float(os.environ.get(WRITE_CONFLICTS) or 0)
    if not 0 <= share <= 1:
        raise ValueError(f"{WRITE_CONFLICTS} must be between 0 and 1")
    conflicts = WriteConflicts(share)
    for name in ("put_item", "update_item", "delete_item"):
        original = getattr(DynamoHandler, f"_unconflicted_{name}", None) or getattr(
            DynamoHandler, name
        )
        setattr(DynamoHandler, f"_unconflicted_{name}", original)

        def write(self: Any, _original: Any = original) -> Any:
            if self.body.get("ConditionExpression") and conflicts.next():
                raise DynamodbException(
                    "com.amazonaws.dynamodb.v20120810#ReplicatedWriteConflictException",
                    "One or more items in this request are being modified by a request in "
                    "another Region.",
                )
            return _original(self)

        setattr(DynamoHandler, name, write)
    return conflicts


class WriteConflicts:
    """Which conditional writes fail: `share` of them, spread evenly (0: none)."""

    def __init__(self, share: float):
        self.share = share
        self._seen = 0

    def next(self) -> bool:
        if self.share <= 0:
            return False
        before = int(self._seen * self.share)
        self._seen += 1
        return int(self._seen * self.share) > before


def queries_read_their_partition() -> None:
    """A `Query` of the table (not of an index) looks at its partition's items only."""
    from moto.dynamodb.models.table import Table

    query = Table.query

    def partitioned(self: Any, hash_key: Any, *args: Any, **kwargs: Any) -> Any:
        # moto's backend passes `index_name` as the seventh argument after the hash key.
        index_name = args[6] if len(args) > 6 else kwargs.get("index_name")
        if index_name or hash_key is None or not self.range_key_attr:
            return query(self, hash_key, *args, **kwargs)
        partition = list(self.items.get(hash_key, {}).values())
        self.all_items = lambda: partition  # this call only (one request at a time here)
        try:
            return query(self, hash_key, *args, **kwargs)
        finally:
            del self.all_items

    Table.query = partitioned  # type: ignore[method-assign]


def projections_convert_each_item_once() -> None:
    """An item projected on top-level attributes is converted to plain JSON once, not once
    per attribute; nested paths and list elements are projected by moto's own code."""
    from moto.dynamodb.models.dynamo_type import Item, serializer

    project = Item.project

    def once(self: Any, projection_expressions: list[list[str]]) -> Any:
        if not all(len(path) == 1 and "[" not in path[0] for path in projection_expressions):
            return project(self, projection_expressions)
        plain = self.to_regular_json()
        kept = {path[0]: plain[path[0]] for path in projection_expressions if path[0] in plain}
        return Item(
            hash_key=self.hash_key, range_key=self.range_key, attrs=serializer.serialize(kept)["M"]
        )

    Item.project = once  # type: ignore[method-assign]


def one_table_store_for(regions: list[str]) -> None:
    """DynamoDB requests signed for any of `regions` reach the first's backend: one store,
    as a global table's replicas with strong consistency are (every write is read back in
    every Region at once). Other Regions, and every other service, keep their own."""
    from moto.dynamodb.models import dynamodb_backends
    from moto.dynamodb.responses import DynamoHandler

    home, replicas = regions[0], frozenset(regions[1:])

    def dynamodb_backend(self: Any) -> Any:
        region = home if self.region in replicas else self.region
        return dynamodb_backends[self.current_account][region]

    DynamoHandler.dynamodb_backend = property(dynamodb_backend)  # type: ignore[method-assign,assignment]


def multi_region_keys_decrypt() -> None:
    """What a multi-Region key encrypts can be decrypted: moto's ciphertext holds the key id in
    a field of 36 characters, a plain key id's length, and a multi-Region key's (`mrk-` and
    those 36) was cut short there, so its decryption found no key (AccessDeniedException).
    Here the field holds 40 characters, a shorter id padded with NULs that reading strips."""
    from moto.kms import utils

    width = len("mrk-") + utils.KEY_ID_LEN
    utils.CIPHERTEXT_HEADER_FORMAT = f">{width}s{utils.IV_LEN}s{utils.TAG_LEN}s"
    utils.HEADER_LEN = width + utils.IV_LEN + utils.TAG_LEN
    read = utils._deserialize_ciphertext_blob

    def unpadded(ciphertext_blob: bytes) -> Any:
        ciphertext = read(ciphertext_blob)
        return ciphertext._replace(key_id=ciphertext.key_id.rstrip("\x00"))

    utils._deserialize_ciphertext_blob = unpadded


def dynamodb_made_faster() -> None:
    """Every patch here that only makes moto faster (a query reads its partition, a projected
    item is converted once, answers are plain JSON): none changes an answer, so the
    functional tier's in-process moto takes them too."""
    queries_read_their_partition()
    projections_convert_each_item_once()
    dynamodb_answers_as_plain_json()


def dynamodb_answers_as_plain_json() -> None:
    """DynamoDB results are written with json.dumps, not moto's shape-walking serializer."""
    from moto.dynamodb.responses import DynamoResult

    def execute_result(self: Any, context: Any) -> tuple[int, dict[str, str], str]:
        body = json.dumps(self.result, default=_wire_value, separators=(",", ":"))
        return 200, {"Content-Type": "application/x-amz-json-1.0"}, body

    DynamoResult.execute_result = execute_result  # type: ignore[method-assign]


def kms_keys_from_a_pool(size: int = 16) -> None:
    """moto's KMS keys take their RSA key material from a pool of `size` per key size.

    moto makes an RSA key pair for every KMS key it creates, symmetric and HMAC keys too
    (60 ms each for 2048 bits): about three per test of the functional tier. For tests only:
    one process hands the same material out again after `size` keys, so a test that made
    more than `size` keys would see two of them sign alike.
    """
    from moto.kms import utils

    made: dict[int, list[Any]] = {}
    handed_out = itertools.count()
    generate = utils.rsa.generate_private_key

    def pooled(self: Any, key_size: int) -> None:
        if key_size not in (2048, 3072, 4096):
            made_here(self, key_size)  # moto's own refusal
            return
        self.key_size = key_size
        keys = made.setdefault(key_size, [])
        index = next(handed_out) % size
        if index >= len(keys):
            keys.append(generate(public_exponent=65537, key_size=key_size))
        self.private_key = keys[index]

    made_here = utils.RSAPrivateKey.__init__
    utils.RSAPrivateKey.__init__ = pooled  # type: ignore[method-assign]


def _wire_value(value: Any) -> Any:
    """The JSON protocol's form of what json cannot write itself."""
    if isinstance(value, bytes | bytearray):
        return base64.b64encode(value).decode("ascii")
    if isinstance(value, datetime):
        return value.timestamp()
    raise TypeError(f"no JSON form for {type(value).__name__}")


def _snapshot(backend: Any, member: dict[str, Any]) -> tuple[str, dict[str, Any], Any] | None:
    """(table, key, the item's attributes or None if absent) of one transaction member."""
    try:
        ((kind, operation),) = member.items()
        table_name = operation["TableName"]
        if kind == "Put":
            table = backend.get_table(table_name)
            names = [table.hash_key_attr] + ([table.range_key_attr] if table.range_key_attr else [])
            key = {name: operation["Item"][name] for name in names}
        else:
            key = operation["Key"]
        current = backend.get_item(table_name, key)
    except Exception:  # a malformed member: moto itself refuses it, before writing anything
        return None
    return table_name, key, copy.deepcopy(current.to_json()["Attributes"]) if current else None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=5000)
    parser.add_argument(
        "--regions", default="", help="comma-separated: DynamoDB is one store in these Regions"
    )
    args = parser.parse_args(argv)
    without_instance_tracking()
    if args.regions:
        one_table_store_for(args.regions.split(","))
        multi_region_keys_decrypt()
    transactions_roll_back_their_items()
    dynamodb_made_faster()
    behaves_like_a_global_table()
    app = DomainDispatcherApplication(create_backend_app)
    server = make_server(
        args.host, args.port, app, threaded=False, request_handler=MotoRequestHandler
    )
    print(f"moto listening on http://{args.host}:{server.port}", flush=True)
    with contextlib.suppress(KeyboardInterrupt):
        server.serve_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main())
