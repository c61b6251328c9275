"""Creates the table and KMS keys of `infra/resources.json` through the AWS APIs.

The local stack and the functional tests build their resources from the same template the
cloud deployment uses, so local and cloud cannot drift. (moto's CloudFormation ignores
`KeySpec` and the TTL specification, so the template is read here and applied with the
API calls themselves.)
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

TEMPLATE = Path(__file__).resolve().parent.parent / "infra" / "resources.json"


def load_template(path: Path = TEMPLATE) -> dict[str, Any]:
    return json.loads(path.read_text())


def resolve(value: Any, stage: str) -> Any:
    """The few intrinsic functions our names use: Fn::Sub with ${Stage} and ${AWS::...}."""
    if isinstance(value, dict) and "Fn::Sub" in value:
        text = value["Fn::Sub"]
        return re.sub(r"\$\{Stage\}", stage, text)
    return value


def resources_of_type(template: dict[str, Any], kind: str) -> dict[str, dict[str, Any]]:
    return {
        name: resource["Properties"]
        for name, resource in template["Resources"].items()
        if resource["Type"] == kind
    }


def create_table(dynamodb: Any, properties: dict[str, Any], stage: str) -> str:
    name = resolve(properties["TableName"], stage)
    existing = dynamodb.list_tables()["TableNames"]
    if name not in existing:
        dynamodb.create_table(
            TableName=name,
            AttributeDefinitions=properties["AttributeDefinitions"],
            KeySchema=properties["KeySchema"],
            BillingMode=properties["BillingMode"],
        )
        dynamodb.get_waiter("table_exists").wait(TableName=name)
    ttl = properties.get("TimeToLiveSpecification")
    if ttl:
        dynamodb.update_time_to_live(
            TableName=name,
            TimeToLiveSpecification={"AttributeName": ttl["AttributeName"], "Enabled": True},
        )
    return name


def create_keys(kms: Any, template: dict[str, Any], stage: str) -> dict[str, str]:
    """Each aliased KMS key, created with its KeySpec and KeyUsage; returns alias → key id."""
    keys = resources_of_type(template, "AWS::KMS::Key")
    existing = {a["AliasName"]: a.get("TargetKeyId") for a in kms.list_aliases()["Aliases"]}
    created: dict[str, str] = {}
    for alias in resources_of_type(template, "AWS::KMS::Alias").values():
        alias_name = resolve(alias["AliasName"], stage)
        if alias_name in existing and existing[alias_name]:
            created[alias_name] = existing[alias_name]  # type: ignore[assignment]
            continue
        key = keys[alias["TargetKeyId"]["Ref"]]
        key_id = kms.create_key(
            Description=key.get("Description", ""),
            KeySpec=key["KeySpec"],
            KeyUsage=key["KeyUsage"],
        )["KeyMetadata"]["KeyId"]
        kms.create_alias(AliasName=alias_name, TargetKeyId=key_id)
        created[alias_name] = key_id
    return created


def create_all(dynamodb: Any, kms: Any, stage: str = "dev") -> dict[str, Any]:
    template = load_template()
    tables = [
        create_table(dynamodb, properties, stage)
        for properties in resources_of_type(template, "AWS::DynamoDB::Table").values()
    ]
    return {"tables": tables, "keys": create_keys(kms, template, stage)}
