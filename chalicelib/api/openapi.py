"""The published contract: an OpenAPI 3.1 document of every route, served at /openapi.json.

Every status an operation can answer is listed, each error with the codes of the error
catalogue (`chalicelib/errors.py`) it may carry, so that a client generated from this
document, and the property-based tests that hold the running service against it
(`tests/contract/`), know exactly what to expect. `tests/functional/api/test_openapi.py`
holds the document against the app's routes both ways. Examples are placeholders.
"""

from __future__ import annotations

from typing import Any

from chalicelib import errors, strict_parsing
from chalicelib.access.allow_list import MAX_CIDRS
from chalicelib.access.scopes import ALL_SCOPES, DATA_PLANE_SCOPES
from chalicelib.errors import Problem
from chalicelib.events.model import TYPES as EVENT_TYPES
from chalicelib.keys.model import MAX_GRACE_PERIOD, MAX_LIFETIME_DAYS
from chalicelib.scanning.github import MAX_TOKENS as MAX_REPORTED_TOKENS

Schema = dict[str, Any]

KEYS = "/v1/auth/api-keys"
EVENTS = "/v1/auth/events"
SECRET_SCANNING = "/v1/auth/secret-scanning/github"
WORKSPACES = "/v1/workspaces"
PROBLEM_JSON = "application/problem+json"
JSON = "application/json"
FORM = "application/x-www-form-urlencoded"
ULID = "[0-9A-HJKMNP-TV-Z]{26}"
KEY_ID = {
    "type": "string",
    "pattern": f"^key_{ULID}$",
    "examples": ["key_01JQ0000000000000000000000"],
}
WORKSPACE_ID = {
    "type": "string",
    "pattern": f"^ws_{ULID}$",
    "examples": ["ws_01JQ0000000000000000000000"],
}
USER_ID = {"type": "string", "pattern": "^usr_[0-9A-Za-z]{1,40}$", "examples": ["usr_01JQ0000"]}
TIME = {"type": "string", "format": "date-time", "examples": ["2026-11-21T12:00:00Z"]}
NULLABLE_TIME = {"type": ["string", "null"], "format": "date-time"}


def _unprintable_ranges() -> str:
    """The characters `strict_parsing.clean_text` refuses, as a regex class body, from this
    interpreter's Unicode tables so the two never disagree: control characters and
    bidirectional controls of the BMP. Not lone surrogates: no UTF-8 body can carry one, and
    regex engines that generate test data refuse a class that names them."""
    ranges: list[tuple[int, int]] = []
    for point in range(0x10000):
        if 0xD800 <= point <= 0xDFFF:
            continue
        if not strict_parsing.is_label_character(chr(point)):
            if ranges and ranges[-1][1] == point - 1:
                ranges[-1] = (ranges[-1][0], point)
            else:
                ranges.append((point, point))
    return "".join(
        f"\\u{a:04x}" + (f"-\\u{b:04x}" if b != a else "") for a, b in ranges
    )


_UNPRINTABLE = _unprintable_ranges()
# A label or a name: 1 to 100 characters once trimmed (so the trimmed text starts and ends
# with a visible character), none of them a control character or a bidirectional control.
_VISIBLE = rf"[^\s{_UNPRINTABLE}]"
TEXT = {
    "type": "string",
    "pattern": rf"^\s*(?:{_VISIBLE}[^{_UNPRINTABLE}]{{0,98}}{_VISIBLE}|{_VISIBLE})\s*$",
    "description": "1 to 100 characters after trimming; no control characters.",
}
# 1 to 20 networks in CIDR notation (a bare address is its own /32 or /128); host bits set,
# like `10.0.0.1/24`, are refused (invalid_cidr), a rule no pattern here states.
ALLOWED_CIDRS = {
    "type": ["array", "null"],
    "minItems": 1,
    "maxItems": MAX_CIDRS,
    "items": {"type": "string", "minLength": 1, "maxLength": 64},
    "description": f"1 to {MAX_CIDRS} IPv4 or IPv6 CIDRs, host bits zero; null: any address.",
    "examples": [["203.0.113.0/24", "2001:db8::/32"]],
}
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
# What a create or a rotation answers when its Idempotency-Key was used for another request.
KEY_REUSED_422 = {
    "422": problem(
        "This Idempotency-Key was used for another request in the last 24 hours.",
        errors.IDEMPOTENCY_KEY_REUSED,
    )
}

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
MANAGER_403 = (errors.INSUFFICIENT_SCOPE, *WORKSPACE_403)


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


