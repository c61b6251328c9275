"""The local stack's moto keeps bounded memory and still rolls transactions back whole.

The patches change moto's classes for the whole process, so each check runs in a fresh
interpreter (moto in-process there, no network) and reports back in JSON.
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

from infra.template import PROJECT_DIR

CHECK = """
import json, os
os.environ.update(AWS_ACCESS_KEY_ID="x", AWS_SECRET_ACCESS_KEY="x", AWS_DEFAULT_REGION="us-east-1")
import boto3
from botocore.exceptions import ClientError
from moto import mock_aws
from local.moto_server import transactions_roll_back_their_items, without_instance_tracking

without_instance_tracking()
transactions_roll_back_their_items()
with mock_aws():
    from moto.dynamodb.models.dynamo_type import Item
    from moto.dynamodb.models.table import Table
    db = boto3.client("dynamodb")
    db.create_table(
        TableName="t",
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        BillingMode="PAY_PER_REQUEST",
    )
    for i in range(200):
        db.put_item(TableName="t", Item={"pk": {"S": f"item{i}"}, "v": {"N": "0"}})
    absent = {"ConditionExpression": "attribute_not_exists(pk)"}
    failed = None
    try:
        db.transact_write_items(TransactItems=[
            {"Update": {"TableName": "t", "Key": {"pk": {"S": "item1"}},
                        "UpdateExpression": "SET v = :one",
                        "ExpressionAttributeValues": {":one": {"N": "1"}}}},
            {"Put": {"TableName": "t", "Item": {"pk": {"S": "new"}}, **absent}},
            {"Delete": {"TableName": "t", "Key": {"pk": {"S": "item2"}}}},
            {"Put": {"TableName": "t", "Item": {"pk": {"S": "item3"}}, **absent}},
        ])
    except ClientError as error:
        failed = [r["Code"] for r in error.response["CancellationReasons"]]
    db.transact_write_items(TransactItems=[
        {"Put": {"TableName": "t", "Item": {"pk": {"S": "committed"}}, **absent}},
        {"Update": {"TableName": "t", "Key": {"pk": {"S": "item4"}},
                    "UpdateExpression": "SET v = :one",
                    "ExpressionAttributeValues": {":one": {"N": "1"}}}},
    ])
    def value(pk):
        found = db.get_item(TableName="t", Key={"pk": {"S": pk}}).get("Item")
        return found["v"]["N"] if found and "v" in found else (found is not None)
    print(json.dumps({
        "reasons": failed,
        "item1": value("item1"), "new": value("new"), "item2": value("item2"),
        "committed": value("committed"), "item4": value("item4"),
        "tracked": len(Item.instances_tracked) + len(Table.instances_tracked),
        "count": db.scan(TableName="t", Select="COUNT")["Count"],
    }))
"""


def run_check() -> dict[str, Any]:
    result = subprocess.run(
        [sys.executable, "-c", CHECK], cwd=PROJECT_DIR, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr[-2000:]
    return dict(json.loads(result.stdout.splitlines()[-1]))


def test_a_failed_transaction_leaves_every_item_as_it_was_and_a_good_one_commits() -> None:
    found = run_check()
    assert found["reasons"] == ["None", "None", "None", "ConditionalCheckFailed"]
    assert (found["item1"], found["new"], found["item2"]) == ("0", False, "0")
    assert (found["committed"], found["item4"]) == (True, "1")
    assert found["count"] == 201
    assert found["tracked"] == 0  # moto keeps no list of every object it ever made


ANSWERS = """
import json, os, sys
os.environ.update(AWS_ACCESS_KEY_ID="x", AWS_SECRET_ACCESS_KEY="x", AWS_DEFAULT_REGION="us-east-1")
import boto3
from moto import mock_aws
from local.moto_server import dynamodb_answers_as_plain_json

if sys.argv[1] == "plain":
    dynamodb_answers_as_plain_json()
