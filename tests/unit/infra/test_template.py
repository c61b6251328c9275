"""The template reader (infra/template.py): CloudFormation's functions, evaluated or refused."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import pytest

from infra.template import PROJECT_DIR, Stack, TemplateError

TEMPLATE: dict[str, Any] = {
    "Parameters": {"Stage": {"Type": "String"}, "Slot": {"Type": "String", "Default": "a"}},
    "Mappings": {"Retention": {"prod": {"Days": 90}, "dev": {"Days": 14}}},
    "Conditions": {
        "IsProd": {"Fn::Equals": [{"Ref": "Stage"}, "prod"]},
        "SlotB": {"Fn::Equals": [{"Ref": "Slot"}, "b"]},
        "ProdOrB": {"Fn::Or": [{"Condition": "IsProd"}, {"Condition": "SlotB"}]},
        "DevAndA": {
            "Fn::And": [
                {"Fn::Not": [{"Condition": "IsProd"}]},
                {"Fn::Not": [{"Condition": "SlotB"}]},
            ]
        },
    },
    "Resources": {
        "Table": {"Type": "AWS::DynamoDB::Table", "Properties": {"TableName": "t"}},
        "KeyB": {"Type": "AWS::KMS::Key", "Condition": "SlotB", "Properties": {}},
    },
}


def evaluate(node: Any, stage: str = "dev", **parameters: str) -> Any:
    return Stack(TEMPLATE, {"Stage": stage, **parameters}).value(node)


@pytest.mark.parametrize(
    ("node", "stage", "expected"),
    [
        ({"Ref": "Stage"}, "dev", "dev"),
        ({"Ref": "Slot"}, "dev", "a"),  # the parameter's default
        ({"Fn::Sub": "memory-auth-${Stage}"}, "prod", "memory-auth-prod"),
        ({"Fn::Sub": ["${Name}-x", {"Name": {"Ref": "Stage"}}]}, "dev", "dev-x"),
        ({"Fn::Sub": "${AWS::Region}:${Table.Arn}"}, "dev", "${AWS::Region}:${Table.Arn}"),
        ({"Fn::If": ["IsProd", "yes", "no"]}, "prod", "yes"),
        ({"Fn::If": ["IsProd", "yes", "no"]}, "dev", "no"),
        ({"Fn::FindInMap": ["Retention", {"Ref": "Stage"}, "Days"]}, "prod", 90),
        ({"Condition": "ProdOrB"}, "dev", False),
        ({"Condition": "DevAndA"}, "dev", True),
        ([1, {"Fn::If": ["IsProd", 2, {"Ref": "AWS::NoValue"}]}], "dev", [1]),
        ({"Ref": "Table"}, "dev", {"Ref": "Table"}),  # physical ids stay symbolic
        ({"Ref": "AWS::Region"}, "dev", {"Ref": "AWS::Region"}),
        ({"Fn::GetAtt": ["Table", "Arn"]}, "dev", {"Fn::GetAtt": ["Table", "Arn"]}),
        ({"Nested": {"Value": {"Ref": "Stage"}}}, "staging", {"Nested": {"Value": "staging"}}),
    ],
)
def test_the_functions_the_template_uses_evaluate_as_cloudformation_would(
    node: Any, stage: str, expected: Any
) -> None:
    assert evaluate(node, stage) == expected


@pytest.mark.parametrize(
    "node",
    [
        {"Fn::Join": ["-", ["memory", {"Ref": "Stage"}]]},
        {"Fn::Select": [0, ["a", "b"]]},
        {"Fn::ImportValue": "shared-table"},
        {"Properties": {"Name": {"Fn::Base64": "x"}}},  # also deep inside a value
        [{"Fn::Split": [",", "a,b"]}],
    ],
)
def test_a_function_the_reader_does_not_know_is_refused_not_passed_through(node: Any) -> None:
    with pytest.raises(TemplateError, match=r"Fn::\w+ is not an intrinsic function"):
        evaluate(node)


def test_a_ref_to_a_name_the_template_does_not_declare_is_refused() -> None:
    with pytest.raises(TemplateError, match="Nowhere"):
        evaluate({"Ref": "Nowhere"})


def test_a_resource_exists_only_where_its_condition_holds() -> None:
    assert set(Stack(TEMPLATE, {"Stage": "dev"}).resources()) == {"Table"}
    assert set(Stack(TEMPLATE, {"Stage": "dev", "Slot": "b"}).resources()) == {"Table", "KeyB"}


# -- layering: the local stack and the operator tools share this reader, never each other ---


def imported_top_level_packages(folder: Path) -> set[str]:
    found: set[str] = set()
    for path in folder.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                found.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                found.add(node.module.split(".")[0])
    return found


def test_the_template_reader_imports_neither_the_local_stack_nor_the_tools() -> None:
    assert not {"local", "tools", "chalicelib"} & imported_top_level_packages(PROJECT_DIR / "infra")


def test_the_operator_tools_never_import_the_local_stack() -> None:
    assert "local" not in imported_top_level_packages(PROJECT_DIR / "tools")
