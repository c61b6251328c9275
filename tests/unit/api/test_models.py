"""The wire models: a refused value answers the catalogue's code and detail, never pydantic's
message; the resources answer the documented fields in the documented order."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from pydantic import BaseModel

from chalicelib.api import keys_models, service_clients_models, webhooks_models
from chalicelib.api.operations import validated
from chalicelib.errors import ServiceError
from chalicelib.keys.model import KEY_LIFETIME, ApiKey

NOW = datetime(2026, 11, 21, 12, 0, tzinfo=UTC)


def refused(model: type[BaseModel], data: dict[str, Any], query: bool = False) -> ServiceError:
    try:
        validated(model, data, query=query)
    except ServiceError as error:
        return error
    raise AssertionError("accepted")


@pytest.mark.parametrize(
    ("body", "code", "detail"),
    [
        ({}, "invalid_label", "label is required."),
        ({"label": None}, "invalid_label", "label is required."),
        ({"label": 5}, "invalid_label", "label must be a string."),
        ({"label": " "}, "invalid_label", "label must be 1 to 100 characters."),
        ({"label": "a\u202eb"}, "invalid_label", "label must not contain control characters."),
        ({"label": "x", "category": 5}, "invalid_category", None),
        ({"label": "x", "workspaceId": 5}, "invalid_workspace_id", None),
        ({"label": "x", "scopes": "memory"}, "invalid_scope", "scopes must be a list of strings."),
        ({"label": "x", "scopes": [1]}, "invalid_scope", "scopes must be a list of strings."),
        ({"label": "x", "expiresInDays": 0}, "invalid_lifetime", None),
        ({"label": "x", "expiresInDays": 91}, "invalid_lifetime", None),
        ({"label": "x", "expiresInDays": True}, "invalid_lifetime", None),
        ({"label": "x", "expiresInDays": 5.0}, "invalid_lifetime", None),
        ({"label": "x", "expiresInDays": "5"}, "invalid_lifetime", None),
        ({"label": "x", "allowedCidrs": ["10.0.0.1/24"]}, "invalid_cidr", None),
        ({"label": "x", "expires_in_days": 5}, "unknown_field", "Unknown field: 'expires_in_"
         "days'."),
        ({"label": "", "zzz": 1, "aaa": 2}, "unknown_field", "Unknown field: 'aaa'."),
        (
            {"label": "x", "workspaceId": "ws_a", "workspace_id": "ws_b"},
            "conflicting_workspace_id",
            "workspaceId and workspace_id disagree.",
        ),
    ],
)
def test_a_refused_key_field_answers_its_catalogue_code(
    body: dict[str, Any], code: str, detail: str | None
) -> None:
    error = refused(keys_models.NewApiKey, body)

    assert (error.status, error.code) == (400, code)
    if detail is not None:
        assert error.detail == detail
    assert "pydantic" not in error.detail and "Input should" not in error.detail


def test_a_cidr_refusal_names_the_value() -> None:
    error = refused(keys_models.NewApiKey, {"label": "x", "allowedCidrs": ["nonsense"]})

    assert error.detail == "'nonsense' is not an IPv4 or IPv6 CIDR (such as 203.0.113.0/24)."


def test_a_cidr_with_host_bits_set_is_refused_naming_its_network() -> None:
    error = refused(keys_models.NewApiKey, {"label": "x", "allowedCidrs": ["10.0.0.1/24"]})

    assert (error.status, error.code) == (400, "invalid_cidr")
    assert error.detail == (
        "'10.0.0.1/24' has host bits set: write its network, 10.0.0.0/24, "
        "or the single address 10.0.0.1."
    )


def test_both_spellings_of_the_same_workspace_are_one_workspace() -> None:
    both = {"label": " x ", "workspaceId": "ws_a", "workspace_id": "ws_a"}
    body = validated(keys_models.NewApiKey, both)

    assert (body.label, body.workspace()) == ("x", "ws_a")


def test_the_older_spelling_alone_names_the_workspace() -> None:
    body = validated(keys_models.NewApiKey, {"label": "x", "workspace_id": "ws_a"})

    assert body.workspace() == "ws_a"


@pytest.mark.parametrize("limit", ["0", "101", "1000", "-1", "+5", " 5", "5.0", "٥", "x"])
def test_a_limit_outside_1_to_100_is_invalid_parameter(limit: str) -> None:
    error = refused(keys_models.KeyListQuery, {"limit": limit}, query=True)

    assert (error.code, error.detail) == (
        "invalid_parameter", "limit must be a whole number from 1 to 100."
    )


def test_an_unknown_query_parameter_is_named() -> None:
    error = refused(keys_models.KeyListQuery, {"limit": "5", "page": "2"}, query=True)

    assert (error.code, error.detail) == ("unknown_parameter", "Unknown query parameter: 'page'.")


def test_a_key_change_tells_an_omitted_allow_list_from_a_null_one() -> None:
    omitted = validated(keys_models.ApiKeyChanges, {"label": "y"})
    removed = validated(keys_models.ApiKeyChanges, {"allowedCidrs": None})

    assert "allowed_cidrs" not in omitted.model_fields_set
    assert "allowed_cidrs" in removed.model_fields_set
    assert refused(keys_models.ApiKeyChanges, {"label": None}).detail == "label is required."


def make_key() -> ApiKey:
    return ApiKey(
        id="key_01ARZ3NDEKTSV4RRFFQ69G5FAV",
        owner_id="usr_a",
        label="k",
        category="admin",
        workspace_id=None,
        scopes=("memory",),
        key_hash="0" * 64,
        created_at=NOW,
        expires_at=NOW + KEY_LIFETIME,
        hint="sv" "c_\u2026abcd",
    )


def test_the_key_resource_has_the_documented_fields_in_order_and_no_plaintext() -> None:
    body = keys_models.ApiKeyBody.of(make_key(), NOW).model_dump(mode="json", by_alias=True)

    assert list(body) == [
        "id", "label", "category", "workspaceId", "scopes", "status", "hint", "createdAt",
        "expiresAt", "revokedAt", "replacedBy", "revealable", "lastUsedAt", "allowedCidrs",
        "requestsPerDay", "dpopJkt",
    ]
    assert body["hint"] == "sv" "c_...abcd"
    assert body["createdAt"] == "2026-11-21T12:00:00Z"


def test_only_an_issued_key_carries_its_plaintext_last() -> None:
    body = keys_models.ApiKeyWithSecret.issued(make_key(), NOW, "x").model_dump(by_alias=True)

    assert list(body)[-1] == "key"
    assert body["key"] == "x"


def test_the_longest_credential_list_the_schema_allows_fits_the_revocation_body_limit() -> None:
    import json

    from chalicelib.api.credentials import MAX_REPORT_BYTES
    from chalicelib.scanning.revocation import MAX_CREDENTIAL_LENGTH, MAX_CREDENTIALS

    longest = {"credentials": ["x" * MAX_CREDENTIAL_LENGTH] * MAX_CREDENTIALS}
    assert len(json.dumps(longest).encode()) <= MAX_REPORT_BYTES


def test_a_webhook_change_or_a_service_client_sent_with_null_is_refused() -> None:
    from pydantic import ValidationError

    for model, body in [
        (webhooks_models.WebhookChanges, {"enabled": None}),
        (webhooks_models.WebhookChanges, {"url": None}),
        (webhooks_models.WebhookChanges, {"events": None}),
        (
            service_clients_models.NewServiceClient,
            {"name": "ci", "scopes": ["memory"], "jwks": None, "jwksUri": "https://m.example.com/j"},
        ),
    ]:
        with pytest.raises(ValidationError):
            model.model_validate(body)


def test_no_wire_class_shares_its_name_with_a_domain_class() -> None:
    """A wire class whose thing a domain class names ends in `Body` (docs/architecture.md,
    "Wire and domain classes"); the document still names its schema without the suffix."""
    import ast
    import importlib
    import pkgutil
    from pathlib import Path

    import chalicelib
    import chalicelib.api
    from chalicelib.api.wire import schema_name

    root = Path(str(chalicelib.__file__)).parent
    domain = {
        node.name
        for path in root.rglob("*.py")
        if "api" not in path.relative_to(root).parts[:1]
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.ClassDef)
    }
    wire = [
        value
        for info in pkgutil.iter_modules(chalicelib.api.__path__)
        if info.name == "wire" or info.name.endswith("_models")
        for value in vars(importlib.import_module(f"chalicelib.api.{info.name}")).values()
        if isinstance(value, type)
        and issubclass(value, BaseModel)
        and value.__module__.startswith("chalicelib.api.")
    ]

    assert sorted({m.__name__ for m in wire} & domain) == []
    assert schema_name(keys_models.ApiKeyBody) == "ApiKey"