EMPTY_OBJECT = {"type": "object", "additionalProperties": False}


# -- the operations ---------------------------------------------------------------------


def key_operations() -> dict[str, Schema]:
    not_found = {"404": problem("No key with this id is yours.", errors.NOT_FOUND)}
    return {
        KEYS: {
            "post": operation(
                "createApiKey",
                "Create an API key",
                "API keys",
                answers(
                    {
                        "201": ok(
                            "The key, with its plaintext `key` (shown here and on reveal); "
                            "the same key again for a retry with the same Idempotency-Key.",
                            ref("ApiKeyWithSecret"),
                            {
                                "Location": LOCATION_HEADER,
                                "Cache-Control": NO_STORE_HEADER,
                                "Idempotent-Replayed": REPLAYED_HEADER,
                            },
                        )
                    },
                    bad_request=(
                        errors.INVALID_LABEL,
                        errors.INVALID_CATEGORY,
                        errors.INVALID_SCOPE,
                        errors.WORKSPACE_ID_REQUIRED,
                        errors.WORKSPACE_ID_NOT_ALLOWED,
                        errors.INVALID_LIFETIME,
                        errors.INVALID_CIDR,
                        errors.INVALID_IDEMPOTENCY_KEY,
                    ),
                    forbidden=MANAGER_403,
                    extra=KEY_REUSED_422,
                    body=True,
                ),
                parameters=[WORKSPACE_HEADER, IDEMPOTENCY_KEY],
                body=json_body(ref("NewApiKey")),
            ),
            "get": operation(
                "listApiKeys",
                "List the caller's keys",
                "API keys",
                answers(
                    {"200": ok("A page of keys, newest first, without plaintext.", ref("KeyPage"))},
                    bad_request=(errors.INVALID_PARAMETER,),
                    forbidden=MANAGER_403,
                ),
                parameters=[
                    {
                        "name": "limit",
                        "in": "query",
                        "schema": {"type": "integer", "minimum": 1, "maximum": 100, "default": 50},
                    },
                    {
                        "name": "cursor",
                        "in": "query",
                        "description": "`nextCursor` of the previous page.",
                        "schema": {"type": "string", "minLength": 1},
                    },
                    {
                        "name": "status",
                        "in": "query",
                        "schema": {"type": "string", "enum": ["active", "revoked", "expired"]},
                    },
                    WORKSPACE_QUERY,
                    WORKSPACE_HEADER,
                ],
            ),
        },
        KEYS + "/{key_id}": {
            "get": operation(
                "getApiKey",
                "Get one of the caller's keys",
                "API keys",
                answers(
                    {"200": ok("The key, without plaintext.", ref("ApiKey"))},
                    forbidden=MANAGER_403,
                    extra=not_found,
                ),
                parameters=[KEY_ID_PATH, WORKSPACE_HEADER],
            ),
            "patch": operation(
                "updateApiKey",
                "Change a key's label or IP allow-list",
                "API keys",
                answers(
                    {"200": ok("The key, without plaintext.", ref("ApiKey"))},
                    bad_request=(errors.INVALID_LABEL, errors.INVALID_CIDR),
                    forbidden=MANAGER_403,
                    extra={
                        **not_found,
                        "409": problem(
                            "The key is revoked, or its rotation's grace period ended.",
                            errors.KEY_NOT_ACTIVE,
                        ),
                    },
                    body=True,
                ),
                parameters=[KEY_ID_PATH, WORKSPACE_HEADER],
                body=json_body(ref("ApiKeyChanges")),
                description="Effective on the next request. `allowedCidrs: null` removes the list.",
            ),
            "delete": operation(
                "revokeApiKey",
                "Revoke a key",
                "API keys",
                answers(
                    {"204": NO_CONTENT},
                    forbidden=MANAGER_403,
                    extra=not_found,
                ),
                parameters=[KEY_ID_PATH, WORKSPACE_HEADER],
                description=(
                    "Revocation takes effect on the very next request. A revoked key stays "
                    "readable (status `revoked`) for 30 days; revoking it again is 204."
                ),
            ),
        },
        KEYS + "/{key_id}/reveal": {
            "get": operation(
                "revealApiKey",
                "Show a key's plaintext again",
                "API keys",
                answers(
                    {
                        "200": ok(
                            "The key with its plaintext `key`.",
                            ref("ApiKeyWithSecret"),
                            {"Cache-Control": NO_STORE_HEADER},
                        )
                    },
                    forbidden=MANAGER_403,
                    extra={
                        **not_found,
                        "410": problem(
                            "The plaintext cannot be shown.",
                            errors.KEY_REVOKED,
                            errors.KEY_NOT_REVEALABLE,
                        ),
                    },
                ),
                parameters=[KEY_ID_PATH, WORKSPACE_QUERY, WORKSPACE_HEADER],
            ),
        },
        KEYS + "/{key_id}/rotate": {
            "post": operation(
                "rotateApiKey",
                "Replace a key by a new one",
                "API keys",
                answers(
                    {
                        "201": ok(
                            "The successor, with its plaintext `key`; the old key is revoked. "
                            "The same successor again for a retry with the same "
                            "Idempotency-Key.",
                            ref("ApiKeyWithSecret"),
                            {
                                "Location": LOCATION_HEADER,
                                "Cache-Control": NO_STORE_HEADER,
                                "Idempotent-Replayed": REPLAYED_HEADER,
                            },
                        )
                    },
                    bad_request=(errors.INVALID_GRACE_PERIOD, errors.INVALID_IDEMPOTENCY_KEY),
                    forbidden=MANAGER_403,
                    extra={
                        **not_found,
                        "409": problem(
                            "The key is not active, already has a successor, or a concurrent "
                            "rotation won.",
                            errors.KEY_NOT_ACTIVE,
                        ),
                        **KEY_REUSED_422,
                    },
                    body=True,
                ),
                parameters=[KEY_ID_PATH, WORKSPACE_HEADER, IDEMPOTENCY_KEY],
                body=json_body(ref("Rotation"), required=False),
                description=(
                    "The successor inherits label, category, workspace, scopes, lifetime and "
                    "`allowedCidrs`. Without a grace period the old key is revoked at once; "
                    "with one it keeps working until the grace ends."
                ),
            ),
        },
    }


