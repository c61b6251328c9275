"""The published contract: an OpenAPI 3.1 document of every route, served at /openapi.json.

Every operation is generated from its declaration (`api/operations.py`): the authenticated
ones (`Operation`) with their parameters, bodies and statuses, each refusal with the codes of
the error catalogue (`chalicelib/errors.py`) it may carry; the public ones with an edge of
their own (`Public`: the token endpoints, the MCP authorization server, the pages, the
leaked-key reports) from their declared answers. Every schema is a pydantic model's (an
area's `api/<area>_models.py`, or `api/wire.py`: the error bodies), under its class name.
`tests/contract/` holds the running service against this document, `tests/unit/api/
test_openapi.py` the document against the app's routes both ways. Examples are placeholders.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel
from pydantic.json_schema import models_json_schema

from chalicelib import errors
from chalicelib.api import (
    connected_apps,
    credentials,
    dashboard,
    events,
    identity,
    keys,
    oauth,
    secret_scanning,
    service_clients,
    sessions,
    sign_ins,
    trust_policies,
    webhooks,
    wire,
    workspaces,
)
from chalicelib.api.operations import HTML, Answer, Operation, Public
from chalicelib.api.wire import WireSchema, schema_name
from chalicelib.errors import Problem

Schema = dict[str, Any]

JSON = "application/json"
SECURED: list[Schema] = [{"apiKey": []}, {"userToken": []}]


def ref(name: str) -> Schema:
    return {"$ref": f"#/components/schemas/{name}"}


def header(name: str) -> Schema:
    return {"$ref": f"#/components/headers/{name}"}


# -- reusable response pieces --------------------------------------------------------------


def problem(description: str, *entries: Problem, challenge: bool = True) -> Schema:
    """A problem+json answer that carries one of these catalogue entries' codes."""
    codes = sorted({e.code for e in entries})
    listed = ", ".join(f"`{c}`" for c in codes)
    response: Schema = {
        "description": f"{description} Codes: {listed}.",
        "content": {
            "application/problem+json": {
                "schema": {
                    "allOf": [ref("Problem")],
                    "properties": {"code": {"enum": codes}},
                }
            }
        },
    }
    if challenge and entries and entries[0].status == 401:
        response["headers"] = {"WWW-Authenticate": header("WWWAuthenticate")}
    return response


def oauth_error(description: str, *entries: Problem, challenge: bool = False) -> Schema:
    codes = sorted({e.code for e in entries})
    return {
        "description": description,
        "content": {
            JSON: {
                "schema": {"allOf": [ref("OAuthError")], "properties": {"error": {"enum": codes}}}
            }
        },
    }


def ok(description: str, schema: Schema, headers: dict[str, Schema] | None = None) -> Schema:
    response: Schema = {"description": description, "content": {JSON: {"schema": schema}}}
    if headers:
        response["headers"] = headers
    return response


# What every authenticated operation may answer, whatever it does.
REQUEST_400 = (
    errors.UNKNOWN_PARAMETER,
    errors.CREDENTIAL_IN_URL,
    errors.INVALID_WORKSPACE_ID,
    errors.CONFLICTING_WORKSPACE_ID,
)
BODY_400 = (errors.INVALID_JSON, errors.UNKNOWN_FIELD, errors.INVALID_REQUEST)  # two spellings
UNAUTHENTICATED = (
    errors.MISSING_CREDENTIALS,
    errors.INVALID_CREDENTIALS,
    errors.EXPIRED_CREDENTIALS,
    errors.REVOKED_CREDENTIALS,
)
WORKSPACE_403 = (errors.WORKSPACE_MISMATCH, errors.NOT_A_MEMBER)
# An API key with an allow-list is refused from any other address, whatever the route.
ADDRESS_403 = (errors.IP_NOT_ALLOWED,)


def answers(
    success: dict[str, Schema],
    bad_request: tuple[Problem, ...] = (),
    forbidden: tuple[Problem, ...] = WORKSPACE_403,
    extra: dict[str, Schema] | None = None,
    body: bool = False,
) -> dict[str, Schema]:
    """The responses of an authenticated operation: its successes, then every refusal."""
    responses = dict(success)
    responses["400"] = problem(
        "The request is not valid.", *REQUEST_400, *(BODY_400 if body else ()), *bad_request
    )
    responses["401"] = problem("No usable credential.", *UNAUTHENTICATED)
    responses["403"] = problem(
        "The credential may not make this request.", *forbidden, *ADDRESS_403
    )
    responses.update(extra or {})
    if body:
        responses["413"] = problem("The body is larger than 16 KiB.", errors.PAYLOAD_TOO_LARGE)
        responses["415"] = problem("Send application/json.", errors.UNSUPPORTED_MEDIA_TYPE)
    responses["503"] = problem(
        "DynamoDB or KMS failed, or did not answer in time. Where a write may have happened "
        "all the same, the detail says so and how to check (the Retries guide).",
        errors.DEPENDENCY_UNAVAILABLE,
    )
    return dict(sorted(responses.items()))


