"""Creates the tables, KMS keys, event buses and queues of `infra/resources.json` with the
AWS APIs.

The local stack and the functional tests build their resources from the same template the
cloud deployment uses, evaluated for the stage exactly as CloudFormation would (its
parameters come from the stage's configuration, its conditions decide which signing-key
slots exist), so local and cloud cannot drift. moto's CloudFormation ignores `KeySpec` and
the TTL specification, so the template is read here and applied with the API calls
themselves. What moto cannot honour (key policies, point-in-time recovery, deletion
protection) is left to the cloud; it does not change how the code behaves.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from infra.template import stack

TABLE_STRUCTURE = (
    "AttributeDefinitions",
    "KeySchema",
    "BillingMode",
    "GlobalSecondaryIndexes",
    "LocalSecondaryIndexes",
)


def create_table(dynamodb: Any, properties: dict[str, Any]) -> str:
    name = str(properties["TableName"])
    if name not in dynamodb.list_tables()["TableNames"]:
        dynamodb.create_table(
            TableName=name, **{p: properties[p] for p in TABLE_STRUCTURE if p in properties}
        )
        dynamodb.get_waiter("table_exists").wait(TableName=name)
    ttl = properties.get("TimeToLiveSpecification")
    if ttl and ttl.get("Enabled"):
        dynamodb.update_time_to_live(
            TableName=name,
            TimeToLiveSpecification={"AttributeName": ttl["AttributeName"], "Enabled": True},
        )
    return name


def create_keys(
    kms: Any, keys: dict[str, Any], aliases: dict[str, Any], multi_region: bool = False
) -> dict[str, str]:
    """Each aliased KMS key, with its KeySpec and KeyUsage (a multi-Region primary key if
    `multi_region`, as the global stage's home stack makes it); returns alias → key id."""
    existing = {a["AliasName"]: a.get("TargetKeyId") for a in kms.list_aliases()["Aliases"]}
    created: dict[str, str] = {}
    for alias in aliases.values():
        alias_name = str(alias["Properties"]["AliasName"])
        if existing.get(alias_name):
            created[alias_name] = existing[alias_name]
            continue
        key = keys[alias["Properties"]["TargetKeyId"]["Ref"]]["Properties"]
        key_id = kms.create_key(
            Description=key.get("Description", ""),
            KeySpec=key["KeySpec"],
            KeyUsage=key["KeyUsage"],
            MultiRegion=multi_region,
        )["KeyMetadata"]["KeyId"]
        if key.get("EnableKeyRotation"):
            kms.enable_key_rotation(KeyId=key_id)
        kms.create_alias(AliasName=alias_name, TargetKeyId=key_id)
        created[alias_name] = key_id
    return created


def create_buses(events: Any, buses: dict[str, Any]) -> list[str]:
    """Each EventBridge bus of the template, by name (a second run creates nothing)."""
    existing = {b["Name"] for b in events.list_event_buses()["EventBuses"]}
    names = []
    for bus in buses.values():
        name = str(bus["Properties"]["Name"])
        if name not in existing:
            events.create_event_bus(Name=name)
        names.append(name)
    return names


def create_queues(sqs: Any, queues: dict[str, Any]) -> list[str]:
    """Each SQS queue of the template, by name, its dead-letter queue first (a second run
    creates nothing): the redrive policy names the dead-letter queue's ARN."""
    arns: dict[str, str] = {}
    names: list[str] = []
    pending = dict(queues)
    while pending:
        for logical, queue in list(pending.items()):
            properties = queue["Properties"]
            redrive = properties.get("RedrivePolicy")
            target = redrive["deadLetterTargetArn"]["Fn::GetAtt"][0] if redrive else None
            if target is not None and target not in arns:
                continue
            attributes = {
                "VisibilityTimeout": str(properties.get("VisibilityTimeout", 30)),
                "MessageRetentionPeriod": str(properties.get("MessageRetentionPeriod", 345600)),
            }
            if target is not None:
                attributes["RedrivePolicy"] = json.dumps(
                    {"deadLetterTargetArn": arns[target],
                     "maxReceiveCount": redrive["maxReceiveCount"]}
                )
            name = str(properties["QueueName"])
            url = sqs.create_queue(QueueName=name, Attributes=attributes)["QueueUrl"]
            arns[logical] = sqs.get_queue_attributes(
                QueueUrl=url, AttributeNames=["QueueArn"]
            )["Attributes"]["QueueArn"]
            names.append(name)
            del pending[logical]
    return names


def replicate_keys(kms: Any, region: str, replica_kms: Any, keys: Mapping[str, str]) -> None:
    """Each multi-Region key of `keys` (alias → key id, from `kms`, the home Region's client)
    replicated into `region` under the same alias (`replica_kms` is that Region's client):
    the same key id and key material, as the global stage's `AWS::KMS::ReplicaKey` has."""
    existing = _aliases(replica_kms)
    for alias, key_id in keys.items():
        if alias in existing:
            continue
        kms.replicate_key(KeyId=key_id, ReplicaRegion=region)
        # AWS's aliases are each Region's own; moto's replica shares its primary's.
        if alias not in _aliases(replica_kms):
            replica_kms.create_alias(AliasName=alias, TargetKeyId=key_id)


def _aliases(kms: Any) -> set[str]:
    return {a["AliasName"] for a in kms.list_aliases()["Aliases"] if a.get("TargetKeyId")}


def create_all(
    dynamodb: Any,
    kms: Any,
    stage: str = "dev",
    events: Any | None = None,
    multi_region: bool = False,
    sqs: Any | None = None,
) -> dict[str, Any]:
    resources = stack(stage)
    tables = [
        create_table(dynamodb, table["Properties"])
        for table in resources.resources("AWS::DynamoDB::Table").values()
    ]
    keys = create_keys(
        kms,
        resources.resources("AWS::KMS::Key"),
        resources.resources("AWS::KMS::Alias"),
        multi_region,
    )
    buses = (
        create_buses(events, resources.resources("AWS::Events::EventBus"))
        if events is not None
        else []
    )
    queues = (
        create_queues(sqs, resources.resources("AWS::SQS::Queue")) if sqs is not None else []
    )
    return {"tables": tables, "keys": keys, "buses": buses, "queues": queues}


def create_replicas(
    stage: str, kms: Any, keys: Mapping[str, str], replicas: Mapping[str, tuple[Any, Any]]
) -> None:
    """The global stage's replica Regions, locally: each (Region → its KMS and EventBridge
    clients) gets a replica of every key of `keys` (multi-Region keys of `kms`, the home
    Region's client) under the same alias, and its own event buses. The table needs no
    replica: moto's DynamoDB is one store in every Region (`local/moto_server.py`)."""
    buses = stack(stage).resources("AWS::Events::EventBus")
    for region, (replica_kms, replica_events) in replicas.items():
        replicate_keys(kms, region, replica_kms, keys)
        create_buses(replica_events, buses)
