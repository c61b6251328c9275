"""A stage in three Regions: the stage's template made global (docs/scaling.md).

`make package STAGE=… REPLICA_REGIONS=r2,r3` packages one template that is deployed as one
stack per Region: first in the home Region (the packaging Region, `AWS_REGION`), then in each
replica Region. What differs between the Regions is decided by `IsHomeRegion`:

- the table is an `AWS::DynamoDB::GlobalTable` with multi-Region strong consistency, created
  by the home stack only (CloudFormation controls a global table from one stack), with a
  replica in each of the three Regions;
- each KMS key is a multi-Region primary key in the home stack, and an `AWS::KMS::ReplicaKey`
  of it in every other stack, behind the same alias; the home stack's outputs
  `<Key>PrimaryArn` are the replica stacks' parameters of the same names;
- the functions, their roles and the API exist in every stack and name the table and the
  keys of their own Region (the same table name and aliases everywhere; ARNs with
  `${AWS::Region}`), so a function never calls another Region.

Multi-Region strong consistency allows exactly three Regions, all in one of its Region sets.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from infra.template import Stack, TemplateError

# The Region sets a multi-Region strongly consistent table may span (DynamoDB developer
# guide, "Consistency modes"; AWS CDK checks the same sets). All three Regions in one set.
MRSC_REGION_SETS = {
    "US": ("us-east-1", "us-east-2", "us-west-2"),
    "EU": ("eu-west-1", "eu-west-2", "eu-west-3", "eu-central-1"),
    "AP": ("ap-northeast-1", "ap-northeast-2", "ap-northeast-3"),
}
REPLICAS_REQUIRED = 2  # with the home Region: the three Regions MRSC requires
_REGION = re.compile(r"[a-z]{2}(-[a-z]+)+-[0-9]")

TABLE = "AuthTable"
EXPIRY_BY_SWEEP = "EXPIRY_BY_SWEEP"
IS_HOME = "IsHomeRegion"
IS_REPLICA = "IsReplicaRegion"
REPLICA_SUFFIX = "Replica"
PRIMARY_ARN_SUFFIX = "PrimaryArn"
NO_PRIMARY = "none"  # the home stack's value of the replica stacks' <Key>PrimaryArn
# What the account's administrators may do to a multi-Region key besides what they may do to
# any key: replicate the primary (the replica stacks do), and move the primary to another
# Region (failover of key administration; both keys' policies must allow it).
MULTI_REGION_ADMINISTRATION = ("kms:ReplicateKey", "kms:UpdatePrimaryRegion")


@dataclass(frozen=True)
class Regions:
    home: str
    replicas: tuple[str, ...]

    @property
    def all(self) -> tuple[str, ...]:
        return (self.home, *self.replicas)


def parse_regions(home: str, replica_regions: str) -> Regions:
    """The stage's Regions from `REPLICA_REGIONS` ("r2,r3") and the home Region; raises
    TemplateError unless they are three distinct Regions of one MRSC Region set."""
    replicas = tuple(r.strip() for r in replica_regions.split(",") if r.strip())
    for region in (home, *replicas):
        if not _REGION.fullmatch(region):
            raise TemplateError(f"{region!r} is not an AWS Region name")
    if len(replicas) != REPLICAS_REQUIRED or len({home, *replicas}) != 1 + REPLICAS_REQUIRED:
        raise TemplateError(
            f"REPLICA_REGIONS must name two Regions other than the home Region {home}: "
            "multi-Region strong consistency needs exactly three"
        )
    if not any(set((home, *replicas)) <= set(members) for members in MRSC_REGION_SETS.values()):
        sets = "; ".join(f"{name}: {', '.join(m)}" for name, m in MRSC_REGION_SETS.items())
        raise TemplateError(
            f"{home} (home), {', '.join(replicas)} are not all in one Region set that "
            f"multi-Region strong consistency supports ({sets}); set AWS_REGION to the home "
            "Region and REPLICA_REGIONS to two others of its set"
        )
    return Regions(home, replicas)


def table_arn(table_name: str) -> str:
    """The ARN, in `Fn::Sub` syntax, of the table's replica in the stack's own Region."""
    return "arn:${AWS::Partition}:dynamodb:${AWS::Region}:${AWS::AccountId}:table/" + table_name


def _rewrite(node: Any, rewrite: Callable[[Any], Any | None]) -> Any:
    """`node` with every sub-node `rewrite` answers for (not None) replaced by its answer."""
    replaced = rewrite(node)
    if replaced is not None:
        return replaced
    if isinstance(node, list):
        return [_rewrite(item, rewrite) for item in node]
    if isinstance(node, dict):
        return {key: _rewrite(item, rewrite) for key, item in node.items()}
    return node


def _sub_text(node: Any) -> str | None:
    if isinstance(node, dict) and list(node) == ["Fn::Sub"]:
        argument = node["Fn::Sub"]
        return argument if isinstance(argument, str) else argument[0]
    return None


def global_template(template: Mapping[str, Any], regions: Regions) -> dict[str, Any]:
    """The stage's merge template (`merge_template`) made global for `regions`."""
    rendered = copy.deepcopy(dict(template))
    resources: dict[str, Any] = rendered["Resources"]
    table = resources[TABLE]
    if table.get("Type") != "AWS::DynamoDB::Table":
        raise TemplateError(f"{TABLE} is not the AWS::DynamoDB::Table this module makes global")
    name_text = _sub_text(table["Properties"]["TableName"])
    if name_text is None:
        raise TemplateError(f"{TABLE}'s TableName is not an Fn::Sub string")
    keys = [n for n, r in resources.items() if r.get("Type") == "AWS::KMS::Key"]
    # Which keys this stage's package creates (its slots are pinned): their replicas must
    # name a primary.
    pinned = Stack(rendered, {})
    existing_keys = [key for key in keys if pinned.exists(key)]

    rendered = _rewrite(rendered, _reference_rewriter(name_text, keys))
    resources = rendered["Resources"]
    conditions = rendered.setdefault("Conditions", {})
    parameters = rendered.setdefault("Parameters", {})
    outputs = rendered.setdefault("Outputs", {})

    parameters["HomeRegion"] = {
        "Type": "String",
        "Default": regions.home,
        "AllowedValues": [regions.home],
        "Description": "The Region whose stack creates the global table and the primary keys.",
    }
    parameters["ReplicaRegions"] = {
        "Type": "String",
        "Default": ",".join(regions.replicas),
        "AllowedValues": [",".join(regions.replicas)],
        "Description": "The two other Regions of the stage: one stack each, after the home's.",
    }
    conditions[IS_HOME] = {"Fn::Equals": [{"Ref": "AWS::Region"}, {"Ref": "HomeRegion"}]}
    conditions[IS_REPLICA] = {"Fn::Not": [{"Condition": IS_HOME}]}

    resources[TABLE] = _global_table(table, regions)

    for key in keys:
        resource = resources[key]
        stage_condition = resource.get("Condition")
        home, replica = IS_HOME, IS_REPLICA
        if stage_condition is not None:
            home, replica = f"{key}InHomeRegion", f"{key}InReplicaRegion"
            conditions[home] = {"Fn::And": [{"Condition": stage_condition}, {"Condition": IS_HOME}]}
            conditions[replica] = {
                "Fn::And": [{"Condition": stage_condition}, {"Condition": IS_REPLICA}]
            }
        resource["Condition"] = home
        resource["Properties"]["MultiRegion"] = True
        _allow_multi_region_administration(resource["Properties"]["KeyPolicy"])
        arn_parameter = key + PRIMARY_ARN_SUFFIX
        parameters[arn_parameter] = {
            "Type": "String",
            "Default": NO_PRIMARY,
            # Unused in the home stack; elsewhere the home stack's output of the same name.
            "AllowedPattern": (
                rf"^({NO_PRIMARY}|arn:aws[a-z-]*:kms:{re.escape(regions.home)}:[0-9]{{12}}"
                r":key/mrk-[0-9a-f]{32})$"
            ),
            "Description": f"In a replica Region: the home stack's output {arn_parameter}.",
        }
        resources[key + REPLICA_SUFFIX] = _replica_key(resource, replica, arn_parameter)
        outputs[arn_parameter] = {
            "Condition": home,
            "Description": f"{key}'s multi-Region primary: the replica stacks' {arn_parameter}.",
            "Value": {"Fn::GetAtt": [key, "Arn"]},
        }

    rules = rendered.setdefault("Rules", {})
    rules["DeployedInTheStagesRegions"] = {
        "Assertions": [
            {
                "Assert": {"Fn::Contains": [list(regions.all), {"Ref": "AWS::Region"}]},
                "AssertDescription": "Deploy this package in its home Region, then in each of "
                f"its replica Regions: {', '.join(regions.all)}.",
            }
        ]
    }
    rules["ReplicaRegionsNameTheirPrimaryKeys"] = {
        "RuleCondition": {
            "Fn::Not": [{"Fn::Equals": [{"Ref": "AWS::Region"}, {"Ref": "HomeRegion"}]}]
        },
        "Assertions": [
            {
                "Assert": {
                    "Fn::Not": [{"Fn::Equals": [{"Ref": key + PRIMARY_ARN_SUFFIX}, NO_PRIMARY]}]
                },
                "AssertDescription": f"A replica Region's stack needs {key}{PRIMARY_ARN_SUFFIX} "
                "from the home stack's outputs.",
            }
            for key in existing_keys
        ],
    }
    return rendered


