"""The OpenAPI document and the app's routes, held against each other both ways."""

from __future__ import annotations

import re
from typing import Any

import pytest
from openapi_spec_validator import validate

from chalicelib import errors
from chalicelib.api.openapi import document
from chalicelib.api.wire import schema_name

# OPTIONS is every path's CORS preflight (chalicelib/api/cors.py registers one beside each
# route); the document says so once in its description instead of once per path.
PREFLIGHT = "OPTIONS"
METHODS = {"get", "put", "post", "delete", "patch", "head", "options"}


def app_routes() -> set[tuple[str, str]]:
    from app import app

    return {
        (path, method.lower())
        for path, entries in app.routes.items()
        for method in entries
        if method != PREFLIGHT
    }


def documented() -> set[tuple[str, str]]:
    return {
        (path, method)
        for path, item in document()["paths"].items()
        for method in item
        if method in METHODS
    }


def test_the_document_is_valid_openapi_3_1() -> None:
    spec = document("https://auth.example.com")

    validate(spec)
    assert spec["openapi"].startswith("3.1")


def test_every_route_is_documented() -> None:
    assert sorted(app_routes() - documented()) == []


def test_every_documented_route_exists() -> None:
    assert sorted(documented() - app_routes()) == []


def test_every_path_answers_preflights() -> None:
    from app import app

    assert all(PREFLIGHT in entries for entries in app.routes.values())


def operations() -> list[tuple[str, str, dict[str, Any]]]:
    return [
        (path, method, op)
        for path, item in document()["paths"].items()
        for method, op in item.items()
        if method in METHODS
    ]


@pytest.mark.parametrize(("path", "method", "op"), operations())
def test_every_operation_names_its_security_and_statuses(
    path: str, method: str, op: dict[str, Any]
) -> None:
    statuses = set(op["responses"])

    assert op["operationId"] and op["summary"]
    if op["security"]:
        assert {"400", "401", "403", "503"} <= statuses, path
        assert {name for option in op["security"] for name in option} == {"apiKey", "userToken"}


def documented_codes(node: Any) -> set[str]:
    """Every code named in an `enum` under a problem's or an OAuth error's schema."""
    found: set[str] = set()
    if isinstance(node, dict):
        for key, value in node.items():
            if key in ("code", "error") and isinstance(value, dict) and "enum" in value:
                found.update(value["enum"])
            else:
                found |= documented_codes(value)
    elif isinstance(node, list):
        for item in node:
            found |= documented_codes(item)
    return found


def test_every_documented_code_is_in_the_catalogue() -> None:
    catalogue = set(errors.PROBLEMS) | {p.code for p in errors.OAUTH_ERRORS}

    assert sorted(documented_codes(document()) - catalogue) == []


def test_every_catalogue_code_a_route_can_answer_is_documented() -> None:
    # Answered by API Gateway (throttling, unknown routes), by the data-plane authorizer
    # (workspace_required, invalid_path), by Chalice for a method or an Accept the route
    # lacks, or for a bug: never by an operation of this document.
    not_from_an_operation = {"too_many_requests", "internal_error", "method_not_allowed",
                             "not_found", "invalid_request", "workspace_required",
                             "invalid_path"}
    codes = documented_codes(document())
    missing = set(errors.PROBLEMS) - codes - not_from_an_operation

    assert sorted(missing) == []


def test_examples_hold_no_secret() -> None:
    text = str(document())

    assert "svc_" + "0" not in text and "eyJ" not in text
    assert "<the API key" in text  # a placeholder, not a key


def declared_operations() -> list[Any]:
    from chalicelib.api.openapi import DECLARED

    return list(DECLARED)


def with_models() -> list[Any]:
    """The declared operations with a body or a query model (no DELETE has either)."""
    return [op for op in declared_operations() if op.body is not None or op.query is not None]


@pytest.mark.parametrize("op", with_models(), ids=lambda op: f"{op.method} {op.path}")
def test_every_code_a_declared_model_refuses_with_is_documented_for_its_operation(op: Any) -> None:
    from chalicelib.api.wire import Invalid

    entry = document()["paths"][op.path][op.method.lower()]
    documented_400 = documented_codes(entry["responses"]["400"])
    refused = {
        marker.problem.code
        for model in (op.body, op.query)
        if model is not None
        for info in model.model_fields.values()
        for marker in info.metadata
        if isinstance(marker, Invalid)
    }

    assert sorted(refused - documented_400) == []


@pytest.mark.parametrize("op", declared_operations(), ids=lambda op: f"{op.method} {op.path}")
def test_every_problem_a_declared_operation_answers_is_documented_under_its_status(
    op: Any,
) -> None:
    entry = document()["paths"][op.path][op.method.lower()]
    declared = [*(op.policy.problems if op.policy is not None else ()), *op.problems]
    undocumented = [
        (problem.status, problem.code)
        for problem in declared
        if problem.code not in documented_codes(entry["responses"].get(str(problem.status), {}))
    ]

    assert declared or op.method != "DELETE"  # a DELETE answers at least its policy's 403
    assert undocumented == []


