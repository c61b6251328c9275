"""`make deploy STAGE=…`: deploys the packaged template of a stage with the AWS CLI.

    DEPLOY_BUCKET=<artifact bucket> AWS_REGION=<region> python -m tools.deploy --stage prod
    python -m tools.deploy --stage prod --bucket <bucket> --region <region> --dry-run

It runs, in order (see `commands`):
1. `aws cloudformation package`: uploads build/package/<stage>/deployment.zip to the
   artifact bucket and writes a template that points at it;
2. `aws cloudformation deploy`: creates or updates the stack `memory-auth-<stage>`, passing
   every template parameter explicitly with the value the package was built for (an
   update would otherwise keep a parameter's previous value);
3. for prod, turns on the stack's termination protection;
4. deletes each function's published versions older than the one before `live` (`prune`):
   every deployment publishes a new version with SnapStart, the stack retains the old ones,
   and each keeps a cached snapshot billed until Lambda drops it after 14 days unused
   (README, Performance). The live version and the one before it (to roll back to) stay.

Credentials come from the caller's usual AWS configuration; nothing here names an account.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from infra.template import STAGES
from tools.package import package_dir

APP_NAME = "memory-auth"
CAPABILITIES = ["CAPABILITY_IAM", "CAPABILITY_AUTO_EXPAND"]


class DeployError(Exception):
    pass


def stack_name(stage: str) -> str:
    return f"{APP_NAME}-{stage}"


def packaged_parameters(template: Mapping[str, Any]) -> dict[str, str]:
    """Each parameter with the value the package was built for (its pinned default)."""
    values = {}
    for name, spec in template.get("Parameters", {}).items():
        if "Default" not in spec:
            raise DeployError(f"parameter {name} has no packaged value; run make package")
        values[name] = str(spec["Default"])
    return values


def commands(
    stage: str, bucket: str, region: str, directory: Path, template: Mapping[str, Any]
) -> list[list[str]]:
    packaged = directory / "packaged.json"
    overrides = [f"{k}={v}" for k, v in sorted(packaged_parameters(template).items())]
    steps = [
        [
            "aws", "cloudformation", "package",
            "--region", region,
            "--template-file", str(directory / "sam.json"),
            "--s3-bucket", bucket,
            "--s3-prefix", f"{APP_NAME}/{stage}",
            "--output-template-file", str(packaged),
            "--use-json",
        ],
        [
            "aws", "cloudformation", "deploy",
            "--region", region,
            "--template-file", str(packaged),
            "--stack-name", stack_name(stage),
            "--capabilities", *CAPABILITIES,
            "--parameter-overrides", *overrides,
            "--tags", f"app={APP_NAME}", f"stage={stage}",
            "--no-fail-on-empty-changeset",
        ],
    ]
    if stage == "prod":
        steps.append(
            [
                "aws", "cloudformation", "update-termination-protection",
                "--region", region,
                "--stack-name", stack_name(stage),
                "--enable-termination-protection",
            ]
        )
    return steps


FUNCTIONS = ("APIHandler", "Authorizer")  # the packaged functions' logical ids
ALIAS = "live"  # infra/resources.json: AutoPublishAlias
KEEP_BEFORE_LIVE = 1  # versions kept below the live one, to roll back to


def stale_versions(published: list[str], live: str, keep: int = KEEP_BEFORE_LIVE) -> list[str]:
    """The published versions to delete: those older than the live version and the `keep`
    before it. `$LATEST` and anything newer than live (a deployment in flight) stay."""
    numbered = sorted(int(v) for v in published if v.isdigit())
    older = [v for v in numbered if v < int(live)]
    return [str(v) for v in older[: max(0, len(older) - keep)]]


def prune(stage: str, region: str, dry_run: bool) -> None:
    """Deletes each function's stale versions (and with them their SnapStart snapshots)."""
    if dry_run:
        print(f"+ delete each function's versions older than the one before {ALIAS!r}")
        return
    import boto3

    stacks = boto3.client("cloudformation", region_name=region)
    functions = boto3.client("lambda", region_name=region)
    for logical_id in FUNCTIONS:
        name = stacks.describe_stack_resource(
            StackName=stack_name(stage), LogicalResourceId=logical_id
        )["StackResourceDetail"]["PhysicalResourceId"]
        live = functions.get_alias(FunctionName=name, Name=ALIAS)["FunctionVersion"]
        published = [
            version["Version"]
            for page in functions.get_paginator("list_versions_by_function").paginate(
                FunctionName=name
            )
            for version in page["Versions"]
        ]
        for version in stale_versions(published, live):
            print(f"+ aws lambda delete-function --function-name {name} --qualifier {version}")
            functions.delete_function(FunctionName=name, Qualifier=version)


