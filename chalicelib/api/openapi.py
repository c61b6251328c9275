"""The published contract: an OpenAPI 3.1 document of every route, served at /openapi.json.

The operations declared once (`api/operations.py`: the key, workspace, event and whoami
routes) are generated from their declarations: parameters from the query model, the body and
response schemas from the pydantic models (`api/models.py`, under their class names), every
status with the codes of the error catalogue (`chalicelib/errors.py`) it may carry. The routes
with an edge of their own (the token endpoints, the MCP authorization server, the pages, the
leaked-key reports) are still written here by hand. A client generated from this document,
and the property-based tests that hold the running service against it (`tests/contract/`),
know exactly what to expect; `tests/unit/api/test_openapi.py` holds the document against the
app's routes both ways. Examples are placeholders.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel
from pydantic.json_schema import GenerateJsonSchema, models_json_schema

from chalicelib import errors
from chalicelib.access.scopes import ALL_SCOPES
from chalicelib.api import events, identity, keys, workspaces
from chalicelib.api.models import KEY_ID, USER_ID, WORKSPACE_ID, TokenPair
from chalicelib.api.operations import Operation
from chalicelib.errors import Problem
from chalicelib.oauth.service import MAX_STATE_LENGTH, OFFLINE_ACCESS, PKCE_CHALLENGE
from chalicelib.scanning.github import MAX_TOKENS as MAX_REPORTED_TOKENS

Schema = dict[str, Any]

SECRET_SCANNING = "/v1/auth/secret-scanning/github"
PROBLEM_JSON = "application/problem+json"
JSON = "application/json"
FORM = "application/x-www-form-urlencoded"
SECURED: list[Schema] = [{"apiKey": []}, {"userToken": []}]


def ref(name: str) -> Schema:
    return {"$ref": f"#/components/schemas/{name}"}


# -- reusable response pieces --------------------------------------------------------------


def problem(description: str, *entries: Problem) -> Schema:
    """A problem+json answer that carries one of these catalogue entries' codes."""
    codes = sorted({e.code for e in entries})
    listed = ", ".join(f"`{c}`" for c in codes)
    response: Schema = {
        "description": f"{description} Codes: {listed}.",
        "content": {
            PROBLEM_JSON: {
                "schema": {
                    "allOf": [ref("Problem")],
                    "properties": {"code": {"enum": codes}},
                }
            }
        },
    }
    if entries and entries[0].status == 401:
        response["headers"] = {
            "WWW-Authenticate": {"$ref": "#/components/headers/WWWAuthenticate"}
        }
    return response


def oauth_error(description: str, *entries: Problem) -> Schema:
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


NO_CONTENT = {"description": "Done. No body and no Content-Type."}
NO_STORE_HEADER = {"$ref": "#/components/headers/CacheControlNoStore"}
LOCATION_HEADER = {"$ref": "#/components/headers/Location"}
REPLAYED_HEADER = {"$ref": "#/components/headers/IdempotentReplayed"}

# What every authenticated operation may answer, whatever it does.
REQUEST_400 = (
    errors.UNKNOWN_PARAMETER,
    errors.CREDENTIAL_IN_URL,
    errors.INVALID_WORKSPACE_ID,
    errors.CONFLICTING_WORKSPACE_ID,
)
BODY_400 = (errors.INVALID_JSON, errors.UNKNOWN_FIELD)
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
        "all the same, the detail says so and how to check (README, Retries).",
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


WORKSPACE_HEADER = {"$ref": "#/components/parameters/WorkspaceHeader"}
WORKSPACE_QUERY = {"$ref": "#/components/parameters/WorkspaceQuery"}
KEY_ID_PATH = {"$ref": "#/components/parameters/KeyId"}
IDEMPOTENCY_KEY = {"$ref": "#/components/parameters/IdempotencyKey"}
WORKSPACE_ID_PATH = {"$ref": "#/components/parameters/WorkspaceId"}
USER_ID_PATH = {"$ref": "#/components/parameters/UserId"}


def json_body(schema: Schema, required: bool = True) -> Schema:
    return {"required": required, "content": {JSON: {"schema": schema}}}




# -- the declared operations (api/operations.py) -----------------------------------------

