"""The SDK's models held to the service's OpenAPI document (sdks/openapi.json, which
`make -C sdks/typescript wire-types` writes and both SDKs' checks read): every field by its
wire name, its JSON type and nullability, its enum, and that what the SDK requires the
service always sends. A drift fails here; the fix is in the SDK, or in the service's document.
"""

from __future__ import annotations

import copy
import json
import re
import subprocess
import sys
import types
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Literal, Union, get_args, get_origin

import httpx
import pytest
from pydantic import BaseModel, SecretStr

from memory_sdk import MemoryClient, models
from memory_sdk.models import (
    ApiKey,
    AuditEvent,
    DelegatedToken,
    EventPage,
    KeyUsage,
    Principal,
    SessionList,
    SystemActor,
    TokenPair,
    UsageBucket,
    UserActor,
    UserSession,
)
from tests.unit.fakes import ADMIN_KEY, ENDPOINT, FakeService, key_resource

SDKS = Path(__file__).resolve().parents[3]
DOCUMENT = SDKS / "openapi.json"
REGENERATE = "make -C sdks/typescript wire-types"

Schema = dict[str, Any]


@dataclass(frozen=True)
class Wire:
    """An SDK model and the schema it reads (a path under components/schemas)."""

    model: type[BaseModel]
    schema: str
    # Fields of the schema the model leaves out on purpose, each with its reason in the table.
    not_read: frozenset[str] = frozenset()
    # Fields of the model that never travel.
    sdk_only: frozenset[str] = frozenset()
    # Fields the document always sends, non-null, that the SDK also reads when absent (None).
    absent_as_none: frozenset[str] = frozenset()
    # Fields the document leaves optional that the SDK requires (to tell shapes apart).
    required_by_sdk: frozenset[str] = frozenset()


MODELS = (
    # `key` is in the answers of create, reveal and rotate, absent from the others: ApiKey
    # reads both, so it is held to the larger schema.
    Wire(ApiKey, "ApiKeyWithSecret", absent_as_none=frozenset({"key"})),
    # ... and to the listed key (the answers of list, get and update), which has no `key`.
    Wire(ApiKey, "ApiKey", sdk_only=frozenset({"key"})),
    Wire(Principal, "Principal"),
    # The document declares the actor as one object (every field optional) with the fields of
    # both shapes; each SDK model reads its own, and requires what tells it apart.
    Wire(
        UserActor,
        "Event/properties/actor",
        not_read=frozenset({"system"}),
        required_by_sdk=frozenset({"userId", "credential"}),
    ),
    Wire(
        SystemActor,
        "Event/properties/actor",
        not_read=frozenset({"userId", "credential", "keyId", "email", "name"}),
        required_by_sdk=frozenset({"system"}),
    ),
    Wire(AuditEvent, "Event"),
    Wire(EventPage, "EventPage"),
    Wire(KeyUsage, "KeyUsage"),
    Wire(UsageBucket, "UsageBucket"),
    # `issued_token_type` is sent only to the RFC 8693 form, which the SDK does not use; the
    # SDK reads a pair without `refresh_token` as RFC 6749 allows, though this service always
    # sends one.
    Wire(
        TokenPair,
        "TokenPair",
        not_read=frozenset({"issued_token_type"}),
        sdk_only=frozenset({"received_at"}),
        absent_as_none=frozenset({"refresh_token"}),
    ),
    Wire(DelegatedToken, "WorkspaceToken", sdk_only=frozenset({"received_at"})),
    Wire(UserSession, "Session"),
    Wire(SessionList, "SessionList"),
)

# The SDK's enums that no model field carries as a Literal (AuditEvent.type stays a string so
# that a later event type parses): each must still list exactly the document's values.
ENUMS: tuple[tuple[Any, str], ...] = ((models.EventType, "Event/properties/type"),)


def load_document() -> Schema:
    document: Schema = json.loads(DOCUMENT.read_text(encoding="utf-8"))
    return document


def resolve(document: Schema, schema: Schema) -> Schema:
    while "$ref" in schema:
        node: Any = document
        for part in schema["$ref"].removeprefix("#/").split("/"):
            node = node[part]
        schema = node
    return schema


def schema_at(document: Schema, path: str) -> Schema:
    node: Schema = document["components"]["schemas"]
    for part in path.split("/"):
        node = resolve(document, node)[part]
    return resolve(document, node)


def branches(document: Schema, schema: Schema) -> Iterator[Schema]:
    """The schema, and each schema it is made of (allOf, anyOf, oneOf), resolved."""
    schema = resolve(document, schema)
    yield schema
    for keyword in ("allOf", "anyOf", "oneOf"):
        for part in schema.get(keyword, ()):
            yield from branches(document, part)