# S3's rule for a bucket name (general purpose buckets), and the shape of a Region's name.
_BUCKET = re.compile(r"^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$")
_REGION = re.compile(r"^[a-z]{2}(-[a-z]+)+-[0-9]+$")


def input_problems(
    stage: str, bucket: str | None, region: str | None, need_cli: bool = True
) -> list[str]:
    """Every problem with deploy's inputs, one line each: `make deploy` checks them before
    it builds anything, so a missing bucket is said at once, not after packaging."""
    problems = []
    if stage not in STAGES:
        problems.append(f"unknown stage {stage!r}: STAGE is one of {', '.join(STAGES)}")
    if not bucket:
        problems.append("name the artifact bucket: DEPLOY_BUCKET=<bucket> (or ARGS=--bucket …)")
    elif not _BUCKET.fullmatch(bucket) or ".." in bucket:
        problems.append(f"DEPLOY_BUCKET={bucket[:70]!r} is not an S3 bucket name")
    if not region:
        problems.append("name the region: AWS_REGION=<region>, such as eu-west-1")
    elif not _REGION.fullmatch(region):
        problems.append(f"AWS_REGION={region[:30]!r} is not a Region name, such as eu-west-1")
    if need_cli and shutil.which("aws") is None:
        problems.append("the AWS CLI (aws) is not on the PATH: install it (AWS CLI v2)")
    return problems


def plan(
    stage: str, bucket: str | None, region: str | None, need_cli: bool = True
) -> list[list[str]]:
    problems = input_problems(stage, bucket, region, need_cli)
    if problems or not bucket or not region:
        raise DeployError("\n".join(problems))
    directory = package_dir(stage)
    template_file = directory / "sam.json"
    if not template_file.is_file():
        raise DeployError(f"{template_file} is missing: run make package STAGE={stage}")
    template = json.loads(template_file.read_text())
    return commands(stage, bucket, region, directory, template)


def main(argv: list[str] | None = None, environ: Mapping[str, str] = os.environ) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stage", required=True)
    parser.add_argument("--bucket", default=environ.get("DEPLOY_BUCKET"))
    parser.add_argument(
        "--region", default=environ.get("AWS_REGION") or environ.get("AWS_DEFAULT_REGION")
    )
    parser.add_argument("--dry-run", action="store_true", help="print the commands only")
    parser.add_argument(
        "--check-inputs", action="store_true",
        help="only check the stage, bucket, region and the AWS CLI (before make package)",
    )
    args = parser.parse_args(argv)
    try:
        if args.check_inputs:
            problems = input_problems(args.stage, args.bucket, args.region, not args.dry_run)
            if problems:
                raise DeployError("\n".join(problems))
            return 0
        steps = plan(args.stage, args.bucket, args.region, need_cli=not args.dry_run)
    except DeployError as error:
        for line in str(error).splitlines():
            print(f"make deploy: {line}", file=sys.stderr)
        return 2
    for step in steps:
        print("+ " + shlex.join(step), flush=True)
        if not args.dry_run:
            subprocess.run(step, check=True)  # noqa: S603, S607 - the AWS CLI, fixed arguments
    prune(args.stage, args.region, args.dry_run)
    return 0


if __name__ == "__main__":
    sys.exit(main())