def operation(
    operation_id: str,
    summary: str,
    tag: str,
    responses: dict[str, Schema],
    parameters: list[Schema] | None = None,
    body: Schema | None = None,
    secured: bool = True,
    description: str | None = None,
) -> Schema:
    found: Schema = {"operationId": operation_id, "summary": summary, "tags": [tag]}
    if description:
        found["description"] = description
    found["security"] = SECURED if secured else []
    if parameters:
        found["parameters"] = parameters
    if body is not None:
        found["requestBody"] = body
    found["responses"] = responses
    return found


def parameter(name: str) -> Schema:
    return {"$ref": f"#/components/parameters/{name}"}


# -- the declared operations (api/operations.py) -----------------------------------------

ROUTES = (
    keys, events, identity, sign_ins, workspaces, trust_policies, service_clients, webhooks,
    connected_apps,
)
DECLARED: tuple[Operation, ...] = tuple(op for r in ROUTES for op in r.blueprint.operations)
PATH_PARAMETERS: dict[str, tuple[str, Schema]] = {  # name: (component, schema)
    "key_id": ("KeyId", wire.KEY_ID),
    "workspace_id": ("WorkspaceId", wire.WORKSPACE_ID),
    "user_id": ("UserIdOrEmail", wire.USER_ID_OR_EMAIL),
    "policy_id": ("TrustPolicyId", wire.TRUST_POLICY_ID),
    "client_id": ("ServiceClientId", wire.SERVICE_CLIENT_ID),
    "grant_id": ("GrantId", wire.CONNECTED_APP_ID),
    "session_id": ("SessionId", wire.SESSION_ID),
    "webhook_id": ("WebhookId", wire.WEBHOOK_ID),
    "delivery_id": ("DeliveryId", wire.DELIVERY_ID),
}


def model_schemas() -> dict[str, Schema]:
    """The schema of every model an operation takes or gives, by class name, and of the
    error bodies."""
    found: dict[type[BaseModel], str] = {wire.ProblemBody: "serialization"}
    for op in DECLARED:
        for model in (op.body, op.response):
            if model is not None:
                found[model] = "validation" if model is op.body else "serialization"
    for public_op in PUBLIC:
        for model in public_op.body.values():
            found[model] = "validation"
        for answer in public_op.answers:
            if answer.oauth:
                found[wire.OAuthErrorBody] = "serialization"
            if isinstance(answer.body, type):
                found[answer.body] = "serialization"
    _, schemas = models_json_schema(
        [(m, mode) for m, mode in found.items()],  # type: ignore[misc]
        ref_template="#/components/schemas/{model}",
        schema_generator=WireSchema,
    )
    return {name: _no_null_defaults(schema) for name, schema in schemas.get("$defs", {}).items()}


def _no_null_defaults(schema: Schema) -> Schema:
    """Without pydantic's `default: null` for an optional field: absent is not null."""
    properties = {
        name: {k: v for k, v in spec.items() if not (k == "default" and v is None)}
        for name, spec in schema.get("properties", {}).items()
    }
    return {**schema, "properties": properties} if properties else schema


def _parameters(op: Operation) -> list[Schema]:
    found = [parameter(PATH_PARAMETERS[name][0]) for name in re.findall(r"{(\w+)}", op.path)]
    if op.query is not None:
        schema = op.query.model_json_schema(schema_generator=WireSchema)["properties"]
        for name, info in op.query.model_fields.items():
            wire = info.alias or name
            if wire == "workspace_id":
                found.append(parameter("WorkspaceQuery"))
            else:
                found.append({"name": wire, "in": "query", "schema": _not_null(schema[wire])})
    found.append(parameter("WorkspaceHeader"))
    if op.idempotent:
        found.append(parameter("IdempotencyKey"))
    return found


def _not_null(schema: Schema) -> Schema:
    """A query parameter's schema: a parameter is absent or a string, never null."""
    schema = {k: v for k, v in schema.items() if not (k == "default" and v is None)}
    branches = [b for b in schema.pop("anyOf", ()) if b != {"type": "null"}]
    return {**branches[0], **schema} if len(branches) == 1 else schema