with mock_aws():
    db = boto3.client("dynamodb")
    key = [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}]
    names = [{"AttributeName": n, "AttributeType": "S"} for n in ("pk", "sk")]
    db.create_table(TableName="t", KeySchema=key, AttributeDefinitions=names,
                    BillingMode="PAY_PER_REQUEST")
    every_type = {
        "s": {"S": "text é"}, "n": {"N": "12.5"}, "b": {"B": bytes(range(256))},
        "bool": {"BOOL": False}, "null": {"NULL": True}, "ss": {"SS": ["a", "b"]},
        "ns": {"NS": ["1", "2"]}, "bs": {"BS": [b"\\x00", b"\\xff"]},
        "l": {"L": [{"S": "x"}, {"N": "1"}, {"M": {"k": {"B": b"\\x01"}}}]},
        "m": {"M": {"inner": {"L": []}, "empty": {"S": ""}}},
    }
    answers = {}
    for i in range(5):
        item = {"pk": {"S": "p"}, "sk": {"S": f"s{i}"}, **every_type}
        answers[f"put{i}"] = db.put_item(TableName="t", Item=item, ReturnValues="ALL_OLD")
    answers["put again"] = db.put_item(
        TableName="t", Item={"pk": {"S": "p"}, "sk": {"S": "s0"}, "n": {"N": "1"}},
        ReturnValues="ALL_OLD")
    answers["get"] = db.get_item(TableName="t", Key={"pk": {"S": "p"}, "sk": {"S": "s1"}},
                                 ConsistentRead=True)
    answers["get nothing"] = db.get_item(TableName="t", Key={"pk": {"S": "q"}, "sk": {"S": "s"}})
    answers["query page"] = db.query(
        TableName="t", KeyConditionExpression="pk = :p", Limit=2, ScanIndexForward=False,
        ExpressionAttributeValues={":p": {"S": "p"}})
    answers["query projected"] = db.query(
        TableName="t", KeyConditionExpression="pk = :p", ProjectionExpression="sk, b, m.inner",
        ExpressionAttributeValues={":p": {"S": "p"}})
    answers["scan count"] = db.scan(TableName="t", Select="COUNT")
    answers["batch get"] = db.batch_get_item(RequestItems={"t": {"Keys": [
        {"pk": {"S": "p"}, "sk": {"S": "s2"}}, {"pk": {"S": "p"}, "sk": {"S": "none"}}]}})
    answers["update"] = db.update_item(
        TableName="t", Key={"pk": {"S": "p"}, "sk": {"S": "s3"}}, ReturnValues="ALL_NEW",
        UpdateExpression="SET n = n + :one REMOVE ss",
        ExpressionAttributeValues={":one": {"N": "1"}})
    answers["transact"] = db.transact_write_items(TransactItems=[
        {"Delete": {"TableName": "t", "Key": {"pk": {"S": "p"}, "sk": {"S": "s4"}}}}])
    answers["delete"] = db.delete_item(
        TableName="t", Key={"pk": {"S": "p"}, "sk": {"S": "s2"}}, ReturnValues="ALL_OLD")
    described = db.describe_table(TableName="t")
    described["Table"]["CreationDateTime"] = described["Table"]["CreationDateTime"].year
    answers["describe"] = described
    answers["ttl"] = db.describe_time_to_live(TableName="t")
    for answer in answers.values():
        answer.pop("ResponseMetadata")
    print(json.dumps(answers, default=repr, sort_keys=True))
"""


def answers(serializer: str) -> Any:
    result = subprocess.run(
        [sys.executable, "-c", ANSWERS, serializer],
        cwd=PROJECT_DIR, capture_output=True, text=True, timeout=120,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    return json.loads(result.stdout.splitlines()[-1])


def test_dynamodb_answers_written_as_plain_json_parse_as_moto_writes_them() -> None:
    plain, moto = answers("plain"), answers("moto")

    assert plain == moto
    # What was compared: every attribute type, binary included, came back.
    assert plain["get"]["Item"]["b"] == moto["get"]["Item"]["b"] != ""
    assert plain["query page"]["LastEvaluatedKey"]


POOL = """
import json, os
os.environ.update(AWS_ACCESS_KEY_ID="x", AWS_SECRET_ACCESS_KEY="x", AWS_DEFAULT_REGION="us-east-1")
import boto3
from moto import mock_aws
from local.moto_server import kms_keys_from_a_pool

kms_keys_from_a_pool(size=3)
with mock_aws():
    kms = boto3.client("kms")
    keys = [kms.create_key(KeySpec="RSA_2048", KeyUsage="SIGN_VERIFY")["KeyMetadata"]["KeyId"]
            for _ in range(4)]
    public = [kms.get_public_key(KeyId=k)["PublicKey"].hex() for k in keys]
    signed = kms.sign(KeyId=keys[0], Message=b"m", SigningAlgorithm="RSASSA_PKCS1_V1_5_SHA_256")
    verified = kms.verify(KeyId=keys[0], Message=b"m", Signature=signed["Signature"],
                          SigningAlgorithm="RSASSA_PKCS1_V1_5_SHA_256")["SignatureValid"]
    try:
        kms.create_key(KeySpec="RSA_1024", KeyUsage="SIGN_VERIFY")
        refused = False
    except Exception:
        refused = True
    print(json.dumps({"distinct": len(set(public[:3])), "fourth_is_first": public[3] == public[0],
                      "verified": verified, "refused": refused}))
"""


def test_kms_key_material_comes_from_the_pool_distinct_within_its_size() -> None:
    result = subprocess.run(
        [sys.executable, "-c", POOL], cwd=PROJECT_DIR, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr[-2000:]
    found = json.loads(result.stdout.splitlines()[-1])

    assert found == {"distinct": 3, "fourth_is_first": True, "verified": True, "refused": True}


QUERIES = """
import json, os, sys
os.environ.update(AWS_ACCESS_KEY_ID="x", AWS_SECRET_ACCESS_KEY="x", AWS_DEFAULT_REGION="us-east-1")
import boto3
from moto import mock_aws
from local.moto_server import projections_convert_each_item_once, queries_read_their_partition

if sys.argv[1] == "patched":
    queries_read_their_partition()
    projections_convert_each_item_once()