DECLARED: tuple[Operation, ...] = tuple(
    op for routes in (keys, events, identity, workspaces) for op in routes.blueprint.operations
)
PATH_PARAMETERS = {
    "key_id": KEY_ID_PATH, "workspace_id": WORKSPACE_ID_PATH, "user_id": USER_ID_PATH
}


class _Schemas(GenerateJsonSchema):
    """Pydantic's JSON Schema without a `title` on every property."""

    def field_title_should_be_set(self, schema: Any) -> bool:
        return False


def model_schemas() -> dict[str, Schema]:
    """The schema of every model a declared operation takes or gives, by class name (and of
    the token endpoints' answer, which those routes write by hand)."""
    models: dict[type[BaseModel], str] = {TokenPair: "serialization"}
    for op in DECLARED:
        for model in (op.body, op.response):
            if model is not None:
                models[model] = "validation" if model is op.body else "serialization"
    _, found = models_json_schema(
        [(m, mode) for m, mode in models.items()],  # type: ignore[misc]
        ref_template="#/components/schemas/{model}",
        schema_generator=_Schemas,
    )
    return {name: _no_null_defaults(schema) for name, schema in found.get("$defs", {}).items()}


def _no_null_defaults(schema: Schema) -> Schema:
    """Without pydantic's `default: null` for an optional field: absent is not null."""
    properties = {
        name: {k: v for k, v in spec.items() if not (k == "default" and v is None)}
        for name, spec in schema.get("properties", {}).items()
    }
    return {**schema, "properties": properties} if properties else schema


def _parameters(op: Operation) -> list[Schema]:
    found: list[Schema] = [PATH_PARAMETERS[name] for name in re.findall(r"{(\w+)}", op.path)]
    if op.query is not None:
        schema = op.query.model_json_schema(schema_generator=_Schemas)["properties"]
        for name, info in op.query.model_fields.items():
            wire = info.alias or name
            if wire == "workspace_id":
                found.append(WORKSPACE_QUERY)
            else:
                found.append({"name": wire, "in": "query", "schema": _not_null(schema[wire])})
    found.append(WORKSPACE_HEADER)
    if op.idempotent:
        found.append(IDEMPOTENCY_KEY)
    return found


def _not_null(schema: Schema) -> Schema:
    """A query parameter's schema: a parameter is absent or a string, never null."""
    schema = {k: v for k, v in schema.items() if not (k == "default" and v is None)}
    branches = [b for b in schema.pop("anyOf", ()) if b != {"type": "null"}]
    return {**branches[0], **schema} if len(branches) == 1 else schema


def _success(op: Operation) -> Schema:
    if op.response is None:
        return NO_CONTENT
    headers: dict[str, Schema] = {}
    if op.status == 201 and op.method == "POST":  # created: its path
        headers["Location"] = LOCATION_HEADER
    if op.secret:
        headers["Cache-Control"] = NO_STORE_HEADER
    if op.idempotent:
        headers["Idempotent-Replayed"] = REPLAYED_HEADER
    return ok(op.answer, ref(op.response.__name__), headers)


def declared(op: Operation) -> Schema:
    """An operation's entry, from its declaration and the error catalogue."""
    problems = list(op.problems)
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
        successes[str(status)] = ok(meaning, ref(op.response.__name__)) if op.response else {}
    responses = answers(
        successes,
        bad_request=tuple(by_status.get(400, ())),
        forbidden=(*op.policy.problems, *WORKSPACE_403, *by_status.get(403, ())),
        extra=extra,
        body=op.body is not None,
    )
    body = json_body(ref(op.body.__name__), op.body_required) if op.body is not None else None
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


# -- the operations written by hand ---------------------------------------------------------