@pytest.mark.parametrize("op", declared_operations(), ids=lambda op: f"{op.method} {op.path}")
def test_a_declared_operations_schemas_are_its_models(op: Any) -> None:
    spec = document()
    entry = spec["paths"][op.path][op.method.lower()]
    schemas = spec["components"]["schemas"]

    if op.body is not None:
        name = entry["requestBody"]["content"]["application/json"]["schema"]["$ref"]
        assert name.rsplit("/", 1)[-1] == schema_name(op.body)
        assert set(schemas[schema_name(op.body)]["properties"]) == {
            info.alias or field for field, info in op.body.model_fields.items()
        }
    else:
        # Without a body model (every DELETE): no request body is documented either.
        assert "requestBody" not in entry
    if op.response is not None:
        content = entry["responses"][str(op.status)]["content"]["application/json"]
        assert content["schema"]["$ref"].rsplit("/", 1)[-1] == schema_name(op.response)
    else:
        # Without a response model: its success is documented, and bodiless (a 204).
        assert "content" not in entry["responses"][str(op.status)]
    # The path's parameters are documented as the path names them, required.
    parameters = [
        spec["components"]["parameters"][p["$ref"].rsplit("/", 1)[-1]] if "$ref" in p else p
        for p in [*spec["paths"][op.path].get("parameters", []), *entry.get("parameters", [])]
    ]
    in_path = {p["name"] for p in parameters if p["in"] == "path" and p["required"]}
    assert in_path == set(re.findall(r"{(\w+)}", op.path))


def test_every_operation_is_generated_from_a_declaration() -> None:
    from chalicelib.api.openapi import DECLARED, PUBLIC

    declared = {(op.path, op.method.lower()) for op in (*DECLARED, *PUBLIC)}

    assert sorted(documented() ^ declared) == []
    assert len(declared) == len(DECLARED) + len(PUBLIC)  # each declared once


def test_every_schema_is_a_model() -> None:
    import importlib
    import pkgutil

    from pydantic import BaseModel

    import chalicelib.api

    wire_modules = [
        importlib.import_module(f"chalicelib.api.{info.name}")
        for info in pkgutil.iter_modules(chalicelib.api.__path__)
        if info.name == "wire" or info.name.endswith("_models")
    ]
    models = {
        schema_name(value)
        for module in wire_modules
        for value in vars(module).values()
        if isinstance(value, type) and issubclass(value, BaseModel)
    }
    names = document()["components"]["schemas"]

    assert sorted(set(names) - models) == []


def test_the_error_bodies_name_the_catalogues_codes() -> None:
    schemas = document()["components"]["schemas"]

    assert schemas["Problem"]["properties"]["code"]["enum"] == sorted(errors.PROBLEMS)
    assert schemas["OAuthError"]["properties"]["error"]["enum"] == sorted(
        {entry.code for entry in errors.OAUTH_ERRORS}
    )


FORM_ONLY = ["application/x-www-form-urlencoded"]


@pytest.mark.parametrize(
    ("path", "method", "media_types", "routed"),
    [
        (
            "/v1/auth/exchange",
            "post",
            ["application/json", "application/x-www-form-urlencoded"],
            ["application/json", "application/x-www-form-urlencoded"],
        ),
        # Any other body reaches the view, which answers it in RFC 6749's error shape.
        ("/v1/oauth/token", "post", FORM_ONLY, ["*/*"]),
        ("/v1/oauth/revoke", "post", FORM_ONLY, ["*/*"]),
        ("/v1/oauth/register", "post", ["application/json"], ["application/json"]),
    ],
)
def test_a_public_operations_body_media_types_are_the_routes(
    path: str, method: str, media_types: list[str], routed: list[str]
) -> None:
    from app import app

    entry = document()["paths"][path][method]

    assert list(entry["requestBody"]["content"]) == media_types
    assert app.routes[path][method.upper()].content_types == routed


def test_the_openapi_builder_stays_small() -> None:
    from pathlib import Path

    import chalicelib

    root = Path(str(chalicelib.__file__)).parent
    lines = sum(len(p.read_text().splitlines()) for p in root.rglob("*openapi*.py"))

    assert lines <= 500


def test_no_service_checks_the_manager_policy_again() -> None:
    """Authorize once: the declared policy, at the edge (`api/operations.py`)."""
    from pathlib import Path

    import chalicelib

    root = Path(str(chalicelib.__file__)).parent
    callers = sorted(
        str(path.relative_to(root))
        for path in root.rglob("*.py")
        if "require_manager(" in path.read_text()
    )

    assert callers == ["access/policy.py"]


def test_the_token_endpoints_documented_form_takes_every_registered_grant() -> None:
    from chalicelib.api.grants.registry import grant_types

    form = document()["components"]["schemas"]["TokenEndpointForm"]
    assert sorted(form["discriminator"]["mapping"]) == sorted(grant_types())
