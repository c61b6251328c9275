"""make package and make deploy: what they check, and the commands they build."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from chalice.constants import MISSING_DEPENDENCIES_TEMPLATE

from infra.template import (
    NO_PREVIOUS_SLOT,
    PROJECT_DIR,
    REQUEST_ORIGIN,
    STAGES,
    TemplateError,
    load_template,
    merge_template,
    parameters,
    signing_key_aliases,
    stack,
    stage_environment,
)
from tools import deploy
from tools.package import (
    PackageError,
    integrate_with_alias,
    packaging_environment,
    unvendored_dependencies,
)

# -- package ------------------------------------------------------------------------------


def test_chalices_vendoring_warning_fails_the_package() -> None:
    output = "Creating deployment package.\n" + MISSING_DEPENDENCIES_TEMPLATE % (
        "cryptography==50.0.2\nPyJWT==2.15.1"
    )

    assert unvendored_dependencies(output) == ["cryptography==50.0.2", "PyJWT==2.15.1"]


def test_a_clean_chalice_run_has_no_unvendored_dependencies() -> None:
    output = "Creating deployment package.\nReusing existing deployment package.\n"

    assert unvendored_dependencies(output) == []


def chalice_output(*extra_uses: str) -> dict[str, Any]:
    """The shape of what `chalice package` writes: integrations invoking the function."""
    uri = "arn:${AWS::Partition}:apigateway:${AWS::Region}:lambda:path/2015-03-31/functions/"
    integration = {"uri": {"Fn::Sub": uri + "${APIHandler.Arn}/invocations"}}
    paths = {"/a": {"get": {"x-amazon-apigateway-integration": integration}}}
    resources: dict[str, Any] = {
        "RestAPI": {"Properties": {"DefinitionBody": {"paths": paths}}},
    }
    for index, use in enumerate(extra_uses):
        resources[f"Other{index}"] = {"Properties": {"Uri": {"Fn::Sub": use}}}
    outputs = {"APIHandlerArn": {"Value": {"Fn::GetAtt": ["APIHandler", "Arn"]}}}
    return {"Resources": resources, "Outputs": outputs}


def test_integrations_and_the_arn_output_are_pointed_at_the_alias() -> None:
    template = chalice_output()

    assert integrate_with_alias(template) == 1
    integration = template["Resources"]["RestAPI"]["Properties"]["DefinitionBody"]["paths"]
    text, variables = integration["/a"]["get"]["x-amazon-apigateway-integration"]["uri"]["Fn::Sub"]
    assert text.endswith("/functions/${Alias}/invocations")
    assert variables == {"Alias": {"Ref": "APIHandler.Alias"}}
    assert template["Outputs"]["APIHandlerArn"]["Value"] == {"Ref": "APIHandler.Alias"}


def test_any_other_unqualified_invocation_fails_the_package() -> None:
    template = chalice_output("x/functions/${APIHandler.Arn}/invocations")

    with pytest.raises(PackageError):
        integrate_with_alias(template)


def test_packaging_never_sees_the_callers_aws_credentials() -> None:
    env = packaging_environment(
        {
            "PATH": "/bin",
            "AWS_PROFILE": "prod-admin",
            "AWS_SESSION_TOKEN": "t",
            "AWS_REGION": "eu-west-1",
        }
    )

    assert "AWS_PROFILE" not in env and "AWS_SESSION_TOKEN" not in env
    assert env["AWS_ACCESS_KEY_ID"] == "packaging-needs-no-account"
    assert env["AWS_DEFAULT_REGION"] == "eu-west-1"
    assert env["PATH"] == "/bin"


@pytest.mark.parametrize("stage", STAGES)
def test_stage_parameters_come_from_the_stage_configuration(stage: str) -> None:
    configured = stage_environment(stage)
    values = parameters(stage)
    aliases = signing_key_aliases(load_template(), stage)

    # Whichever slot the stage signs with today (the runbook moves it): the one whose alias
    # the configuration names, and the previous slot likewise, or none.
    assert values["Stage"] == stage
    assert aliases[values["SigningKeySlot"]] == configured["TOKEN_SIGNING_KEY_ID"]
    previous = configured.get("TOKEN_PREVIOUS_SIGNING_KEY_ID", "").strip()
    if previous:
        assert aliases[values["PreviousSigningKeySlot"]] == previous
    else:
        assert values["PreviousSigningKeySlot"] == NO_PREVIOUS_SLOT
    origins = json.loads(configured.get("ALLOWED_ORIGINS") or "[]")
    assert values["GatewayAllowOrigin"] == (
        f"'{origins[0]}'" if len(origins) == 1 else REQUEST_ORIGIN if origins else ""
    )
    assert merge_template(stage)["Parameters"]["Stage"]["AllowedValues"] == [stage]


def test_a_signing_key_the_template_does_not_declare_is_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(
        "infra.template.stage_environment",
        lambda stage: {"TOKEN_SIGNING_KEY_ID": "alias/memory-auth-dev-token-signing"},
    )

    with pytest.raises(TemplateError, match="TOKEN_SIGNING_KEY_ID"):
        parameters("dev", load_template())


# The README's runbook ("Rotating the signing key") from a to b, and the next rotation back
# to a: (signing slot, previous slot) as each deployment's configuration names them.
RUNBOOK = [
    ("a", None),  # before
    ("a", "b"),  # 1. publish the new key
    ("b", "a"),  # 3. sign with it
    ("b", None),  # 5. retire the old key
    ("b", "a"),  # the next rotation: publish a fresh key in slot a
    ("a", "b"),
    ("a", None),
]


@pytest.mark.parametrize("stage", STAGES)
def test_each_step_of_the_rotation_runbook_packages_the_slots_it_names(
    stage: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    configured = stage_environment(stage)
    aliases = signing_key_aliases(load_template(), stage)
    for current, previous in RUNBOOK:
        step = {**configured, "TOKEN_SIGNING_KEY_ID": aliases[current]}
        step.pop("TOKEN_PREVIOUS_SIGNING_KEY_ID", None)
        if previous is not None:
            step["TOKEN_PREVIOUS_SIGNING_KEY_ID"] = aliases[previous]
        monkeypatch.setattr("infra.template.stage_environment", lambda _, step=step: step)

        template = merge_template(stage)
        created = stack(stage, template)

        pinned = {name: spec["AllowedValues"] for name, spec in template["Parameters"].items()}
        assert pinned["SigningKeySlot"] == [current], (current, previous)
        assert pinned["PreviousSigningKeySlot"] == [previous or NO_PREVIOUS_SLOT]
        keys = {created.alias_of(key) for key in created.resources("AWS::KMS::Key")}
        signing = {aliases[current]} | ({aliases[previous]} if previous else set())
        assert keys == signing | {
            configured["KEY_ENCRYPTION_KEY_ID"],
            configured["REFRESH_TOKEN_KEY_ID"],
        }, (current, previous)


@pytest.mark.parametrize(
    ("origins", "allow_origin"),
    [
        ("", ""),
        ("[]", ""),
        ('["https://app.example.com"]', "'https://app.example.com'"),
        ('["https://app.example.com", "https://admin.example.com"]', REQUEST_ORIGIN),
    ],
)
def test_cross_origin_calls_follow_the_stage_allowed_origins(
    monkeypatch: pytest.MonkeyPatch, origins: str, allow_origin: str
) -> None:
    monkeypatch.setattr(
        "infra.template.stage_environment",
        lambda stage: {
            "TOKEN_SIGNING_KEY_ID": f"alias/memory-auth-{stage}-token-signing-a",
            "ALLOWED_ORIGINS": origins,
        },
    )

    assert parameters("dev", load_template())["GatewayAllowOrigin"] == allow_origin


def test_a_stage_with_a_malformed_origin_list_is_not_packaged(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(
        "infra.template.stage_environment",
        lambda stage: {
            "TOKEN_SIGNING_KEY_ID": f"alias/memory-auth-{stage}-token-signing-a",
            "ALLOWED_ORIGINS": '"https://app.example.com"',  # not a list
        },
    )

    with pytest.raises(TemplateError) as refused:
        parameters("dev", load_template())
    assert "ALLOWED_ORIGINS" in str(refused.value)


def test_a_stage_with_an_origin_the_service_would_refuse_is_not_packaged(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Quoted into API Gateway's answers as it is: only an origin as browsers write it.
    monkeypatch.setattr(
        "infra.template.stage_environment",
        lambda stage: {
            "TOKEN_SIGNING_KEY_ID": f"alias/memory-auth-{stage}-token-signing-a",
            "ALLOWED_ORIGINS": '["https://app.example.com\'"]',
        },
    )

    with pytest.raises(TemplateError) as refused:
        parameters("dev", load_template())
    assert "ALLOWED_ORIGINS" in str(refused.value)


# -- deploy -------------------------------------------------------------------------------

PACKAGED = {
    "Parameters": {
        "Stage": {"Type": "String", "Default": "prod", "AllowedValues": ["prod"]},
        "SigningKeySlot": {"Type": "String", "Default": "b", "AllowedValues": ["b"]},
        "PreviousSigningKeySlot": {"Type": "String", "Default": "a", "AllowedValues": ["a"]},
    }
}


def test_deploy_uploads_the_package_then_deploys_it_with_every_parameter_explicit() -> None:
    directory = Path("build/package/prod")

    steps = deploy.commands("prod", "artifacts-bucket", "eu-west-1", directory, PACKAGED)

    assert steps[0] == [
        "aws", "cloudformation", "package",
        "--region", "eu-west-1",
        "--template-file", "build/package/prod/sam.json",
        "--s3-bucket", "artifacts-bucket",
        "--s3-prefix", "memory-auth/prod",
        "--output-template-file", "build/package/prod/packaged.json",
        "--use-json",
    ]
    assert steps[1] == [
        "aws", "cloudformation", "deploy",
        "--region", "eu-west-1",
        "--template-file", "build/package/prod/packaged.json",
        "--stack-name", "memory-auth-prod",
        "--capabilities", "CAPABILITY_IAM", "CAPABILITY_AUTO_EXPAND",
        "--parameter-overrides",
        "PreviousSigningKeySlot=a", "SigningKeySlot=b", "Stage=prod",
        "--tags", "app=memory-auth", "stage=prod",
        "--no-fail-on-empty-changeset",
    ]


def test_prod_is_protected_from_stack_deletion_and_dev_is_not() -> None:
    prod = deploy.commands("prod", "b", "eu-west-1", Path("p"), PACKAGED)
    dev = deploy.commands("dev", "b", "eu-west-1", Path("d"), {"Parameters": {}})

    assert prod[-1][:3] == ["aws", "cloudformation", "update-termination-protection"]
    assert "--enable-termination-protection" in prod[-1]
    assert len(dev) == 2


def test_deploy_refuses_without_bucket_or_region(capsys: pytest.CaptureFixture[str]) -> None:
    no_bucket = deploy.main(["--stage", "dev", "--dry-run"], environ={"AWS_REGION": "eu-west-1"})
    no_region = deploy.main(["--stage", "dev", "--dry-run"], environ={"DEPLOY_BUCKET": "b"})

    assert no_bucket == 2 and no_region == 2
    assert "DEPLOY_BUCKET" in capsys.readouterr().err


def test_deploy_dry_run_prints_the_commands_for_the_packaged_stage(
    capsys: pytest.CaptureFixture[str],
) -> None:
    status = deploy.main(
        ["--stage", "dev", "--dry-run"],
        environ={"DEPLOY_BUCKET": "artifacts-bucket", "AWS_REGION": "eu-west-1"},
    )
    printed = capsys.readouterr().out

    assert status == 0
    assert "+ aws cloudformation deploy --region eu-west-1" in printed
    assert "--stack-name memory-auth-dev" in printed
    assert "Stage=dev" in printed
    assert "update-termination-protection" not in printed
    assert printed.rstrip().endswith("older than the one before 'live'")


@pytest.mark.parametrize(
    ("published", "live", "stale"),
    [
        (["$LATEST", "1"], "1", []),
        (["$LATEST", "1", "2"], "2", []),  # the one before live is kept, to roll back to
        (["$LATEST", "1", "2", "3", "4"], "4", ["1", "2"]),
        (["$LATEST", "9", "10", "11", "12"], "11", ["9"]),  # numbers, not text; 12 is newer
        (["$LATEST", "3"], "5", []),  # nothing is ever deleted on a surprise
    ],
)
def test_deploy_deletes_only_versions_older_than_the_one_before_live(
    published: list[str], live: str, stale: list[str]
) -> None:
    assert deploy.stale_versions(published, live) == stale


def test_deploy_names_every_missing_or_malformed_input_at_once_before_building(
    capsys: pytest.CaptureFixture[str],
) -> None:
    status = deploy.main(
        ["--stage", "qa", "--check-inputs"],
        environ={"DEPLOY_BUCKET": "My_Bucket", "AWS_REGION": "Ireland"},
    )

    assert status == 2
    lines = capsys.readouterr().err.splitlines()
    assert all(line.startswith("make deploy: ") for line in lines)
    said = "\n".join(lines)
    assert "unknown stage 'qa'" in said
    assert "DEPLOY_BUCKET='My_Bucket' is not an S3 bucket name" in said
    assert "AWS_REGION='Ireland' is not a Region name" in said


def test_deploy_input_check_needs_no_package(capsys: pytest.CaptureFixture[str]) -> None:
    status = deploy.main(
        ["--stage", "staging", "--check-inputs", "--dry-run"],
        environ={"DEPLOY_BUCKET": "artifacts-bucket", "AWS_REGION": "eu-west-1"},
    )

    assert status == 0
    assert capsys.readouterr().err == ""


def test_make_deploy_checks_its_inputs_before_it_packages() -> None:
    makefile = (PROJECT_DIR / "Makefile").read_text()
    recipe = makefile.split("\ndeploy:", 1)[1].split("\n\n", 1)[0]

    assert "package" not in recipe.splitlines()[0]  # not a prerequisite: it would run first
    check, build = recipe.index("--check-inputs"), recipe.index("package STAGE=")
    assert check < build
