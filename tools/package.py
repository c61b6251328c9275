"""`make package STAGE=…`: the stage's CloudFormation template, checked, in build/package/<stage>/.

    python -m tools.package --stage dev|staging|prod [--replica-regions r2,r3]

1. Renders `infra/resources.json` for the stage (infra/template.py) into `merge.json`. With
   `--replica-regions` (`make package REPLICA_REGIONS=…`) the stage is global: the packaging
   Region (`AWS_REGION`, default us-east-1) is its home, and the template is made global
   (infra/global_stage.py: a multi-Region strongly consistent table, multi-Region keys, one
   stack per Region), in build/package/<stage>-global/.
2. Runs `chalice package --merge-template merge.json`, which writes `sam.json` and
   `deployment.zip`. Chalice prints a warning and still exits 0 when it could not build a
   dependency for Lambda; that warning fails the package here.
3. Points API Gateway's integrations (and the `APIHandlerArn` output) at the API handler's
   `live` alias instead of the function itself, which Chalice writes there: with SnapStart,
   only published versions start from a snapshot, and an alias names the current one. (The
   invoke permission is on the alias through `infra/resources.json`.)
4. Runs `cfn-lint` on `sam.json`.

Packaging never needs an AWS account: it runs with placeholder credentials, whatever the
caller's environment holds, so that the result depends on the repository alone.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from chalice.constants import MISSING_DEPENDENCIES_TEMPLATE

from infra.global_stage import Regions, expire_by_sweep, global_template, parse_regions
from infra.template import PROJECT_DIR, STAGES, TemplateError, merge_template

BUILD_DIR = PROJECT_DIR / "build" / "package"
BIN_DIR = Path(sys.executable).parent
# The first line of the warning Chalice prints when it cannot vendor a dependency.
MISSING_DEPENDENCIES = MISSING_DEPENDENCIES_TEMPLATE.strip().splitlines()[0]


class PackageError(Exception):
    pass


def package_dir(stage: str, global_stage: bool = False) -> Path:
    return BUILD_DIR / (f"{stage}-global" if global_stage else stage)


def packaging_environment(environ: Mapping[str, str]) -> dict[str, str]:
    """The caller's environment without AWS credentials or profiles, plus placeholders."""
    env = {k: v for k, v in environ.items() if not k.startswith("AWS_")}
    env.update(
        {
            "AWS_ACCESS_KEY_ID": "packaging-needs-no-account",
            "AWS_SECRET_ACCESS_KEY": "packaging-needs-no-account",
            "AWS_DEFAULT_REGION": environ.get("AWS_DEFAULT_REGION")
            or environ.get("AWS_REGION")
            or "us-east-1",
        }
    )
    return env


def unvendored_dependencies(output: str) -> list[str]:
    """The packages Chalice reported it could not build for Lambda (its warning, parsed)."""
    lines = output.splitlines()
    for index, line in enumerate(lines):
        if line.strip() == MISSING_DEPENDENCIES:
            missing = []
            for follower in lines[index + 1 :]:
                if not follower.strip() or follower.startswith("You will have to"):
                    break
                missing.append(follower.strip())
            return missing or ["(unnamed)"]
    return []


API_HANDLER = "APIHandler"
ALIAS = "live"  # infra/resources.json: AutoPublishAlias
UNQUALIFIED = "/functions/${%s.Arn}/invocations"
QUALIFIED = "/functions/${Alias}/invocations"


def alias_reference(function: str) -> dict[str, str]:
    """SAM's name for the alias AutoPublishAlias creates (a Ref, which cfn-lint also reads)."""
    return {"Ref": f"{function}.Alias"}


