"""The global stage (`make package STAGE=… REPLICA_REGIONS=r2,r3`): one template, one stack per
Region, held as CloudFormation would evaluate it in each of the three Regions."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path
from typing import Any
from unittest import mock

import pytest

from infra.global_stage import (
    MRSC_REGION_SETS,
    MULTI_REGION_ADMINISTRATION,
    Regions,
    parse_regions,
)
from infra.template import PROJECT_DIR, Stack, TemplateError, load_template, stage_environment
from tools.package import BIN_DIR, PackageError, package, package_dir, stage_regions

STAGE = "prod"
HOME, REPLICAS = "us-east-1", "us-east-2,us-west-2"
ALL_REGIONS = {region for members in MRSC_REGION_SETS.values() for region in members}

# -- which Regions --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("home", "replicas"),
    [
        ("us-east-1", "eu-west-1,ap-southeast-2"),  # Sydney is in no MRSC Region set
        ("us-east-1", "us-east-2,eu-west-1"),  # two sets
        ("eu-west-1", "eu-west-2,ap-northeast-1"),
    ],
)
def test_regions_outside_one_mrsc_region_set_are_refused(home: str, replicas: str) -> None:
    with pytest.raises(TemplateError) as refused:
        parse_regions(home, replicas)

    assert "Region set" in str(refused.value)
    assert "eu-west-1, eu-west-2, eu-west-3, eu-central-1" in str(refused.value)


@pytest.mark.parametrize(
    "replicas",
    ["us-east-2", "us-east-2,us-west-2,eu-west-1", "us-east-1,us-east-2", "us-east-2,us-east-2"],
)
def test_strong_consistency_needs_two_regions_besides_the_home(replicas: str) -> None:
    with pytest.raises(TemplateError) as refused:
        parse_regions("us-east-1", replicas)

    assert "exactly three" in str(refused.value)


def test_a_malformed_region_name_is_refused() -> None:
    with pytest.raises(TemplateError) as refused:
        parse_regions("us-east-1", "us-east-2,US_WEST_2")

    assert "not an AWS Region name" in str(refused.value)


@pytest.mark.parametrize(
    ("home", "replicas"),
    [("us-east-1", " us-east-2 , us-west-2 "), ("eu-central-1", "eu-west-1,eu-west-2")],
)
def test_three_regions_of_one_set_make_a_global_stage(home: str, replicas: str) -> None:
    regions = parse_regions(home, replicas)

    assert regions.home == home
    assert regions.all == (home, *(r.strip() for r in replicas.split(",")))


def test_package_refuses_a_region_pair_strong_consistency_cannot_span() -> None:
    with pytest.raises(PackageError) as refused:
        stage_regions("eu-west-1,ap-southeast-2", {"AWS_DEFAULT_REGION": "us-east-1"})

    assert "us-east-1 (home), eu-west-1, ap-southeast-2 are not all in one Region set" in str(
        refused.value
    )


def test_without_replica_regions_the_stage_is_packaged_for_one_region_where_it_was() -> None:
    regions = stage_regions("", {"AWS_DEFAULT_REGION": "us-east-1"})

    assert regions is None
    assert package_dir(STAGE) == PROJECT_DIR / "build" / "package" / STAGE
    assert package_dir(STAGE, global_stage=True) != package_dir(STAGE)


def planned_package(*variables: str) -> str:
    planned = subprocess.run(
        ["make", "--no-print-directory", "-n", "package", f"STAGE={STAGE}", *variables],
        cwd=PROJECT_DIR, capture_output=True, text=True, check=True, timeout=60,
    ).stdout
    return next(line for line in planned.splitlines() if "-m tools.package" in line)


def test_make_package_passes_replica_regions_only_when_given() -> None:
    global_command = planned_package(f"REPLICA_REGIONS={REPLICAS}")
    one_region_command = planned_package()

    assert global_command.split()[-2:] == ["--replica-regions", REPLICAS]
    assert "--replica-regions" not in one_region_command


# -- the packaged template, evaluated in each Region ---------------------------------------


@pytest.fixture(scope="module")
def template() -> dict[str, Any]:
    """The prod stage's global package; packaged (chalice, cfn-lint) if it is not there yet."""
    path = package_dir(STAGE, global_stage=True) / "sam.json"
    if not path.is_file():
        with mock.patch.dict(os.environ, {"AWS_DEFAULT_REGION": HOME}):
            package(STAGE, REPLICAS)
    loaded: dict[str, Any] = json.loads(path.read_text())
    return loaded


@pytest.fixture(scope="module")
def regions(template: dict[str, Any]) -> Regions:
    """The Regions the package was made for (its pinned parameters)."""
    parameters = template["Parameters"]
    replicas = parameters["ReplicaRegions"]["Default"]
    return parse_regions(parameters["HomeRegion"]["Default"], replicas)


def in_region(template: dict[str, Any], region: str) -> Stack:
    return Stack(template, {"AWS::Region": region})