def secret_scanning_operations() -> dict[str, Schema]:
    # GitHub's signature authenticates the report, not a bearer credential: its 401 carries
    # no WWW-Authenticate challenge.
    unsigned = problem(
        "The signature does not verify (none, malformed, an unknown key, or another body): "
        "nothing was revoked.",
        errors.INVALID_SIGNATURE,
    )
    unsigned.pop("headers")
    signature_headers = [
        {
            "name": "Github-Public-Key-Identifier",
            "in": "header",
            "required": True,
            "description": "The identifier of the GitHub key that signed the body.",
            "schema": {"type": "string", "minLength": 1},
        },
        {
            "name": "Github-Public-Key-Signature",
            "in": "header",
            "required": True,
            "description": "Base64 DER ECDSA P-256 signature over SHA-256 of the raw body.",
            "schema": {"type": "string", "minLength": 1},
        },
    ]
    return {
        SECRET_SCANNING: {
            "post": operation(
                "githubSecretScanningReport",
                "Leaked-key reports from GitHub's secret scanning",
                "Leaked-key reports",
                {
                    "200": ok("One verdict per reported token.", ref("LeakVerdicts")),
                    "400": problem(
                        "The report is not GitHub's JSON array of tokens.",
                        errors.INVALID_REPORT,
                        errors.UNKNOWN_PARAMETER,
                        errors.CREDENTIAL_IN_URL,
                    ),
                    "401": unsigned,
                    "413": problem("The body is larger than 1 MiB.", errors.PAYLOAD_TOO_LARGE),
                    "415": problem("Send application/json.", errors.UNSUPPORTED_MEDIA_TYPE),
                    "503": problem(
                        "GitHub's key list or DynamoDB is unavailable: nothing was decided, "
                        "retry later.",
                        errors.DEPENDENCY_UNAVAILABLE,
                    ),
                },
                parameters=signature_headers,
                body=json_body(ref("LeakReport")),
                secured=False,
                description=(
                    "GitHub's secret scanning partner protocol. Every reported token that names "
                    "one of our keys is a `true_positive` (an active one is revoked at once); "
                    "anything else is a `false_positive`. Tokens are answered as their SHA-256."
                ),
            ),
        },
    }


def identity_operations() -> dict[str, Schema]:
    return {
        "/.well-known/jwks.json": {
            "get": operation(
                "jwks",
                "The public keys that sign user tokens",
                "Identity",
                {
                    "200": ok(
                        "The current signing key, then the previous one during a rotation.",
                        ref("JwkSet"),
                        {"Cache-Control": {"$ref": "#/components/headers/CacheControlPublic"}},
                    ),
                    "503": problem(
                        "KMS failed: retry later.", errors.DEPENDENCY_UNAVAILABLE
                    ),
                },
                secured=False,
            ),
        },
        "/docs/errors": {
            "get": operation(
                "errorReference",
                "What each error code means",
                "Identity",
                {
                    "200": {
                        "description": "An HTML page with one section per code (its anchor).",
                        "content": {"text/html": {"schema": {"type": "string"}}},
                    }
                },
                secured=False,
            ),
        },
        "/openapi.json": {
            "get": operation(
                "openapi",
                "This document",
                "Identity",
                {"200": ok("The OpenAPI 3.1 document of this service.", {"type": "object"})},
                secured=False,
            ),
        },
    }


def token_operations() -> dict[str, Schema]:
    failures = {
        "400": oauth_error(
            "The token request was refused (RFC 6749 §5.2).",
            errors.OAUTH_INVALID_REQUEST,
            errors.UNSUPPORTED_GRANT_TYPE,
            errors.INVALID_TARGET,
            errors.INVALID_GRANT,
        ),
        "413": oauth_error("The body is larger than 16 KiB.", errors.OAUTH_PAYLOAD_TOO_LARGE),
        "415": problem("Send JSON or an OAuth form.", errors.UNSUPPORTED_MEDIA_TYPE),
        "503": oauth_error(
            "DynamoDB, KMS or the issuer's JWKS failed: nothing was issued, retry later.",
            errors.TEMPORARILY_UNAVAILABLE,
        ),
    }
    issued = {
        "200": ok(
            "A user token (one hour) and a refresh token (30 days, single use).",
            ref("TokenPair"),
            {"Cache-Control": NO_STORE_HEADER},
        )
    }
    return {
        "/v1/auth/exchange": {
            "post": operation(
                "exchange",
                "Trade an OpenID Connect ID token for a user token",
                "Login",
                {**issued, **failures},
                body={
                    "required": True,
                    "content": {
                        JSON: {"schema": ref("ExchangeRequest")},
                        FORM: {"schema": ref("TokenExchangeForm")},
                    },
                },
                secured=False,
            ),
        },
        "/v1/auth/refresh": {
            "post": operation(
                "refresh",
                "Trade a refresh token for a new pair",
                "Login",
                {**issued, **failures},
                body={
                    "required": True,
                    "content": {
                        JSON: {"schema": ref("RefreshRequest")},
                        FORM: {"schema": ref("RefreshForm")},
                    },
                },
                secured=False,
            ),
        },
    }