def _success(op: Operation) -> Schema:
    if op.response is None:
        return {"description": "Done. No body and no Content-Type."}
    headers: dict[str, Schema] = {}
    if op.status == 201 and op.method == "POST":  # created: its path
        headers["Location"] = header("Location")
    if op.secret:
        headers["Cache-Control"] = header("CacheControlNoStore")
    if op.idempotent:
        headers["Idempotent-Replayed"] = header("IdempotentReplayed")
    return ok(op.answer, ref(schema_name(op.response)), headers)


def declared(op: Operation) -> Schema:
    """An operation's entry, from its declaration and the error catalogue."""
    problems = list(op.every_problem)
    if op.query is not None and set(op.query.model_fields) - {"workspace_id"}:
        problems.append(errors.INVALID_PARAMETER)
    if op.idempotent:
        problems += [errors.INVALID_IDEMPOTENCY_KEY, errors.IDEMPOTENCY_KEY_REUSED]
    by_status: dict[int, list[Problem]] = {}
    for entry in problems:
        by_status.setdefault(entry.status, []).append(entry)
    extra = {
        str(status): problem(" ".join(dict.fromkeys(e.detail for e in entries)), *entries)
        for status, entries in by_status.items()
        if status not in (400, 403)
    }
    successes = {str(op.status): _success(op)}
    for status, meaning in op.also.items():
        successes[str(status)] = ok(meaning, ref(schema_name(op.response))) if op.response else {}
    responses = answers(
        successes,
        bad_request=tuple(by_status.get(400, ())),
        forbidden=(*op.policy.problems, *WORKSPACE_403, *by_status.get(403, ())),
        extra=extra,
        body=op.body is not None,
    )
    body = None
    if op.body is not None:
        content = {JSON: {"schema": ref(schema_name(op.body))}}
        body = {"required": op.body_required, "content": content}
    return operation(
        op.name,
        op.summary,
        op.tag,
        responses,
        parameters=_parameters(op),
        body=body,
        description=op.description,
    )


def declared_paths() -> dict[str, Schema]:
    paths: dict[str, Schema] = {}
    for op in DECLARED:
        paths.setdefault(op.path, {})[op.method.lower()] = declared(op)
    return paths


# -- the public operations (`Operations.public`) -----------------------------------------

PUBLIC: tuple[Public, ...] = (
    *(
        op
        for routes in (secret_scanning, credentials, identity, sessions, oauth, dashboard)
        for op in routes.blueprint.public_operations
    ),
    # This module's own routes (api/reference.py serves them).
    Public(
        "GET", "/docs/errors", "errorReference", "What each error code means", "Identity",
        (Answer(200, "An HTML page with one section per code (its anchor).", HTML),),
    ),
    Public(
        "GET", "/openapi.json", "openapi", "This document", "Identity",
        (Answer(200, "The OpenAPI 3.1 document of this service.", wire.OpenApiDocument),),
    ),
)


def _answer(answer: Answer) -> Schema:
    if answer.problems:
        shape = oauth_error if answer.oauth else problem
        found = shape(answer.description, *answer.problems, challenge=False)
    elif isinstance(answer.body, str):
        found = {
            "description": answer.description,
            "content": {answer.body: {"schema": {"type": "string"}}},
        }
    elif answer.body is not None:
        found = ok(answer.description, ref(schema_name(answer.body)))
    else:
        found = {"description": answer.description}
    if answer.headers:
        found["headers"] = {name: header(entry) for name, entry in answer.headers.items()}
    return found


def _public_parameters(op: Public) -> list[Schema]:
    found: list[Schema] = [
        {"name": name, "in": "path", "required": True, "schema": {"type": "string"}}
        for name in re.findall(r"{(\w+)}", op.path)
    ]
    for model, where in ((op.query, "query"), (op.headers, "header")):
        if model is None:
            continue
        schema = model.model_json_schema(schema_generator=WireSchema)["properties"]
        for name, info in model.model_fields.items():
            wire = info.alias or name
            spec = _not_null(schema[wire])
            described = {"description": spec.pop("description")} if "description" in spec else {}
            entry = {"name": wire, "in": where, "required": info.is_required()}
            found.append({**entry, **described, "schema": spec})
    return found