def test_the_home_stack_alone_creates_the_table_strongly_consistent_in_three_regions(
    template: dict[str, Any], regions: Regions
) -> None:
    home = in_region(template, regions.home)
    (table,) = home.resources("AWS::DynamoDB::GlobalTable").values()

    assert table["Properties"]["MultiRegionConsistency"] == "STRONG"
    assert [r["Region"] for r in table["Properties"]["Replicas"]] == list(regions.all)
    assert "GlobalTableWitnesses" not in table["Properties"]  # three full replicas
    assert table["DeletionPolicy"] == table["UpdateReplacePolicy"] == "Retain"
    for region in regions.all:
        assert in_region(template, region).resources("AWS::DynamoDB::Table") == {}
    for region in regions.replicas:
        assert in_region(template, region).resources("AWS::DynamoDB::GlobalTable") == {}


def test_the_global_table_keeps_the_tables_keys_index_recovery_and_protection(
    template: dict[str, Any], regions: Regions
) -> None:
    one_region = load_template()["Resources"]["AuthTable"]["Properties"]
    (table,) = in_region(template, regions.home).resources("AWS::DynamoDB::GlobalTable").values()
    properties = table["Properties"]

    for name in ("TableName", "BillingMode", "AttributeDefinitions", "KeySchema"):
        assert properties[name] == Stack(template, {}).value(one_region[name])
    assert properties["GlobalSecondaryIndexes"] == one_region["GlobalSecondaryIndexes"]
    for replica in properties["Replicas"]:
        assert replica["PointInTimeRecoverySpecification"] == {"PointInTimeRecoveryEnabled": True}
        assert replica["DeletionProtectionEnabled"] is True  # prod
    # Strong consistency does not support TTL deletion; the code treats a record past its
    # `ttl` as gone whether or not DynamoDB deleted it (docs/scaling.md).
    assert "TimeToLiveSpecification" not in properties
    assert "StreamSpecification" not in properties  # MRSC does not replicate by streams


def test_every_key_is_a_multi_region_primary_at_home_and_its_replica_elsewhere(
    template: dict[str, Any], regions: Regions
) -> None:
    home = in_region(template, regions.home)
    primaries = home.resources("AWS::KMS::Key")

    assert primaries and home.resources("AWS::KMS::ReplicaKey") == {}
    assert all(key["Properties"]["MultiRegion"] is True for key in primaries.values())
    for region in regions.replicas:
        stack = in_region(template, region)
        replicas = stack.resources("AWS::KMS::ReplicaKey")
        assert stack.resources("AWS::KMS::Key") == {}
        assert {name.removesuffix("Replica") for name in replicas} == set(primaries)
        for name, replica in replicas.items():
            primary = name.removesuffix("Replica")
            declared = template["Resources"][name]["Properties"]["PrimaryKeyArn"]
            assert declared == {"Ref": f"{primary}PrimaryArn"}
            policy = replica["Properties"]["KeyPolicy"]
            assert policy == primaries[primary]["Properties"]["KeyPolicy"]


def test_each_region_names_its_own_key_behind_the_alias_the_functions_use(
    template: dict[str, Any], regions: Regions
) -> None:
    configured = stage_environment(STAGE)
    key_ids = {configured[name] for name in ("KEY_ENCRYPTION_KEY_ID", "REFRESH_TOKEN_KEY_ID",
                                             "TOKEN_SIGNING_KEY_ID")}

    for region in regions.all:
        stack = in_region(template, region)
        kind = "AWS::KMS::Key" if region == regions.home else "AWS::KMS::ReplicaKey"
        keys = stack.resources(kind)
        aliases = {
            alias["Properties"]["AliasName"]: alias["Properties"]["TargetKeyId"]
            for alias in stack.resources("AWS::KMS::Alias").values()
        }
        assert key_ids <= set(aliases)
        assert all(list(target) == ["Ref"] for target in aliases.values())
        assert {target["Ref"] for target in aliases.values()} == set(keys)


REGION_NAME = re.compile(r"\b[a-z]{2}-[a-z]+-[0-9]\b")


def test_the_functions_reach_only_their_own_regions_table_and_keys(
    template: dict[str, Any], regions: Regions
) -> None:
    table_name = f"memory-auth-{STAGE}"

    for region in regions.all:
        stack = in_region(template, region)  # `${AWS::Region}` evaluates to `region`
        here = set(stack.resources())
        for name, function in stack.resources("AWS::Serverless::Function").items():
            env = function["Properties"]["Environment"]["Variables"]
            # Lambda sets AWS_REGION to the function's own Region; nothing overrides it.
            assert not {"AWS_REGION", "AWS_DEFAULT_REGION", "AWS_ENDPOINT_URL"} & set(env), name
            assert env["AUTH_TABLE"] == table_name
            assert not REGION_NAME.search(json.dumps(env)), name
        for policy in stack.resources("AWS::IAM::Policy").values():
            named = set(REGION_NAME.findall(json.dumps(policy)))
            assert named <= {region}, (region, policy["Properties"]["PolicyName"], named)
            for statement in policy["Properties"]["PolicyDocument"]["Statement"]:
                for resource in statement["Resource"]:
                    if any(action.startswith("dynamodb:") for action in statement["Action"]):
                        arn = resource  # an Fn::Sub, evaluated
                        assert arn.startswith(f"arn:${{AWS::Partition}}:dynamodb:{region}:")
                        assert f":table/{table_name}" in arn
                    if any(action.startswith("kms:") for action in statement["Action"]):
                        key, attribute = resource["Fn::GetAtt"]
                        assert attribute == "Arn" and key in here, (region, key)