def html(description: str) -> Schema:
    return {"description": description, "content": {"text/html": {"schema": {"type": "string"}}}}


REDIRECT = {
    "description": "To the next step of the sign-in (Location).",
    "headers": {"Location": LOCATION_HEADER},
}


_SPACE = "".join(f"\\u{ord(c):04x}" for c in map(chr, range(0x10000)) if c.isspace())


def authorize_parameters() -> list[Schema]:
    """The authorization request's query (RFC 6749 §4.1.1, RFC 7636, RFC 8707)."""
    scopes = "|".join(re.escape(s) for s in (*ALL_SCOPES, OFFLINE_ACCESS))
    # Space-separated scope names, any whitespace Python's `str.split` splits on.
    scope_pattern = rf"^[{_SPACE}]*(?:(?:{scopes})(?:[{_SPACE}]+|$))*$"
    return [
        {"name": name, "in": "query", "required": required, "schema": schema}
        for name, required, schema in (
            ("response_type", True, {"type": "string", "enum": ["code"]}),
            ("client_id", True, {"type": "string", "minLength": 1}),
            ("redirect_uri", True, {"type": "string", "minLength": 1}),
            ("code_challenge", True, {"type": "string", "pattern": PKCE_CHALLENGE.pattern}),
            ("code_challenge_method", True, {"type": "string", "enum": ["S256"]}),
            ("resource", True, {"type": "string", "minLength": 1}),
            ("scope", False, {"type": "string", "pattern": scope_pattern}),
            ("state", False, {"type": "string", "maxLength": MAX_STATE_LENGTH}),
            ("login_hint", False, {"type": "string"}),
            # `consent`: show the consent page even where the person's consent is remembered.
            ("prompt", False, {"type": "string", "enum": ["consent"]}),
        )
    ]