def event_operations() -> dict[str, Schema]:
    return {
        EVENTS: {
            "get": operation(
                "listEvents",
                "The audit events of the caller's keys and of the workspaces it owns",
                "Audit events",
                answers(
                    {"200": ok("A page of events, newest first.", ref("EventPage"))},
                    bad_request=(errors.INVALID_PARAMETER,),
                    forbidden=MANAGER_403,
                ),
                parameters=[
                    {
                        "name": "limit",
                        "in": "query",
                        "schema": {"type": "integer", "minimum": 1, "maximum": 100, "default": 50},
                    },
                    {
                        "name": "cursor",
                        "in": "query",
                        "description": "`nextCursor` of the previous page.",
                        "schema": {"type": "string", "minLength": 1},
                    },
                    {
                        "name": "type",
                        "in": "query",
                        "description": "Only events of this type.",
                        "schema": {"type": "string", "enum": list(EVENT_TYPES)},
                    },
                    {
                        "name": "keyId",
                        "in": "query",
                        "description": "Only this key's events.",
                        "schema": KEY_ID,
                    },
                    WORKSPACE_QUERY,
                    WORKSPACE_HEADER,
                ],
                description=(
                    "With a workspace named (header or `workspace_id`), only that workspace's "
                    "events. Events are kept 400 days."
                ),
            ),
        },
    }


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
        "/v1/auth/whoami": {
            "get": operation(
                "whoami",
                "Who the credential resolves to",
                "Identity",
                answers({"200": ok("The resolved caller.", ref("Principal"))}),
                parameters=[WORKSPACE_HEADER],
            ),
        },
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