def properties(document: Schema, schema: Schema) -> dict[str, Schema]:
    found: dict[str, Schema] = {}
    for part in branches(document, schema):
        found.update(part.get("properties", {}))
    return found


def required(document: Schema, schema: Schema) -> set[str]:
    return {name for part in branches(document, schema) for name in part.get("required", ())}


def json_types(document: Schema, schema: Schema) -> set[str]:
    """The JSON types a schema admits ("integer", "string", "null", ...)."""
    found: set[str] = set()
    for part in branches(document, schema):
        declared = part.get("type")
        if declared is not None:
            found.update([declared] if isinstance(declared, str) else declared)
        for value in part.get("enum", []) + ([part["const"]] if "const" in part else []):
            found.add(json_type_of(value))
    return found


def json_type_of(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    return "string" if isinstance(value, str) else "object"


def enum_values(document: Schema, schema: Schema) -> set[object] | None:
    """The values an enum or const schema admits (null left out); None if it is not one."""
    values: set[object] = set()
    for part in branches(document, schema):
        values.update(part.get("enum", ()))
        if "const" in part:
            values.add(part["const"])
    values.discard(None)
    return values or None


def items_schema(document: Schema, schema: Schema) -> Schema | None:
    for part in branches(document, schema):
        if "items" in part:
            return resolve(document, part["items"])
    return None


def members(annotation: Any) -> tuple[Any, ...]:
    if get_origin(annotation) in (Union, types.UnionType):
        return get_args(annotation)
    return (annotation,)


def sdk_types(annotation: Any) -> set[str]:
    """The JSON types an SDK annotation reads."""
    found: set[str] = set()
    for member in members(annotation):
        origin = get_origin(member)
        if member is type(None):
            found.add("null")
        elif origin is Literal:
            found.update(json_type_of(value) for value in get_args(member))
        elif member in (str, SecretStr, datetime):
            found.add("string")
        elif member is bool:
            found.add("boolean")
        elif member is int:
            found.add("integer")
        elif origin in (tuple, list):
            found.add("array")
        elif origin is dict or (isinstance(member, type) and issubclass(member, BaseModel)):
            found.add("object")
        else:
            raise AssertionError(f"no JSON type known for {member!r}: extend sdk_types")
    return found


def literal_values(annotation: Any) -> set[object] | None:
    values = {
        value
        for member in members(annotation)
        if get_origin(member) is Literal
        for value in get_args(member)
    }
    return values or None


def field_drift(
    document: Schema, where: str, annotation: Any, schema: Schema, absent_as_none: bool = False
) -> list[str]:
    drift: list[str] = []
    sdk, wire = sdk_types(annotation), json_types(document, schema)
    if absent_as_none and "null" not in wire:
        sdk.discard("null")
    if sdk != wire:
        drift.append(f"{where}: the SDK reads {sorted(sdk)}, the document says {sorted(wire)}")
    literal = literal_values(annotation)
    if literal is not None and literal != enum_values(document, schema):
        drift.append(
            f"{where}: the SDK's values {sorted(map(str, literal))}, the document's "
            f"{sorted(map(str, enum_values(document, schema) or ()))}"
        )
    if any(member is datetime for member in members(annotation)):
        formats = {part.get("format") for part in branches(document, schema)}
        if "date-time" not in formats:
            drift.append(f"{where}: the SDK reads a date-time, the document has no such format")
    item_schema = items_schema(document, schema)
    for member in members(annotation):
        if get_origin(member) in (tuple, list) and item_schema is not None:
            item = get_args(member)[0]
            drift += field_drift(document, f"{where}[]", item, item_schema)
    return drift


def model_drift(document: Schema, wire: Wire) -> list[str]:
    schema = schema_at(document, wire.schema)
    on_wire = properties(document, schema)
    must_send = required(document, schema)
    name = wire.model.__name__
    drift: list[str] = []
    read: set[str] = set()
    for field_name, field in wire.model.model_fields.items():
        if field_name in wire.sdk_only:
            continue
        alias = field.alias or field_name
        read.add(alias)
        where = f"{name}.{alias} ({wire.schema})"
        if alias not in on_wire:
            drift.append(f"{where}: not in the document")
            continue
        absent_as_none = alias in wire.absent_as_none and not field.is_required()
        drift += field_drift(document, where, field.annotation, on_wire[alias], absent_as_none)
        if field.is_required() and alias not in must_send | wire.required_by_sdk:
            drift.append(f"{where}: the SDK requires it, the document does not")
    for missing in sorted(set(on_wire) - read - wire.not_read):
        drift.append(f"{name}: the document's {wire.schema}.{missing} is not read by the SDK")
    for stale in sorted(wire.not_read - set(on_wire)):
        drift.append(f"{name}: {stale} is left out, but the document has no such field")
    return drift


def drift_of(document: Schema) -> list[str]:
    drift = [line for wire in MODELS for line in model_drift(document, wire)]
    for enum, path in ENUMS:
        sdk, wire = set(get_args(enum)), enum_values(document, schema_at(document, path))
        if sdk != wire:
            sdk_values, wire_values = sorted(map(str, sdk)), sorted(map(str, wire or ()))
            drift.append(f"{path}: the SDK's {sdk_values}, the document's {wire_values}")
    return drift


def test_the_committed_document_is_the_services_current_one(tmp_path: Path) -> None:
    fresh = tmp_path / "openapi.json"
    subprocess.run(
        [sys.executable, "-m", "tools.openapi", str(fresh)],
        cwd=SDKS.parent,
        check=True,
        capture_output=True,
    )
    assert fresh.read_text(encoding="utf-8") == DOCUMENT.read_text(encoding="utf-8"), (
        f"sdks/openapi.json is not the service's current document: run '{REGENERATE}'"
    )


def test_every_sdk_model_matches_its_schema_in_the_document() -> None:
    assert drift_of(load_document()) == []


def test_every_sdk_model_of_the_wire_is_in_the_table() -> None:
    wire_models = {
        value
        for value in vars(models).values()
        if isinstance(value, type)
        and issubclass(value, BaseModel)
        and value.__module__ == models.__name__
        and not value.__name__.startswith("_")
    }
    assert wire_models == {wire.model for wire in MODELS}


def renamed(document: Schema, schema: str, old: str, new: str) -> None:
    node = document["components"]["schemas"][schema]
    node["properties"][new] = node["properties"].pop(old)
    node["required"] = [new if name == old else name for name in node.get("required", [])]


def retyped(document: Schema, schema: str, field: str, new_type: object) -> None:
    document["components"]["schemas"][schema]["properties"][field]["type"] = new_type


def enum_grown(document: Schema, schema: str, field: str, value: str) -> None:
    document["components"]["schemas"][schema]["properties"][field]["enum"].append(value)


def made_optional(document: Schema, schema: str, field: str) -> None:
    document["components"]["schemas"][schema]["required"].remove(field)


def field_added(document: Schema, schema: str, field: str) -> None:
    document["components"]["schemas"][schema]["properties"][field] = {"type": "string"}


def made_required(document: Schema, schema: str, field: str) -> None:
    field_added(document, schema, field)
    document["components"]["schemas"][schema]["required"].append(field)


@pytest.mark.parametrize(
    ("mutate", "expected"),
    [
        (lambda d: renamed(d, "ApiKey", "createdAt", "created"), "ApiKey.createdAt"),
        (lambda d: renamed(d, "TokenPair", "expires_in", "expiresIn"), "TokenPair.expires_in"),
        (lambda d: retyped(d, "ApiKeyWithSecret", "revealable", "string"), "ApiKey.revealable"),
        (lambda d: retyped(d, "Principal", "keyId", "string"), "Principal.keyId"),
        (lambda d: retyped(d, "TokenPair", "expires_in", "number"), "TokenPair.expires_in"),
        (lambda d: enum_grown(d, "ApiKeyWithSecret", "status", "suspended"), "ApiKey.status"),
        (lambda d: enum_grown(d, "Event", "type", "key.renamed"), "Event/properties/type"),
        (lambda d: made_optional(d, "Principal", "userId"), "Principal.userId"),
        (lambda d: field_added(d, "Event", "requestId"), "Event.requestId"),
    ],
    ids=[
        "field-renamed",
        "token-field-renamed",
        "type-changed",
        "nullable-dropped",
        "integer-widened",
        "enum-grown",
        "event-type-added",
        "required-dropped",
        "field-added",
    ],
)
def test_a_drift_of_the_document_is_found(mutate: Any, expected: str) -> None:
    document = copy.deepcopy(load_document())
    mutate(document)

    drift = drift_of(document)

    assert any(expected in line for line in drift), drift


# What the SDK sends: each request body it builds, with every optional field set, held to the
# request schema of the operation it calls (found by method and path in the document).

ID_TOKEN = "eyJ" + "hbGciOiJSUzI1NiJ9.eyJzdWIiOiJ1c3JfMSJ9.c2lnbmF0dXJl"
REFRESH = "rt_" + "unitTestRefreshToken000000000000"


def request_schema(document: Schema, request: httpx.Request) -> Schema:
    for template, operations in document["paths"].items():
        pattern = re.sub(r"\{[^}/]+\}", "[^/]+", template)
        if re.fullmatch(pattern, request.url.path):
            operation = operations[request.method.lower()]
            content = operation["requestBody"]["content"]["application/json"]
            return resolve(document, content["schema"])
    raise AssertionError(f"{request.method} {request.url.path} is not in the document")


def body_drift(document: Schema, where: str, value: object, schema: Schema) -> list[str]:
    wire = json_types(document, schema)
    sent = json_type_of(value) if not isinstance(value, list) else "array"
    if wire and sent not in wire and not (sent == "integer" and "number" in wire):
        return [f"{where}: the SDK sends {sent}, the document takes {sorted(wire)}"]
    allowed = enum_values(document, schema)
    if allowed is not None and value is not None and value not in allowed:
        return [f"{where}: the SDK sends {value!r}, not one of the document's values"]
    drift: list[str] = []
    if isinstance(value, dict):
        fields = properties(document, schema)
        drift += [f"{where}.{name}: not in the document" for name in value if name not in fields]
        drift += [
            f"{where}.{name}: required by the document, not sent"
            for name in sorted(required(document, schema) - set(value))
        ]
        for name, item in value.items():
            if name in fields:
                drift += body_drift(document, f"{where}.{name}", item, fields[name])
    item_schema = items_schema(document, schema)
    if isinstance(value, list) and item_schema is not None:
        for item in value:
            drift += body_drift(document, f"{where}[]", item, item_schema)
    return drift


def token_answer() -> httpx.Response:
    return httpx.Response(
        200,
        json={
            "access_token": ID_TOKEN,
            "token_type": "Bearer",
            "expires_in": 3600,
            "refresh_token": REFRESH,
        },
    )


async def every_request_body() -> list[httpx.Request]:
    key = httpx.Response(201, json=key_resource(plaintext=ADMIN_KEY))
    fake = FakeService(key, key, key, key, token_answer(), token_answer())
    async with MemoryClient(
        api_key=ADMIN_KEY, endpoint=ENDPOINT, svc={"backoff": 0}, http_transport=fake.transport()
    ) as client:
        await client.auth.create_api_key(
            "ci deploys",
            scopes=["memory", "entities"],
            workspace_id="ws_01JQ0000000000000000000000",
            category="workspace",
            expires_in_days=30,
            allowed_cidrs=["203.0.113.0/24"],
        )
        await client.auth.rotate_api_key("key_01", grace_period_seconds=3600)
        await client.auth.update_api_key("key_01", label="renamed", allowed_cidrs=["::1/128"])
        await client.auth.update_api_key("key_01", allowed_cidrs=None)
        await client.auth.exchange(ID_TOKEN)
        await client.auth.refresh_access_token(REFRESH)
    return fake.requests


def requests_drift(document: Schema, requests: list[httpx.Request]) -> list[str]:
    drift: list[str] = []
    for request in requests:
        where = f"{request.method} {request.url.path}"
        schema = request_schema(document, request)
        drift += body_drift(document, where, json.loads(request.content), schema)
    return drift


@pytest.mark.anyio
async def test_every_request_body_the_sdk_sends_matches_the_document() -> None:
    requests = await every_request_body()

    assert len(requests) == 6
    assert requests_drift(load_document(), requests) == []


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("mutate", "expected"),
    [
        (lambda d: renamed(d, "NewApiKey", "expiresInDays", "lifetimeDays"), "expiresInDays"),
        (lambda d: renamed(d, "Rotation", "gracePeriodSeconds", "grace"), "gracePeriodSeconds"),
        (lambda d: renamed(d, "ExchangeRequest", "id_token", "idToken"), "id_token"),
        (lambda d: retyped(d, "ApiKeyChanges", "allowedCidrs", "array"), "allowedCidrs"),
        (lambda d: made_required(d, "RefreshRequest", "client_id"), "client_id"),
    ],
    ids=[
        "field-renamed",
        "rotation-renamed",
        "token-field-renamed",
        "null-refused",
        "new-required",
    ],
)
async def test_a_drift_of_a_request_schema_is_found(mutate: Any, expected: str) -> None:
    requests = await every_request_body()
    document = copy.deepcopy(load_document())
    mutate(document)

    drift = requests_drift(document, requests)

    assert any(expected in line for line in drift), drift
