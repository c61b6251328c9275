"""The data-plane REQUEST authorizer: an API Gateway event to an IAM policy.

One straight sequence: a path that is not plain (`access/paths.py`: a dot segment, an encoded
slash or backslash, a backslash, an empty segment) is denied `invalid_path` before anything
else, so the scope is never chosen from a path the backend may read as another; then the
first path segment after `/v1/` names the scope; the two identity
headers go to `Resolver.resolve` (the same rules as our own routes); the principal
must hold the scope, and a data-plane call must name a workspace. Then:

- Allow for the method ARN, with the principal in the context;
- Deny with a `code` in the context, which API Gateway answers with 403 (a REST API has one
  status per gateway response type: a key over its daily quota is a 403 whose body's `code`
  is `quota_exceeded` and whose `Retry-After` is the context's `retryAfter`);
- `Unauthorized` raised, which API Gateway answers with 401;
- anything else raised (`DependencyUnavailable` when DynamoDB fails), which API Gateway
  answers with 500: a failed dependency never yields Allow.

A path under an MCP resource (MCP_RESOURCES, e.g. `/mcp`) is the memory service's MCP
endpoint: it accepts API keys and the access tokens issued for that resource (never user
tokens, never another resource's tokens), needs `MCP_SCOPE` and a workspace, and every Deny
there carries the `WWW-Authenticate` value its gateway response sends (`wwwAuthenticate`:
`resource_metadata`, and for a missing scope `error="insufficient_scope"` with the scope).

This module is on the authorizer's cold-start path: it imports only what the API-key path
needs (no Chalice routes, no logging framework, no PyJWT).
"""

from __future__ import annotations

from typing import Any

from chalicelib.access.dpop import DpopRequest
from chalicelib.access.headers import identity_headers, origin
from chalicelib.access.paths import is_plain_path
from chalicelib.access.principal import Principal, Refusal, Resolves
from chalicelib.access.scopes import (
    DATA_PLANE_SCOPES,
    MCP_SCOPE,
    SCOPE_BY_PATH_SEGMENT,
    ordered,
)
from chalicelib.config import McpResource, resource_for_path
from chalicelib.errors import INSUFFICIENT_SCOPE, INVALID_PATH, WORKSPACE_REQUIRED

API_PREFIX = "/v1/"

Event = dict[str, Any]
Answer = dict[str, Any]


class Unauthorized(Exception):
    """API Gateway answers 401 when a REQUEST authorizer fails with exactly this message.

    Its gateway response is static: it names both schemes and the DPoP algorithms, never the
    refusal. `refusal` is kept for a stand-in that renders it (local/mcp_server.py)."""

    def __init__(self, refusal: Refusal | None = None) -> None:
        super().__init__("Unauthorized")
        self.refusal = refusal


def required_scope(path: str | None) -> str | None:
    """The scope the first path segment after /v1/ needs, or None: nothing grants it."""
    if not path or not path.startswith(API_PREFIX):
        return None
    segment = path[len(API_PREFIX) :].partition("/")[0]
    return SCOPE_BY_PATH_SEGMENT.get(segment)


def identity(event: Event) -> tuple[str | None, str | None]:
    """`Authorization` and `X-Workspace-Id` (`access/headers.py`); either sent twice is
    refused as unauthenticated."""
    headers = identity_headers(event)
    if headers.authorization.copies > 1 or headers.workspace.copies > 1:
        raise Unauthorized()
    return headers.authorization.value, headers.workspace.value


def dpop_request(event: Event, scheme: str = "https") -> DpopRequest:
    """What a DPoP proof is checked against: the `DPoP` header (one copy), the method and
    `request_url`."""
    method = event.get("httpMethod")
    proof = identity_headers(event).proof()
    return DpopRequest(proof, method if isinstance(method, str) else "", request_url(event, scheme))


def request_url(event: Event, scheme: str = "https") -> str:
    """The URL the client addressed, as a DPoP proof's `htu` names it: the host API Gateway
    served (`domainName`, never the caller's Host header) and the full path it was sent to
    (`requestContext.path`: with the stage or base path). API Gateway serves https only."""
    context = event.get("requestContext") or {}
    domain, path = context.get("domainName"), context.get("path") or event.get("path")
    if not isinstance(domain, str) or not isinstance(path, str):
        return ""  # no URL to compare with: every proof is refused
    return f"{scheme}://{domain}{path}"