def public(op: Public) -> Schema:
    body = None
    if op.body:
        content = {media: {"schema": ref(schema_name(model))} for media, model in op.body.items()}
        body = {"required": True, "content": content}
    return operation(
        op.name,
        op.summary,
        op.tag,
        {str(a.status): _answer(a) for a in sorted(op.answers, key=lambda a: a.status)},
        parameters=_public_parameters(op),
        body=body,
        secured=False,
        description=op.description,
    )


def public_paths() -> dict[str, Schema]:
    paths: dict[str, Schema] = {}
    for op in PUBLIC:
        paths.setdefault(op.path, {})[op.method.lower()] = public(op)
    return paths


def components() -> Schema:
    return {
        "securitySchemes": {
            "apiKey": {
                "type": "http",
                "scheme": "bearer",
                "bearerFormat": "API key (svc_…)",
                "description": "An API key: `Authorization: Bearer <key>`.",
            },
            "userToken": {
                "type": "http",
                "scheme": "bearer",
                "bearerFormat": "JWT",
                "description": "A user token from /v1/auth/exchange or /v1/auth/refresh.",
            },
        },
        "parameters": {
            "WorkspaceHeader": {
                "name": "X-Workspace-Id",
                "in": "header",
                "description": "The workspace of an admin key or a user token (a workspace key "
                "is bound to its own and may only name that one); empty: none.",
                "schema": {"anyOf": [wire.WORKSPACE_ID, {"type": "string", "maxLength": 0}]},
            },
            "WorkspaceQuery": {
                "name": "workspace_id",
                "in": "query",
                "description": "Older clients' spelling of X-Workspace-Id (empty: none).",
                "deprecated": True,
                "schema": {"anyOf": [wire.WORKSPACE_ID, {"type": "string", "maxLength": 0}]},
            },
            "IdempotencyKey": {
                "name": "Idempotency-Key",
                "in": "header",
                "description": "Any 1 to 255 printable ASCII characters, new for each logical "
                "call and the same for its retries: within 24 hours, the same key from the same "
                "caller with the same request answers the first result again (the Retries "
                "guide).",
                "schema": {
                    "type": "string",
                    "minLength": 1,
                    "maxLength": 255,
                    "pattern": "^[ -~]+$",
                },
            },
            **{
                component: {"name": name, "in": "path", "required": True, "schema": schema}
                for name, (component, schema) in PATH_PARAMETERS.items()
            },
        },
        "headers": {
            "IdempotentReplayed": {
                "description": "Present on an answer given again for a retry with the same "
                "Idempotency-Key: nothing new was created.",
                "schema": {"const": "true"},
            },
            "RetryAfter": {"description": "Seconds to wait before asking again.", "required": True,
                           "schema": {"type": "string", "pattern": "^[0-9]+$"}},
            "Location": {
                "description": "The new resource's path.",
                "required": True,
                "schema": {"type": "string"},
            },
            "CacheControlNoStore": {
                "description": "The answer carries a secret: never cached.",
                "required": True,
                "schema": {"const": "no-store"},
            },
            "CacheControlPublic": {
                "required": True,
                "schema": {"const": "public, max-age=300"},
            },
            "WWWAuthenticate": {
                "description": 'RFC 6750: `Bearer realm="svc"`, with `error="invalid_token"` '
                "when a credential was sent.",
                "required": True,
                "schema": {"type": "string", "pattern": '^Bearer realm="svc"'},
            },
        },
        "schemas": model_schemas(),
    }


TAGS = (
    "API keys", "Audit events", "Webhooks", "Leaked-key reports", "Workspaces", "Identity",
    "Login", "Sessions", "MCP authorization", "Connected apps", "Dashboard",
)
DESCRIPTION = """\
The authentication service of the hosted memory service: API keys, workspaces and their
members, and the login token flow.

Send `Authorization: Bearer <API key or user token>`, never a credential in the URL. Errors
are RFC 9457 problem details whose `code` is stable (the token endpoints answer RFC 6749
errors); each code is explained at `/docs/errors`. Every path also answers CORS preflights
(`OPTIONS`) for the stage's allowed origins.
"""


def document(server_url: str | None = None) -> Schema:
    paths: dict[str, Schema] = {**declared_paths(), **public_paths()}
    return {
        "openapi": "3.1.0",
        "info": {"title": "memory-auth", "version": "1", "description": DESCRIPTION},
        "tags": [{"name": tag} for tag in TAGS],
        "paths": dict(sorted(paths.items())),
        "components": components(),
        **({"servers": [{"url": server_url}]} if server_url else {}),
    }