with mock_aws():
    from moto.dynamodb.models.table import Table
    gathered = []
    every_item = Table.all_items
    Table.all_items = lambda self: gathered.append(1) or every_item(self)
    db = boto3.client("dynamodb")
    names = [{"AttributeName": n, "AttributeType": "S"} for n in ("pk", "sk", "g")]
    db.create_table(
        TableName="t", AttributeDefinitions=names, BillingMode="PAY_PER_REQUEST",
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"},
                   {"AttributeName": "sk", "KeyType": "RANGE"}],
        GlobalSecondaryIndexes=[{"IndexName": "byG", "Projection": {"ProjectionType": "ALL"},
                                 "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"},
                                               {"AttributeName": "sk", "KeyType": "RANGE"}]}])
    for p in range(5):
        for s in range(12):
            item = {"pk": {"S": f"p{p}"}, "sk": {"S": f"KEY#{s:02d}"}, "n": {"N": f"{s}.50"},
                    "m": {"M": {"k": {"L": [{"S": "x"}, {"B": b"\\x00"}]}}},
                    "ss": {"SS": ["b", "a"]}, "b": {"B": bytes([s, 255])}}
            if s % 3 == 0:
                item["g"] = {"S": "due"}
            db.put_item(TableName="t", Item=item)
    values = {":p": {"S": "p2"}}
    asked = {
        "whole": {"KeyConditionExpression": "pk = :p"},
        "prefix": {"KeyConditionExpression": "pk = :p AND begins_with(sk, :k)",
                   "ExpressionAttributeValues": {**values, ":k": {"S": "KEY#0"}}},
        "between backwards": {
            "KeyConditionExpression": "pk = :p AND sk BETWEEN :a AND :b",
            "ScanIndexForward": False,
            "ExpressionAttributeValues": {**values, ":a": {"S": "KEY#03"}, ":b": {"S": "KEY#08"}}},
        "filtered": {"KeyConditionExpression": "pk = :p", "FilterExpression": "n > :five",
                     "ExpressionAttributeValues": {**values, ":five": {"N": "5"}}},
        "projected": {"KeyConditionExpression": "pk = :p",
                      "ProjectionExpression": "sk, n, m, ss, b, gone"},
        "projected by name": {"KeyConditionExpression": "pk = :p",
                              "ProjectionExpression": "#s, #m",
                              "ExpressionAttributeNames": {"#s": "sk", "#m": "m"}},
        "projected nested": {"KeyConditionExpression": "pk = :p",
                             "ProjectionExpression": "sk, m.k[1]"},
        "nothing there": {"KeyConditionExpression": "pk = :p",
                          "ExpressionAttributeValues": {":p": {"S": "absent"}}},
        "index": {"IndexName": "byG", "KeyConditionExpression": "g = :g",
                  "ExpressionAttributeValues": {":g": {"S": "due"}}},
    }
    answers = {}
    for name, request in asked.items():
        request.setdefault("ExpressionAttributeValues", values)
        pages, start = [], {}
        while True:
            page = db.query(TableName="t", Limit=5, **request, **start)
            pages.append([page["Items"], page["Count"], page["ScannedCount"]])
            if "LastEvaluatedKey" not in page:
                break
            start = {"ExclusiveStartKey": page["LastEvaluatedKey"]}
        answers[name] = pages
    print(json.dumps({"answers": answers, "whole table gathered": len(gathered)}, sort_keys=True,
                     default=repr))
"""


def queries(patched: str) -> Any:
    result = subprocess.run(
        [sys.executable, "-c", QUERIES, patched],
        cwd=PROJECT_DIR, capture_output=True, text=True, timeout=120,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    return unordered_sets(json.loads(result.stdout.splitlines()[-1]))


def unordered_sets(value: Any) -> Any:
    """DynamoDB's sets have no order, and a projection passes them through Python sets, whose
    order depends on each process's hash seed: compared sorted."""
    if isinstance(value, dict):
        return {
            k: sorted(v) if k in ("SS", "NS", "BS") else unordered_sets(v) for k, v in value.items()
        }
    if isinstance(value, list):
        return [unordered_sets(v) for v in value]
    return value


def test_queries_read_their_partition_and_project_once_and_answer_as_moto_does() -> None:
    partition, moto = queries("patched"), queries("moto")

    assert partition["answers"] == moto["answers"]
    # What was compared: pages of items, a filter, an index, projections (top-level names,
    # names by placeholder, a nested path), and a partition with nothing.
    assert len(moto["answers"]["whole"]) == 3
    assert set(moto["answers"]["projected"][0][0][0]) == {"sk", "n", "m", "ss", "b"}
    assert set(moto["answers"]["projected nested"][0][0][0]) == {"sk", "m"}
    assert moto["answers"]["filtered"][0][2] > moto["answers"]["filtered"][0][1]
    assert moto["answers"]["nothing there"] == [[[], 0, 0]]
    # Only the index's queries still gather the whole table.
    assert 0 < partition["whole table gathered"] < moto["whole table gathered"]