def oauth_operations() -> dict[str, Schema]:
    """The MCP authorization server (README, "MCP clients"): RFC 8414 and RFC 9728 metadata,
    client registration, the browser steps of the code flow, token and revocation."""
    json_object = {"type": "object"}
    not_served = {"404": problem("No protected resource is served here.", errors.NOT_FOUND)}
    def protected(segments: str, suffix: str) -> Schema:
        return {
            "get": operation(
                f"protectedResourceMetadata{suffix}",
                "RFC 9728 metadata of an MCP resource served here",
                "MCP authorization",
                {"200": ok("The resource's metadata.", json_object), **not_served},
                parameters=[
                    {"name": n, "in": "path", "required": True, "schema": {"type": "string"}}
                    for n in segments
                ],
                secured=False,
            )
        }
    token_failures = {
        "400": oauth_error(
            "RFC 6749 error.",
            errors.OAUTH_INVALID_REQUEST,
            errors.INVALID_GRANT,
            errors.UNSUPPORTED_GRANT_TYPE,
            errors.INVALID_TARGET,
            errors.OAUTH_INVALID_SCOPE,
            errors.UNAUTHORIZED_CLIENT,
        ),
        "401": oauth_error(
            "Clients here are public: no client secret. To a request with an `Authorization` "
            "header, with `WWW-Authenticate` naming its scheme (RFC 6749 §5.2).",
            errors.INVALID_CLIENT,
        ),
        "413": oauth_error("The body is larger than 16 KiB.", errors.OAUTH_PAYLOAD_TOO_LARGE),
        "415": problem("Send an OAuth form.", errors.UNSUPPORTED_MEDIA_TYPE),
        "503": oauth_error("Try again later.", errors.TEMPORARILY_UNAVAILABLE),
    }
    browser = {
        "400": html("An error page: the request cannot be served (never redirected)."),
        "503": html("An error page: try again later."),
    }
    form = {"type": "object", "additionalProperties": {"type": "string"}}
    return {
        "/.well-known/oauth-authorization-server": {
            "get": operation(
                "authorizationServerMetadata",
                "RFC 8414 metadata of the MCP authorization server",
                "MCP authorization",
                {"200": ok("The metadata.", json_object)},
                secured=False,
            )
        },
        "/.well-known/oauth-protected-resource/{a}": protected("a", "1"),
        "/.well-known/oauth-protected-resource/{a}/{b}": protected("ab", "2"),
        "/.well-known/oauth-protected-resource/{a}/{b}/{c}": protected("abc", "3"),
        "/v1/oauth/register": {
            "post": operation(
                "registerClient",
                "RFC 7591 dynamic client registration",
                "MCP authorization",
                {
                    "201": ok("The client, with its `client_id`.", json_object),
                    "400": oauth_error(
                        "The metadata is not acceptable.",
                        errors.INVALID_CLIENT_METADATA,
                        errors.INVALID_REDIRECT_URI,
                        errors.OAUTH_INVALID_REQUEST,
                    ),
                    "413": oauth_error("Over 16 KiB.", errors.OAUTH_PAYLOAD_TOO_LARGE),
                    "415": problem("Send application/json.", errors.UNSUPPORTED_MEDIA_TYPE),
                    "429": oauth_error("Too many registrations.", errors.REGISTRATION_LIMITED),
                    "503": oauth_error("Try again later.", errors.TEMPORARILY_UNAVAILABLE),
                },
                body=json_body(
                    {
                        "type": "object",
                        "required": ["redirect_uris"],
                        "properties": {
                            "redirect_uris": {
                                "type": "array",
                                "minItems": 1,
                                "items": {"type": "string", "format": "uri"},
                            },
                            "client_name": {"type": "string"},
                            "application_type": {"type": "string", "enum": ["web", "native"]},
                        },
                    }
                ),
                secured=False,
            )
        },
        "/v1/oauth/authorize": {
            "get": operation(
                "authorize",
                "Start an authorization (PKCE S256): on to the login provider",
                "MCP authorization",
                parameters=authorize_parameters(),
                responses={
                    "302": REDIRECT,
                    "400": html(
                        "An error page naming the RFC 6749 error: every refusal before the "
                        "person has signed in is shown here, never redirected (RFC 9700 "
                        "§4.11.2)."
                    ),
                    "500": html("An error page: sign-in is not configured (LOGIN_PROVIDER)."),
                    "503": browser["503"],
                },
                secured=False,
            )
        },
        "/v1/oauth/pages.css": {
            "get": operation(
                "oauthPagesStylesheet",
                "The consent and error pages' stylesheet",
                "MCP authorization",
                {"200": {"description": "The stylesheet.", "content": {"text/css": {}}}},
                secured=False,
            )
        },
        "/v1/oauth/callback": {
            "get": operation(
                "loginCallback",
                "Back from the login provider: on to the consent page, or straight back to"
                " the client with a code where the person's consent is remembered",
                "MCP authorization",
                {"303": REDIRECT, **browser},
                secured=False,
            )
        },
        "/v1/oauth/consent": {
            "get": operation(
                "consentPage",
                "The consent page",
                "MCP authorization",
                {"200": html("The consent form."), **browser},
                secured=False,
            ),
            "post": operation(
                "consent",
                "The person's decision: back to the client with a code or an error",
                "MCP authorization",
                {
                    "303": REDIRECT,
                    **browser,
                    "415": problem("Send the consent form.", errors.UNSUPPORTED_MEDIA_TYPE),
                },
                body={"required": True, "content": {FORM: {"schema": form}}},
                secured=False,
            ),
        },
        "/v1/oauth/token": {
            "post": operation(
                "oauthToken",
                "Authorization code and refresh token grants (RFC 6749)",
                "MCP authorization",
                {
                    "200": ok(
                        "An access token for the resource, and a refresh token if the "
                        "client's `grant_types` include `refresh_token`.",
                        json_object,
                        {"Cache-Control": NO_STORE_HEADER},
                    ),
                    **token_failures,
                },
                body={"required": True, "content": {FORM: {"schema": form}}},
                secured=False,
            )
        },
        "/v1/oauth/revoke": {
            "post": operation(
                "oauthRevoke",
                "RFC 7009 revocation of a refresh or access token's grant",
                "MCP authorization",
                {
                    "200": {
                        "description": (
                            "Revoked, or nothing to revoke. Without `client_id` the token "
                            "alone suffices; with another client's `client_id`, nothing is "
                            "revoked."
                        )
                    },
                    **token_failures,
                },
                body={
                    "required": True,
                    "content": {
                        FORM: {
                            "schema": {
                                "type": "object",
                                "required": ["token"],
                                "properties": {
                                    "token": {"type": "string", "minLength": 1},
                                    "token_type_hint": {"type": "string"},
                                    "client_id": {"type": "string"},
                                },
                            }
                        }
                    },
                },
                secured=False,
            )
        },
    }