def test_replica_stacks_take_the_primary_key_arns_the_home_stack_outputs(
    template: dict[str, Any], regions: Regions
) -> None:
    home = in_region(template, regions.home)
    outputs = {
        name: output for name, output in template["Outputs"].items() if name.endswith("PrimaryArn")
    }
    rule = template["Rules"]["ReplicaRegionsNameTheirPrimaryKeys"]
    required = {assertion["Assert"]["Fn::Not"][0]["Fn::Equals"][0]["Ref"]
                for assertion in rule["Assertions"]}

    assert {f"{key}PrimaryArn" for key in home.resources("AWS::KMS::Key")} == required
    assert required <= set(outputs) and set(outputs) <= set(template["Parameters"])
    for name, output in outputs.items():
        assert output["Value"] == {"Fn::GetAtt": [name.removesuffix("PrimaryArn"), "Arn"]}
        key_at_home = name.removesuffix("PrimaryArn") in home.resources("AWS::KMS::Key")
        assert home.condition(output["Condition"]) == key_at_home
        for region in regions.replicas:
            assert not in_region(template, region).condition(output["Condition"])
    pattern = template["Parameters"]["KeyEncryptionKeyPrimaryArn"]["AllowedPattern"]
    primary = f"arn:aws:kms:{regions.home}:111122223333:key/mrk-" + "0" * 32
    assert re.fullmatch(pattern, primary)
    assert not re.fullmatch(pattern, primary.replace(regions.home, regions.replicas[0]))
    assert not re.fullmatch(pattern, primary.replace("mrk-", ""))  # a single-Region key


def test_key_policies_let_administrators_replicate_keys_and_move_their_primary(
    template: dict[str, Any], regions: Regions
) -> None:
    for region in regions.all:
        stack = in_region(template, region)
        keys = {**stack.resources("AWS::KMS::Key"), **stack.resources("AWS::KMS::ReplicaKey")}
        for name, key in keys.items():
            administers = key["Properties"]["KeyPolicy"]["Statement"][0]
            assert set(MULTI_REGION_ADMINISTRATION) <= set(administers["Action"]), (region, name)


def test_the_global_package_is_lint_clean(template: dict[str, Any], tmp_path: Path) -> None:
    path = tmp_path / "sam.json"
    path.write_text(json.dumps(template))

    linted = subprocess.run(
        [str(BIN_DIR / "cfn-lint"), str(path)], capture_output=True, text=True, timeout=300
    )

    assert linted.returncode == 0, linted.stdout[-3000:]
    assert REGION_NAME.search(template["Parameters"]["HomeRegion"]["Default"])
    assert set(template["Parameters"]["HomeRegion"]["AllowedValues"]) <= ALL_REGIONS


def test_every_function_of_the_global_stage_expires_items_by_its_sweep(
    template: dict[str, Any], regions: Regions
) -> None:
    """No TTL under MRSC: each function is told (EXPIRY_BY_SWEEP=1), so its writes put items
    with a `ttl` in the sparse index `Expiry` and the sweep deletes them."""
    for region in regions.all:
        functions = in_region(template, region).resources("AWS::Serverless::Function")
        assert functions
        for function in functions.values():
            assert function["Properties"]["Environment"]["Variables"]["EXPIRY_BY_SWEEP"] == "1"


def test_the_sweep_reads_outboxes_and_expired_items_from_sparse_indexes_not_a_scan() -> None:
    table = load_template()["Resources"]["AuthTable"]["Properties"]
    indexes = {i["IndexName"]: i for i in table["GlobalSecondaryIndexes"]}
    assert [k["AttributeName"] for k in indexes["Outbox"]["KeySchema"]] == [
        "outboxShard", "outboxAt"
    ]
    assert [k["AttributeName"] for k in indexes["Expiry"]["KeySchema"]] == ["ttlShard", "ttl"]
    sweep = load_template()["Resources"]["SweepPolicy"]["Properties"]["PolicyDocument"]
    actions = {a for s in sweep["Statement"] for a in _list(s["Action"])}
    assert "dynamodb:Scan" not in actions and "dynamodb:DeleteItem" in actions


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]