def workspace_operations() -> dict[str, Schema]:
    member_of = (errors.INSUFFICIENT_SCOPE, errors.NOT_A_MEMBER, errors.WORKSPACE_MISMATCH)
    owner = (*member_of, errors.OWNER_REQUIRED)
    return {
        WORKSPACES: {
            "post": operation(
                "createWorkspace",
                "Create a workspace (the caller owns it)",
                "Workspaces",
                answers(
                    {
                        "201": ok(
                            "The workspace; the same one again for a retry with the same "
                            "Idempotency-Key.",
                            ref("Workspace"),
                            {"Location": LOCATION_HEADER, "Idempotent-Replayed": REPLAYED_HEADER},
                        )
                    },
                    bad_request=(errors.INVALID_NAME, errors.INVALID_IDEMPOTENCY_KEY),
                    forbidden=MANAGER_403,
                    extra=KEY_REUSED_422,
                    body=True,
                ),
                parameters=[WORKSPACE_HEADER, IDEMPOTENCY_KEY],
                body=json_body(ref("NewWorkspace")),
            ),
            "get": operation(
                "listWorkspaces",
                "The caller's workspaces",
                "Workspaces",
                answers(
                    {"200": ok("Every workspace the caller belongs to.", ref("WorkspaceList"))},
                    forbidden=MANAGER_403,
                ),
                parameters=[WORKSPACE_HEADER],
            ),
        },
        WORKSPACES + "/{workspace_id}/members": {
            "get": operation(
                "listMembers",
                "A workspace's members (members only)",
                "Workspaces",
                answers(
                    {"200": ok("The members.", ref("MemberList"))}, forbidden=member_of
                ),
                parameters=[WORKSPACE_ID_PATH, WORKSPACE_HEADER],
            ),
        },
        WORKSPACES + "/{workspace_id}/members/{user_id}": {
            "put": operation(
                "addMember",
                "Add a member (owner only)",
                "Workspaces",
                answers(
                    {
                        "200": ok("Already a member.", ref("Member")),
                        "201": ok("Added.", ref("Member")),
                    },
                    bad_request=(errors.INVALID_USER_ID,),
                    forbidden=owner,
                    extra={
                        "404": problem(
                            "No user with this id has ever signed in.", errors.USER_NOT_FOUND
                        )
                    },
                    body=True,
                ),
                parameters=[WORKSPACE_ID_PATH, USER_ID_PATH, WORKSPACE_HEADER],
                body=json_body(EMPTY_OBJECT, required=False),
            ),
            "delete": operation(
                "removeMember",
                "Remove a member (owner only)",
                "Workspaces",
                answers(
                    {"204": NO_CONTENT},
                    forbidden=owner,
                    extra={
                        "404": problem("The user is not a member.", errors.NOT_FOUND),
                        "409": problem("The owner cannot leave.", errors.OWNER_CANNOT_LEAVE),
                    },
                ),
                parameters=[WORKSPACE_ID_PATH, USER_ID_PATH, WORKSPACE_HEADER],
            ),
        },
    }


def html(description: str) -> Schema:
    return {"description": description, "content": {"text/html": {"schema": {"type": "string"}}}}


