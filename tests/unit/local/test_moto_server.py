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
