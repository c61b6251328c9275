"""How each function runs once deployed: Python 3.13, the memory the sizing model chose, and
SnapStart on published versions behind a `live` alias that everything invokes.

Checked twice: in the packaged template (what `make package` writes and cfn-lint reads), and
after the SAM transform that CloudFormation runs on it (aws-sam-translator, the same code), so
that the generated versions, aliases and references are seen, not assumed.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from samtranslator.translator.transform import transform

from bench import lambda_model
from tests.infra.conftest import Packaged

RUNTIME = "python3.13"
ALIAS = "live"
FUNCTIONS = ("APIHandler", "Authorizer")  # what API Gateway invokes
API_GATEWAY = "apigateway.amazonaws.com"
CHALICE_NAMES = {"APIHandler": "apiHandler", "Authorizer": "authorizer"}  # bench/lambda_model


def integration_uris(template: dict[str, Any], body_property: str) -> list[Any]:
    body = template["Resources"]["RestAPI"]["Properties"][body_property]
    return [
        operation["x-amazon-apigateway-integration"]["uri"]
        for operations in body["paths"].values()
        for operation in operations.values()
    ]


# -- the packaged template ---------------------------------------------------------------


def test_every_function_runs_python_3_13(packaged: Packaged) -> None:
    assert set(FUNCTIONS) <= set(packaged.functions())
    for name, function in packaged.functions().items():
        assert function["Properties"]["Runtime"] == RUNTIME, name


def test_each_function_has_the_memory_the_sizing_model_reads(packaged: Packaged) -> None:
    memory = lambda_model.packaged_memory()
    for name in FUNCTIONS:
        function = packaged.functions()[name]
        assert function["Properties"]["MemorySize"] == memory[CHALICE_NAMES[name]], name
        assert function["Properties"]["MemorySize"] > lambda_model.DEFAULT_MEMORY_MB, name


def test_both_functions_start_from_a_snapstart_snapshot_of_a_published_version(
    packaged: Packaged,
) -> None:
    for name in FUNCTIONS:
        properties = packaged.functions()[name]["Properties"]

        assert properties["SnapStart"] == {"ApplyOn": "PublishedVersions"}, name
        assert properties["AutoPublishAlias"] == ALIAS, name
        # A new version (and snapshot) for any change, configuration included: otherwise
        # the alias would go on serving the old environment or memory size.
        assert properties["AutoPublishAliasAllProperties"] is True, name


def test_api_gateway_invokes_the_api_handler_through_its_alias_only(packaged: Packaged) -> None:
    uris = integration_uris(packaged.template, "DefinitionBody")

    assert uris
    for uri in uris:
        text, variables = uri["Fn::Sub"]
        assert text.endswith("/functions/${Alias}/invocations")
        assert variables == {"Alias": {"Ref": "APIHandler.Alias"}}


def test_api_gateway_may_invoke_the_aliases_only(packaged: Packaged) -> None:
    permissions = [
        p["Properties"]
        for p in packaged.resources("AWS::Lambda::Permission").values()
        if p["Properties"]["Principal"] == API_GATEWAY
    ]

    assert sorted(p["FunctionName"]["Ref"] for p in permissions) == sorted(
        f"{function}.Alias" for function in FUNCTIONS
    )


# -- after the SAM transform -------------------------------------------------------------


class NoManagedPolicies:
    """The transform asks for AWS managed policies only for a function's `Policies`; ours
    have roles of their own, so it never needs IAM (and never an account)."""

    def load(self) -> dict[str, str]:
        return {}


@pytest.fixture(scope="module")
def transformed(packaged: Packaged, monkeypatch_module: pytest.MonkeyPatch) -> dict[str, Any]:
    template = copy.deepcopy(packaged.template)
    for function in template["Resources"].values():
        if function.get("Type") == "AWS::Serverless::Function":
            # `aws cloudformation package` uploads the zip and writes its S3 address here.
            function["Properties"]["CodeUri"] = "s3://artifacts/memory-auth/deployment.zip"
    parameters = {name: spec["Default"] for name, spec in template["Parameters"].items()}
    monkeypatch_module.setenv("AWS_DEFAULT_REGION", "us-east-1")
    result: dict[str, Any] = transform(template, parameters, NoManagedPolicies())
    return result


@pytest.fixture(scope="module")
def monkeypatch_module() -> Any:
    with pytest.MonkeyPatch.context() as patch:
        yield patch


def of_type(template: dict[str, Any], kind: str) -> dict[str, dict[str, Any]]:
    return {n: r for n, r in template["Resources"].items() if r["Type"] == kind}


def live_alias(template: dict[str, Any], function: str) -> str:
    """The logical id of `function`'s `live` alias, which must point at its one version."""
    (alias,) = [
        name
        for name, alias in of_type(template, "AWS::Lambda::Alias").items()
        if alias["Properties"]["FunctionName"] == {"Ref": function}
    ]
    properties = template["Resources"][alias]["Properties"]
    (version,) = [
        name
        for name, version in of_type(template, "AWS::Lambda::Version").items()
        if version["Properties"]["FunctionName"] == {"Ref": function}
    ]
    assert properties["Name"] == ALIAS
    assert properties["FunctionVersion"] == {"Fn::GetAtt": [version, "Version"]}
    return alias


def test_after_the_transform_each_function_is_published_with_snapstart_behind_live(
    transformed: dict[str, Any],
) -> None:
    functions = of_type(transformed, "AWS::Lambda::Function")

    assert set(FUNCTIONS) <= set(functions)
    for name in FUNCTIONS:
        function = functions[name]
        assert function["Properties"]["SnapStart"] == {"ApplyOn": "PublishedVersions"}, name
        assert function["Properties"]["Runtime"] == RUNTIME, name
        live_alias(transformed, name)


def test_after_the_transform_api_gateway_and_its_permissions_name_the_aliases_only(
    transformed: dict[str, Any],
) -> None:
    aliases = {function: live_alias(transformed, function) for function in FUNCTIONS}
    (authorizer,) = of_type(transformed, "AWS::ApiGateway::Authorizer").values()
    permissions = [
        p
        for p in of_type(transformed, "AWS::Lambda::Permission").values()
        if p["Properties"]["Principal"] == API_GATEWAY
    ]

    for uri in integration_uris(transformed, "Body"):
        assert uri["Fn::Sub"][1] == {"Alias": {"Ref": aliases["APIHandler"]}}
    assert authorizer["Properties"]["AuthorizerUri"]["Fn::Sub"][1] == {
        "Alias": {"Ref": aliases["Authorizer"]}
    }
    assert sorted(p["Properties"]["FunctionName"]["Ref"] for p in permissions) == sorted(
        aliases.values()
    )
    assert transformed["Outputs"]["AuthorizerArn"]["Value"] == {"Ref": aliases["Authorizer"]}
    # Nothing else may name a function's unqualified ARN (it would bypass the snapshot).
    text = json.dumps(transformed)
    for function in FUNCTIONS:
        assert f"${{{function}.Arn}}" not in text
        assert json.dumps({"Fn::GetAtt": [function, "Arn"]}) not in text