REDIRECT = {
    "description": "To the next step of the sign-in (Location).",
    "headers": {"Location": LOCATION_HEADER},
}


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
                {
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
        "/v1/oauth/callback": {
            "get": operation(
                "loginCallback",
                "Back from the login provider: on to the consent page",
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
    all_scopes = list(ALL_SCOPES)
    api_key = {
        "type": "object",
        "required": [
            "id", "label", "category", "workspaceId", "scopes", "status", "hint",
            "createdAt", "expiresAt", "revokedAt", "replacedBy", "revealable", "lastUsedAt",
            "allowedCidrs",
        ],
        "properties": {
            "id": KEY_ID,
            "label": {"type": "string", "examples": ["ci deploys"]},
            "category": {"type": "string", "enum": ["workspace", "admin"]},
            "workspaceId": {**WORKSPACE_ID, "type": ["string", "null"]},
            "scopes": {"type": "array", "items": {"type": "string", "enum": all_scopes}},
            "status": {"type": "string", "enum": ["active", "revoked", "expired"]},
            "hint": {
                "type": ["string", "null"],
                "description": "The prefix, `...` and the last 4 characters (ASCII).",
                "examples": ["svc_...abcd"],
            },
            "createdAt": TIME,
            "expiresAt": TIME,
            "revokedAt": NULLABLE_TIME,
            "replacedBy": {**KEY_ID, "type": ["string", "null"]},
            "revealable": {
                "type": "boolean",
                "description": "Whether reveal can show the plaintext (never after revocation).",
            },
            "lastUsedAt": {
                **NULLABLE_TIME,
                "description": "The last successful use, to 5 minutes; null until first used.",
            },
            "allowedCidrs": {
                **ALLOWED_CIDRS,
                "description": "The networks it may be used from, canonical; null: any address.",
            },
        },
    }
    with_secret = {
        "allOf": [ref("ApiKey")],
        "required": ["key"],
        "properties": {
            "key": {
                "type": "string",
                "description": "The plaintext key. Store it in a secrets manager; never log it.",
                "examples": ["<the API key, svc_ and 50 characters>"],
            }
        },
    }
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
        "ApiKey": api_key,
        "ApiKeyWithSecret": with_secret,
        "NewApiKey": {
            "type": "object",
            "additionalProperties": False,
            "required": ["label"],
            "properties": {
                "label": {**TEXT, "examples": ["ci deploys"]},
                "category": {
                    "type": ["string", "null"],
                    "enum": ["admin", "workspace", None],
                    "default": "admin",
                    "description": "null, like omitting it, means `admin`.",
                },
                "workspaceId": {
                    **WORKSPACE_ID,
                    "type": ["string", "null"],
                    "description": "Workspace keys only (null: none).",
                },
                "workspace_id": {
                    **WORKSPACE_ID,
                    "type": ["string", "null"],
                    "description": "Older clients' spelling of `workspaceId`; sent beside it, "
                    "it must name the same workspace (else 400 `conflicting_workspace_id`).",
                    "deprecated": True,
                },
                "scopes": {
                    "type": ["array", "null"],
                    "minItems": 1,
                    "items": {"type": "string", "enum": all_scopes},
                    "description": "A subset of the category's scopes; omitted or null: all.",
                },
                "expiresInDays": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": MAX_LIFETIME_DAYS,
                    "default": MAX_LIFETIME_DAYS,
                },
                "allowedCidrs": ALLOWED_CIDRS,
            },
            # A workspace key names its workspace (either spelling, or both alike: no schema
            # can say "equal") and takes only data-plane scopes; an admin key names none.
            "if": {"required": ["category"], "properties": {"category": {"const": "workspace"}}},
            "then": {
                "anyOf": [
                    {"required": [name], "properties": {name: {"type": "string"}}}
                    for name in ("workspaceId", "workspace_id")
                ],
                "properties": {
                    "scopes": {"items": {"enum": list(DATA_PLANE_SCOPES)}},
                },
            },
            "else": {
                "properties": {"workspaceId": {"type": "null"}, "workspace_id": {"type": "null"}},
            },
        },
        "ApiKeyChanges": {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "label": {**TEXT, "examples": ["ci deploys"]},
                "allowedCidrs": ALLOWED_CIDRS,
            },
        },
        "Rotation": {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "gracePeriodSeconds": {
                    "type": "integer",
                    "minimum": 0,
                    "maximum": int(MAX_GRACE_PERIOD.total_seconds()),
                    "default": 0,
                    "description": "How long the old key keeps working (0: revoked at once).",
                },
            },
        },
        "KeyPage": {
            "type": "object",
            "required": ["keys", "nextCursor"],
            "properties": {
                "keys": {"type": "array", "items": ref("ApiKey")},
                "nextCursor": {"type": ["string", "null"]},
            },
        },
        "Event": {
            "type": "object",
            "required": [
                "id", "type", "occurredAt", "actor", "keyId", "workspaceId", "sourceIp",
                "userAgent", "data",
            ],
            "properties": {
                "id": {
                    "type": "string",
                    "pattern": f"^evt_{ULID}$",
                    "examples": ["evt_01JQ0000000000000000000000"],
                },
                "type": {"type": "string", "enum": list(EVENT_TYPES)},
                "occurredAt": TIME,
                "actor": {
                    "type": "object",
                    "description": 'The caller (`userId`, `credential`, `keyId`), or '
                    '`{"system": "expiry"}` / `{"system": "github-secret-scanning"}`.',
                    "properties": {
                        "userId": USER_ID,
                        "credential": {"type": "string", "enum": ["user_token", "api_key"]},
                        "keyId": {**KEY_ID, "type": ["string", "null"]},
                        "system": {"type": "string"},
                    },
                },
                "keyId": {**KEY_ID, "type": ["string", "null"]},
                "workspaceId": {**WORKSPACE_ID, "type": ["string", "null"]},
                "sourceIp": {"type": ["string", "null"]},
                "userAgent": {"type": ["string", "null"]},
                "data": {"type": "object", "description": "What the event type records."},
            },
        },
        "EventPage": {
            "type": "object",
            "required": ["events", "nextCursor"],
            "properties": {
                "events": {"type": "array", "items": ref("Event")},
                "nextCursor": {"type": ["string", "null"]},
            },
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
        "Principal": {
            "type": "object",
            "required": ["userId", "credential", "keyId", "category", "workspaceId", "scopes"],
            "properties": {
                "userId": USER_ID,
                "credential": {"type": "string", "enum": ["user_token", "api_key"]},
                "keyId": {**KEY_ID, "type": ["string", "null"]},
                "category": {"type": ["string", "null"], "enum": ["workspace", "admin", None]},
                "workspaceId": {**WORKSPACE_ID, "type": ["string", "null"]},
                "scopes": {"type": "array", "items": {"type": "string", "enum": all_scopes}},
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
        "TokenPair": {
            "type": "object",
            "required": ["access_token", "token_type", "expires_in", "refresh_token"],
            "properties": {
                "access_token": {"type": "string", "examples": ["<user token (JWT)>"]},
                "token_type": {"const": "Bearer"},
                "expires_in": {"type": "integer", "examples": [3600]},
                "refresh_token": {"type": "string", "examples": ["<refresh token>"]},
                "issued_token_type": {
                    "const": "urn:ietf:params:oauth:token-type:access_token",
                    "description": "Only in the answer to an RFC 8693 form.",
                },
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
        "Workspace": {
            "type": "object",
            "required": ["id", "name", "ownerId", "createdAt"],
            "properties": {
                "id": WORKSPACE_ID,
                "name": {"type": "string", "examples": ["Research"]},
                "ownerId": USER_ID,
                "createdAt": TIME,
            },
        },
        "NewWorkspace": {
            "type": "object",
            "additionalProperties": False,
            "required": ["name"],
            "properties": {"name": {**TEXT, "examples": ["Research"]}},
        },
        "WorkspaceList": {
            "type": "object",
            "required": ["workspaces"],
            "properties": {
                "workspaces": {
                    "type": "array",
                    "items": {
                        "allOf": [ref("Workspace")],
                        "required": ["role"],
                        "properties": {"role": {"type": "string", "enum": ["owner", "member"]}},
                    },
                }
            },
        },
        "Member": {
            "type": "object",
            "required": ["workspaceId", "userId", "role", "addedAt"],
            "properties": {
                "workspaceId": WORKSPACE_ID,
                "userId": USER_ID,
                "role": {"type": "string", "enum": ["owner", "member"]},
                "addedAt": TIME,
            },
        },
        "MemberList": {
            "type": "object",
            "required": ["members"],
            "properties": {"members": {"type": "array", "items": ref("Member")}},
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
        "schemas": schemas(),
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
    for group in (key_operations(), event_operations(), secret_scanning_operations(),
                  identity_operations(), token_operations(), workspace_operations(),
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