def dashboard_operations() -> dict[str, Schema]:
    missing = {"404": problem("No such file (or the dashboard is not built).", errors.NOT_FOUND)}
    return {
        "/dashboard": {
            "get": operation(
                "dashboard",
                "The dashboard (people sign in there)",
                "Dashboard",
                {"200": html("The dashboard's page."), "301": REDIRECT, **missing},
                secured=False,
            )
        },
        "/dashboard/{name}": {
            "get": operation(
                "dashboardFile",
                "A file of the dashboard, or its sign-in settings (config.json)",
                "Dashboard",
                parameters=[
                    {"name": "name", "in": "path", "required": True, "schema": {"type": "string"}}
                ],
                responses={
                    "200": {"description": "The file."},
                    **missing,
                    "503": problem(
                        "DASHBOARD_LOGIN does not name a trusted issuer.",
                        errors.DASHBOARD_NOT_CONFIGURED,
                    ),
                },
                secured=False,
            )
        },
    }


# -- schemas ------------------------------------------------------------------------------


def schemas() -> dict[str, Schema]:
    return {
        "Problem": {
            "type": "object",
            "description": "RFC 9457 problem details with a stable `code`.",
            "required": ["type", "title", "status", "detail", "code"],
            "properties": {
                "type": {
                    "type": "string",
                    "format": "uri-reference",
                    "description": "The code's entry in the error reference (docs/errors).",
                    "examples": ["/docs/errors#not_found"],
                },
                "title": {"type": "string", "examples": ["Not Found"]},
                "status": {"type": "integer", "minimum": 400, "maximum": 599},
                "detail": {"type": "string", "description": "For people; never a secret."},
                "code": {"type": "string", "description": "Stable: safe to branch on."},
            },
        },
        "OAuthError": {
            "type": "object",
            "description": "RFC 6749 §5.2 error.",
            "required": ["error", "error_description"],
            "properties": {"error": {"type": "string"}, "error_description": {"type": "string"}},
        },
        "LeakReport": {
            "type": "array",
            "minItems": 1,
            "maxItems": MAX_REPORTED_TOKENS,
            "items": {
                "type": "object",
                "required": ["token"],
                "properties": {
                    "token": {"type": "string", "minLength": 1, "maxLength": 1024},
                    "type": {"type": ["string", "null"], "maxLength": 200},
                    "url": {"type": ["string", "null"], "maxLength": 2048},
                    "source": {"type": ["string", "null"], "maxLength": 200},
                },
            },
        },
        "LeakVerdicts": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["token_hash", "token_type", "label"],
                "properties": {
                    "token_hash": {"type": "string", "pattern": "^[0-9a-f]{64}$"},
                    "token_type": {"type": "string"},
                    "label": {"type": "string", "enum": ["true_positive", "false_positive"]},
                },
            },
        },
        "JwkSet": {
            "type": "object",
            "required": ["keys"],
            "properties": {
                "keys": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "required": ["kty", "kid", "alg", "use", "n", "e"],
                        "properties": {
                            "kty": {"const": "RSA"},
                            "kid": {"type": "string"},
                            "alg": {"const": "RS256"},
                            "use": {"const": "sig"},
                            "n": {"type": "string"},
                            "e": {"type": "string"},
                        },
                    },
                }
            },
        },
        "ExchangeRequest": {
            "type": "object",
            "additionalProperties": False,
            "required": ["id_token"],
            "properties": {
                "id_token": {"type": "string", "minLength": 1, "examples": ["<ID token>"]}
            },
        },
        "TokenExchangeForm": {
            "type": "object",
            "required": ["grant_type", "subject_token", "subject_token_type"],
            "properties": {
                "grant_type": {"const": "urn:ietf:params:oauth:grant-type:token-exchange"},
                "subject_token": {"type": "string", "minLength": 1},
                "subject_token_type": {"const": "urn:ietf:params:oauth:token-type:id_token"},
                "requested_token_type": {
                    "const": "urn:ietf:params:oauth:token-type:access_token"
                },
                "audience": {"type": "string"},
                "resource": {"type": "string"},
            },
        },
        "RefreshRequest": {
            "type": "object",
            "additionalProperties": False,
            "required": ["refresh_token"],
            "properties": {
                "refresh_token": {
                    "type": "string", "minLength": 1, "examples": ["<refresh token>"]
                },
                "grant_type": {"const": "refresh_token"},
            },
        },
        "RefreshForm": {
            "type": "object",
            "required": ["grant_type", "refresh_token"],
            "properties": {
                "grant_type": {"const": "refresh_token"},
                "refresh_token": {"type": "string", "minLength": 1},
            },
        },
    }


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
                "is bound to its own and may only name that one).",
                "schema": WORKSPACE_ID,
            },
            "WorkspaceQuery": {
                "name": "workspace_id",
                "in": "query",
                "description": "Older clients' spelling of X-Workspace-Id.",
                "deprecated": True,
                "schema": WORKSPACE_ID,
            },
            "KeyId": {"name": "key_id", "in": "path", "required": True, "schema": KEY_ID},
            "IdempotencyKey": {
                "name": "Idempotency-Key",
                "in": "header",
                "description": "Any 1 to 255 printable ASCII characters, new for each logical "
                "call and the same for its retries: within 24 hours, the same key from the same "
                "caller with the same request answers the first result again (README, "
                "Retries).",
                "schema": {
                    "type": "string",
                    "minLength": 1,
                    "maxLength": 255,
                    "pattern": "^[ -~]+$",
                },
            },
            "WorkspaceId": {
                "name": "workspace_id",
                "in": "path",
                "required": True,
                "schema": WORKSPACE_ID,
            },
            "UserId": {"name": "user_id", "in": "path", "required": True, "schema": USER_ID},
        },
        "headers": {
            "IdempotentReplayed": {
                "description": "Present on an answer given again for a retry with the same "
                "Idempotency-Key: nothing new was created.",
                "schema": {"const": "true"},
            },
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
        "schemas": {**schemas(), **model_schemas()},
    }