def authorize(
    event: Event,
    resolver: Resolves,
    resources: tuple[McpResource, ...] = (),
    scheme: str = "https",
) -> Answer:
    """`scheme`: of the URLs requests are sent to (https behind API Gateway; a local stand-in
    on loopback says http)."""
    method_arn: str = event["methodArn"]
    path = event.get("path")
    if not isinstance(path, str) or not is_plain_path(path):
        # Before the MCP resource or the scope is chosen from it; no credential is read.
        return deny(method_arn, "anonymous", INVALID_PATH.code)
    resource = resource_for_path(path, resources)
    if resource is not None:
        return authorize_mcp(event, resolver, resource, scheme)
    scope = required_scope(path)
    if scope is None:
        return deny(method_arn, "anonymous", INSUFFICIENT_SCOPE.code)
    authorization, workspace_id = identity(event)
    dpop = dpop_request(event, scheme)
    resolved = resolver.resolve(authorization, workspace_id, origin=origin(event), dpop=dpop)
    if isinstance(resolved, Refusal):
        if resolved.status == 401:
            raise Unauthorized(resolved)
        return deny(method_arn, "anonymous", resolved.code, retry_after=resolved.retry_after)
    if scope not in resolved.scopes:
        return deny(method_arn, resolved.user_id, INSUFFICIENT_SCOPE.code)
    if scope in DATA_PLANE_SCOPES and resolved.workspace_id is None:
        return deny(method_arn, resolved.user_id, WORKSPACE_REQUIRED.code)
    return allow(method_arn, resolved)


def authorize_mcp(
    event: Event, resolver: Resolves, resource: McpResource, scheme: str = "https"
) -> Answer:
    """A request to an MCP endpoint: the same checks, with its own audience and answers."""
    method_arn: str = event["methodArn"]
    authorization, workspace_id = identity(event)
    dpop = dpop_request(event, scheme)
    resolved = resolver.resolve(authorization, workspace_id, resource, origin(event), dpop)
    if isinstance(resolved, Refusal):
        if resolved.status == 401:
            raise Unauthorized(resolved)
        return deny(
            method_arn,
            "anonymous",
            resolved.code,
            challenge(resource),
            retry_after=resolved.retry_after,
        )
    if MCP_SCOPE not in resolved.scopes:
        return deny(
            method_arn,
            resolved.user_id,
            INSUFFICIENT_SCOPE.code,
            challenge(resource, error=INSUFFICIENT_SCOPE.code, scope=MCP_SCOPE),
        )
    if resolved.workspace_id is None:  # an admin key without X-Workspace-Id
        return deny(method_arn, resolved.user_id, WORKSPACE_REQUIRED.code, challenge(resource))
    return allow(method_arn, resolved)


def challenge(resource: McpResource, error: str | None = None, scope: str | None = None) -> str:
    """The WWW-Authenticate value at an MCP resource (RFC 6750 §3, RFC 9728 §5.1)."""
    parts = [f'error="{error}"'] if error else []
    if scope:
        parts.append(f'scope="{scope}"')
    parts.append(f'resource_metadata="{resource.metadata_url}"')
    return "Bearer " + ", ".join(parts)


def unauthorized_challenge(resource: McpResource, presented: bool) -> str:
    """The WWW-Authenticate value of a 401 at an MCP resource: `invalid_token` when a
    credential was sent but is bad, expired or revoked (RFC 6750 §3.1; none when nothing was
    sent), and the scopes a new authorization should ask for (MCP authorization: clients ask
    for exactly these), the resource's own, as its metadata's `scopes_supported`."""
    return challenge(
        resource,
        error="invalid_token" if presented else None,
        scope=" ".join(DATA_PLANE_SCOPES),
    )


def policy(effect: str, method_arn: str) -> dict[str, Any]:
    return {
        "Version": "2012-10-17",
        "Statement": [{"Action": "execute-api:Invoke", "Effect": effect, "Resource": method_arn}],
    }


def allow(method_arn: str, principal: Principal) -> Answer:
    # API Gateway context values are strings, numbers or booleans only: no null, no list.
    return {
        "principalId": principal.user_id,
        "policyDocument": policy("Allow", method_arn),
        "context": {
            "userId": principal.user_id,
            "credential": principal.credential,
            "keyId": principal.key_id or "",
            "category": principal.category or "",
            "workspaceId": principal.workspace_id or "",
            "scopes": " ".join(ordered(principal.scopes)),
            "clientId": principal.client_id or "",
            # A delegated token: the credential at the top of its chain, and its own id.
            **(
                {"root": principal.root or "", "tokenId": principal.token_id or ""}
                if principal.credential == "delegated"
                else {}
            ),
        },
    }


def deny(
    method_arn: str,
    principal_id: str,
    code: str,
    www_authenticate: str | None = None,
    retry_after: int | None = None,
) -> Answer:
    context: dict[str, str | int] = {"code": code}
    if www_authenticate is not None:
        context["wwwAuthenticate"] = www_authenticate
    if retry_after is not None:
        # A daily quota: the gateway response sends it as Retry-After (infra/resources.json).
        context["retryAfter"] = retry_after
    return {
        "principalId": principal_id,
        "policyDocument": policy("Deny", method_arn),
        "context": context,
    }