def _reference_rewriter(table_name: str, keys: list[str]) -> Callable[[Any], Any | None]:
    """Every reference to the table names its replica in the stack's Region; every reference
    to a key names the primary in the home Region and the replica key elsewhere."""

    def key_in_this_region(key: str, attribute: str | None) -> dict[str, Any]:
        def of(resource: str) -> dict[str, Any]:
            if attribute is None:
                return {"Ref": resource}
            return {"Fn::GetAtt": [resource, attribute]}

        return {"Fn::If": [IS_HOME, of(key), of(key + REPLICA_SUFFIX)]}

    def rewrite(node: Any) -> Any | None:
        if not isinstance(node, dict) or len(node) != 1:
            return None
        (function, argument), = node.items()
        if function == "Ref" and argument == TABLE:
            return {"Fn::Sub": table_name}
        if function == "Fn::GetAtt" and argument[0] == TABLE:
            if argument[1] != "Arn":
                raise TemplateError(f"{TABLE}.{argument[1]} has no global equivalent here")
            return {"Fn::Sub": table_arn(table_name)}
        if function == "Ref" and argument in keys:
            return key_in_this_region(argument, None)
        if function == "Fn::GetAtt" and argument[0] in keys:
            return key_in_this_region(argument[0], argument[1])
        if function == "Fn::Sub":
            text = _sub_text(node) or ""
            for key in keys:
                if "${" + key + "." in text or "${" + key + "}" in text:
                    raise TemplateError(f"an Fn::Sub names {key}: write it as Ref or GetAtt")
            if "${" + TABLE + "}" in text:
                raise TemplateError(f"an Fn::Sub names {TABLE}: write it as Ref")
            if "${" + TABLE + ".Arn}" in text:
                replaced = text.replace("${" + TABLE + ".Arn}", table_arn(table_name))
                argument = node["Fn::Sub"]
                if isinstance(argument, str):
                    return {"Fn::Sub": replaced}
                return {"Fn::Sub": [replaced, argument[1]]}
        return None

    return rewrite