DESCRIPTION = """\
The authentication service of the hosted memory service: API keys, workspaces and their
members, and the login token flow.

Send `Authorization: Bearer <API key or user token>`, never a credential in the URL. Errors
are RFC 9457 problem details whose `code` is stable (the token endpoints answer RFC 6749
errors); each code is explained at `/docs/errors`. Every path also answers CORS preflights
(`OPTIONS`) for the stage's allowed origins.
"""


def document(server_url: str | None = None) -> Schema:
    paths: dict[str, Schema] = {}
    for group in (declared_paths(), secret_scanning_operations(),
                  identity_operations(), token_operations(),
                  oauth_operations(), dashboard_operations()):
        paths.update(group)
    found: Schema = {
        "openapi": "3.1.0",
        "info": {"title": "memory-auth", "version": "1", "description": DESCRIPTION},
        "tags": [
            {"name": "API keys"},
            {"name": "Audit events"},
            {"name": "Leaked-key reports"},
            {"name": "Workspaces"},
            {"name": "Identity"},
            {"name": "Login"},
            {"name": "MCP authorization"},
            {"name": "Dashboard"},
        ],
        "paths": dict(sorted(paths.items())),
        "components": components(),
    }
    if server_url:
        found["servers"] = [{"url": server_url}]
    return found
