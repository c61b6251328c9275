"""The local stack's resources are the template's, created with the AWS APIs on moto."""

from __future__ import annotations

import boto3
import pytest
from moto import mock_aws

from infra.template import STAGES, stack
from local.resources import create_all


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