def integrate_with_alias(template: dict[str, Any], function: str = API_HANDLER) -> int:
    """Rewrites every API Gateway integration of `function` (and the output Chalice gives its
    ARN) to name its alias; returns how many integrations. Raises if the template still
    invokes the function unqualified anywhere after that."""
    unqualified = UNQUALIFIED % function
    output = template.get("Outputs", {}).get(f"{function}Arn")
    if output is not None:
        output["Value"] = alias_reference(function)
        output["Description"] = f"{function}'s {ALIAS} alias: what API Gateway invokes."
    rewritten = 0
    body = template["Resources"]["RestAPI"]["Properties"]["DefinitionBody"]
    for operations in body.get("paths", {}).values():
        for operation in operations.values():
            integration = operation.get("x-amazon-apigateway-integration", {})
            uri = integration.get("uri")
            if isinstance(uri, dict) and unqualified in uri.get("Fn::Sub", ""):
                text = uri["Fn::Sub"].replace(unqualified, QUALIFIED)
                integration["uri"] = {"Fn::Sub": [text, {"Alias": alias_reference(function)}]}
                rewritten += 1
    if unqualified in json.dumps(template):
        raise PackageError(f"the template still invokes {function} without its alias")
    return rewritten


def run(command: list[str], env: Mapping[str, str]) -> str:
    """Runs `command` in the project, echoing and returning its combined output."""
    completed = subprocess.run(  # noqa: S603 - fixed argument lists, no shell
        command,
        cwd=PROJECT_DIR,
        env=dict(env),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        check=False,
    )
    sys.stdout.write(completed.stdout)
    if completed.returncode != 0:
        raise PackageError(f"{Path(command[0]).name} failed (exit {completed.returncode})")
    return completed.stdout


def stage_regions(replica_regions: str, env: Mapping[str, str]) -> Regions | None:
    """A global stage's Regions (home: the packaging Region), or None for one Region."""
    if not replica_regions.strip():
        return None
    try:
        return parse_regions(env["AWS_DEFAULT_REGION"], replica_regions)
    except TemplateError as error:
        raise PackageError(str(error)) from None


def package(stage: str, replica_regions: str = "") -> Path:
    if stage not in STAGES:
        raise PackageError(f"unknown stage {stage!r}; one of {', '.join(STAGES)}")
    env = packaging_environment(os.environ)
    regions = stage_regions(replica_regions, env)
    out = package_dir(stage, global_stage=regions is not None)
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    merge = out / "merge.json"
    rendered = merge_template(stage)
    if regions is not None:
        rendered = global_template(rendered, regions)
    merge.write_text(json.dumps(rendered, indent=2) + "\n")

    output = run(
        [str(BIN_DIR / "chalice"), "package", "--stage", stage, "--merge-template", str(merge),
         str(out)],
        env,
    )
    missing = unvendored_dependencies(output)
    if missing:
        raise PackageError(
            "Chalice could not build these dependencies for Lambda: " + ", ".join(missing)
        )
    template = out / "sam.json"
    if not template.is_file() or not (out / "deployment.zip").is_file():
        raise PackageError(f"chalice package wrote no sam.json and deployment.zip in {out}")
    packaged = json.loads(template.read_text())
    if not integrate_with_alias(packaged):
        raise PackageError("chalice package wrote no API Gateway integration to point at")
    if regions is not None:
        expire_by_sweep(packaged)
    template.write_text(json.dumps(packaged, indent=2) + "\n")
    run([str(BIN_DIR / "cfn-lint"), str(template)], env)
    return template


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stage", required=True, choices=STAGES)
    parser.add_argument(
        "--replica-regions",
        default="",
        help="two more Regions (r2,r3): package the stage global, homed in AWS_REGION",
    )
    args = parser.parse_args(argv)
    started = time.monotonic()
    try:
        template = package(args.stage, args.replica_regions)
    except PackageError as error:
        print(f"make package: {error}", file=sys.stderr)
        return 1
    elapsed = time.monotonic() - started
    print(f"==> {template.relative_to(PROJECT_DIR)}: packaged and lint-clean in {elapsed:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