def expire_by_sweep(packaged: dict[str, Any]) -> None:
    """No TTL under MRSC: every function of the packaged global template is told
    (EXPIRY_BY_SWEEP=1), so its writes put expiring items in the sparse index `Expiry`, and
    the hourly sweep deletes what is past its `ttl` (chalicelib/table.py)."""
    for resource in packaged["Resources"].values():
        if resource.get("Type") in ("AWS::Serverless::Function", "AWS::Lambda::Function"):
            environment = resource.setdefault("Properties", {}).setdefault("Environment", {})
            environment.setdefault("Variables", {})[EXPIRY_BY_SWEEP] = "1"


def _global_table(table: Mapping[str, Any], regions: Regions) -> dict[str, Any]:
    """The single-Region table as a global table with multi-Region strong consistency."""
    properties = dict(table["Properties"])
    per_replica = {
        name: properties.pop(name)
        for name in ("PointInTimeRecoverySpecification", "DeletionProtectionEnabled")
        if name in properties
    }
    # MRSC does not support TTL deletion (DynamoDB developer guide, "Global tables core
    # concepts"): every read treats a record past its `ttl` as gone, and the sweep deletes
    # it (EXPIRY_BY_SWEEP, set on every function by `expire_by_sweep`).
    properties.pop("TimeToLiveSpecification", None)
    properties["MultiRegionConsistency"] = "STRONG"
    properties["Replicas"] = [{"Region": region, **per_replica} for region in regions.all]
    return {
        "Type": "AWS::DynamoDB::GlobalTable",
        "Condition": IS_HOME,
        "DeletionPolicy": table.get("DeletionPolicy", "Retain"),
        "UpdateReplacePolicy": table.get("UpdateReplacePolicy", "Retain"),
        "Properties": properties,
    }


def _allow_multi_region_administration(policy: dict[str, Any]) -> None:
    administers = policy["Statement"][0]
    if administers.get("Sid") != "AccountAdministersButCannotUse":
        raise TemplateError("a key policy's first statement is not the administrators'")
    administers["Action"] = sorted({*administers["Action"], *MULTI_REGION_ADMINISTRATION})


def _replica_key(primary: Mapping[str, Any], condition: str, arn_parameter: str) -> dict[str, Any]:
    """The primary key's replica in a replica Region: the same key material and key id, its
    own key policy (a copy of the primary's: the same roles' names in this stack)."""
    properties = primary["Properties"]
    replica: dict[str, Any] = {
        "Type": "AWS::KMS::ReplicaKey",
        "Condition": condition,
        "Properties": {
            "PrimaryKeyArn": {"Ref": arn_parameter},
            "KeyPolicy": copy.deepcopy(properties["KeyPolicy"]),
            **{
                name: copy.deepcopy(properties[name])
                for name in ("Description", "PendingWindowInDays")
                if name in properties
            },
        },
    }
    for policy in ("DeletionPolicy", "UpdateReplacePolicy"):
        if policy in primary:
            replica[policy] = primary[policy]
    return replica
