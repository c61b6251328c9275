"""`local.moto_server --regions`: DynamoDB is one store in the Regions named, as a global
table's replicas with strong consistency are; other Regions keep their own. And what a
multi-Region KMS key encrypts decrypts, in its Region and in its replica's.

The patch changes moto's classes for the whole process, so the check runs in a fresh
interpreter (moto in-process there, no network) and reports back in JSON.
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

from infra.template import PROJECT_DIR

CHECK = """
import json, os, sys
os.environ.update(AWS_ACCESS_KEY_ID="x", AWS_SECRET_ACCESS_KEY="x")
import boto3
from moto import mock_aws
from local.moto_server import one_table_store_for

if sys.argv[1] == "shared":
    one_table_store_for(["us-east-1", "us-east-2", "us-west-2"])
with mock_aws():
    db = {r: boto3.client("dynamodb", region_name=r)
          for r in ("us-east-1", "us-east-2", "us-west-2", "eu-west-1")}
    db["us-east-1"].create_table(
        TableName="t",
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        BillingMode="PAY_PER_REQUEST",
    )
    tables = {r: client.list_tables()["TableNames"] for r, client in db.items()}
    read = None
    if tables["us-east-2"]:
        db["us-east-2"].put_item(TableName="t", Item={"pk": {"S": "written in us-east-2"}})
        found = db["us-west-2"].get_item(
            TableName="t", Key={"pk": {"S": "written in us-east-2"}}, ConsistentRead=True)
        read = found.get("Item", {}).get("pk", {}).get("S")
    print(json.dumps({"tables": tables, "read": read}))
"""


def run_check(mode: str) -> dict[str, Any]:
    result = subprocess.run(
        [sys.executable, "-c", CHECK, mode],
        cwd=PROJECT_DIR, capture_output=True, text=True, timeout=120,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    return dict(json.loads(result.stdout.splitlines()[-1]))


def test_a_write_in_one_named_region_is_read_in_another_and_other_regions_keep_their_own() -> None:
    found = run_check("shared")

    assert found["tables"] == {
        "us-east-1": ["t"], "us-east-2": ["t"], "us-west-2": ["t"], "eu-west-1": []
    }
    assert found["read"] == "written in us-east-2"


def test_without_regions_each_region_is_its_own_store_as_moto_has_it() -> None:
    found = run_check("separate")

    assert found["tables"] == {
        "us-east-1": ["t"], "us-east-2": [], "us-west-2": [], "eu-west-1": []
    }


KEYS = """
import json, os, sys
os.environ.update(AWS_ACCESS_KEY_ID="x", AWS_SECRET_ACCESS_KEY="x")
import boto3
from botocore.exceptions import ClientError
from moto import mock_aws
from local.moto_server import multi_region_keys_decrypt

if sys.argv[1] == "fixed":
    multi_region_keys_decrypt()
with mock_aws():
    home = boto3.client("kms", region_name="us-east-1")
    replica = boto3.client("kms", region_name="us-west-2")
    multi = home.create_key(MultiRegion=True)["KeyMetadata"]["KeyId"]
    home.replicate_key(KeyId=multi, ReplicaRegion="us-west-2")
    plain = home.create_key()["KeyMetadata"]["KeyId"]
    found = {}
    for name, key, reader in (
        ("multi, home", multi, home), ("multi, replica", multi, replica), ("plain", plain, home)
    ):
        blob = home.encrypt(KeyId=key, Plaintext=b"sealed")["CiphertextBlob"]
        try:
            opened = reader.decrypt(CiphertextBlob=blob)
            found[name] = [opened["Plaintext"].decode(), opened["KeyId"].endswith(key)]
        except ClientError as error:
            found[name] = error.response["Error"]["Code"]
    print(json.dumps(found))
"""


def run_keys_check(mode: str) -> dict[str, Any]:
    result = subprocess.run(
        [sys.executable, "-c", KEYS, mode],
        cwd=PROJECT_DIR, capture_output=True, text=True, timeout=120,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    return dict(json.loads(result.stdout.splitlines()[-1]))


def test_what_a_multi_region_key_encrypts_decrypts_in_its_region_and_its_replicas() -> None:
    found = run_keys_check("fixed")

    assert found == {
        "multi, home": ["sealed", True],
        "multi, replica": ["sealed", True],
        "plain": ["sealed", True],
    }


def test_motos_own_ciphertexts_cut_a_multi_region_key_id_short() -> None:
    """Why the fix exists: without it nothing a multi-Region key sealed can be opened."""
    found = run_keys_check("moto")

    assert found["multi, home"] == found["multi, replica"] == "AccessDeniedException"
    assert found["plain"] == ["sealed", True]
