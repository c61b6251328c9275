"""The local stack's resources are the template's, created with the AWS APIs on moto."""

from __future__ import annotations

import boto3
import pytest
from moto import mock_aws

from infra.template import STAGES, stack, stage_environment
from local.resources import create_all, create_replicas


@pytest.mark.parametrize("stage", STAGES)
def test_local_tables_and_keys_are_the_templates(stage: str) -> None:
    expected = stack(stage)
    with mock_aws():
        dynamodb = boto3.client("dynamodb", region_name="us-east-1")
        kms = boto3.client("kms", region_name="us-east-1")
        events = boto3.client("events", region_name="us-east-1")

        created = create_all(dynamodb, kms, stage, events)
        create_all(dynamodb, kms, stage, events)  # again: nothing new, nothing fails

        tables = expected.resources("AWS::DynamoDB::Table").values()
        assert sorted(created["tables"]) == sorted(t["Properties"]["TableName"] for t in tables)
        for table in tables:
            properties = table["Properties"]
            described = dynamodb.describe_table(TableName=properties["TableName"])["Table"]
            ttl = dynamodb.describe_time_to_live(TableName=properties["TableName"])
            assert described["KeySchema"] == properties["KeySchema"]
            assert [
                (i["IndexName"], i["KeySchema"], i["Projection"])
                for i in described.get("GlobalSecondaryIndexes", [])
            ] == [
                (i["IndexName"], i["KeySchema"], i["Projection"])
                for i in properties.get("GlobalSecondaryIndexes", [])
            ]
            assert ttl["TimeToLiveDescription"]["AttributeName"] == (
                properties["TimeToLiveSpecification"]["AttributeName"]
            )
        template_buses = expected.resources("AWS::Events::EventBus").values()
        buses = {b["Properties"]["Name"] for b in template_buses}
        assert set(created["buses"]) == buses
        assert buses <= {b["Name"] for b in events.list_event_buses()["EventBuses"]}
        aliases = expected.resources("AWS::KMS::Alias").values()
        assert set(created["keys"]) == {a["Properties"]["AliasName"] for a in aliases}
        assert len(kms.list_keys()["Keys"]) == len(expected.resources("AWS::KMS::Key"))
        for alias in aliases:
            key = expected.resources()[alias["Properties"]["TargetKeyId"]["Ref"]]["Properties"]
            metadata = kms.describe_key(KeyId=alias["Properties"]["AliasName"])["KeyMetadata"]
            assert metadata["KeySpec"] == key["KeySpec"]
            assert metadata["KeyUsage"] == key["KeyUsage"]


def test_replica_regions_hold_each_key_as_the_home_regions_under_the_same_alias() -> None:
    """`make run REGIONS=3`: a multi-Region key of the home Region, replicated, is usable in
    each Region under the alias the service reads, with the same key id and key material."""
    template, environment = stack("dev"), stage_environment("dev")
    with mock_aws():
        dynamodb = boto3.client("dynamodb", region_name="us-east-1")
        home = boto3.client("kms", region_name="us-east-1")
        replicas = {
            region: (
                boto3.client("kms", region_name=region),
                boto3.client("events", region_name=region),
            )
            for region in ("us-east-2", "us-west-2")
        }

        created = create_all(dynamodb, home, "dev", multi_region=True)
        create_replicas("dev", home, created["keys"], replicas)
        create_replicas("dev", home, created["keys"], replicas)  # again: nothing fails

        for region, (kms, events) in replicas.items():
            for alias, key_id in created["keys"].items():
                metadata = kms.describe_key(KeyId=alias)["KeyMetadata"]
                assert (metadata["KeyId"], metadata["Arn"].split(":")[3]) == (key_id, region)
                assert metadata["MultiRegionConfiguration"]["MultiRegionKeyType"] == "REPLICA"
            buses = template.resources("AWS::Events::EventBus").values()
            assert {b["Properties"]["Name"] for b in buses} <= {
                b["Name"] for b in events.list_event_buses()["EventBuses"]
            }
        kms = replicas["us-west-2"][0]
        # Decrypting in a replica needs the local stack's moto (test_moto_regions.py).
        signing = environment["TOKEN_SIGNING_KEY_ID"]
        assert kms.get_public_key(KeyId=signing)["PublicKey"] == (
            home.get_public_key(KeyId=signing)["PublicKey"]
        )
        mac = environment["REFRESH_TOKEN_KEY_ID"]
        made = {
            client.generate_mac(KeyId=mac, Message=b"refresh", MacAlgorithm="HMAC_SHA_256")["Mac"]
            for client in (home, kms)
        }
        assert len(made) == 1
