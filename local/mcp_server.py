"""A development MCP server for local runs only, protected by our tokens as the memory
service's MCP endpoint is: never deployed.

`make run` starts it on loopback next to the service; its URL (`http://127.0.0.1:<port>/mcp`)
is the local stack's only entry of MCP_RESOURCES. It stands in for the memory service's API
Gateway, so an MCP client sees locally exactly what it sees in production:

- every request to `/mcp` goes through the data-plane authorizer's own decision
  (`chalicelib.decisions.authorizer.authorize`, on the path as the client sent it, still
  percent-encoded as a REST API hands it over; the same Resolver: MCP tokens only for this
  resource, bound to their workspace, membership read each time; API keys too), and its
  answers are rendered as the gateway responses would render them: 401 with
  `WWW-Authenticate: Bearer scope="<the five data-plane scopes>", resource_metadata="…"` (and
  `error="invalid_token"` first when a credential was sent; a refused DPoP request, or a
  bound credential sent without its proof, answers `WWW-Authenticate: DPoP error=…, algs=…`
  and its code (the deployed gateway's 401 is static: it names both schemes and the DPoP
  algorithms, not the error), 403 problem+json with the Deny's
  `wwwAuthenticate` (`error="insufficient_scope"` and the scope when one is missing);
- `/.well-known/oauth-protected-resource/mcp` is answered by the service's own route,
  proxied, as the memory service routes it to us;
- `/v1/<segment>/…` stands in for the rest of the data plane (same authorizer, no MCP
  audience there), answering the principal as JSON, so tests can show an MCP token is
  refused outside its resource.

Tools (harmless): `echo` (returns its text) and `whoami` (the principal the gate resolved).
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import urllib.error
import urllib.request
from typing import Any

from mcp.server import MCPServer
from mcp.server.mcpserver import Context

PRINCIPAL = "memory_principal"  # where the gate leaves the Allow context for the tools
Scope = dict[str, Any]


def sent_path(scope: Scope) -> str:
    """The path as the client sent it, still percent-encoded, as a REST API hands it to its
    authorizer (ASGI's `path` is decoded: `%2F` there is already a `/`)."""
    raw = scope.get("raw_path")
    return raw.decode("latin-1") if isinstance(raw, bytes) else str(scope["path"])


def _event(scope: Scope) -> dict[str, Any]:
    """The REQUEST-authorizer event API Gateway would send for this request."""
    headers: dict[str, str] = {}
    multi: dict[str, list[str]] = {}
    for raw_name, raw_value in scope.get("headers", []):
        name, value = raw_name.decode("latin-1"), raw_value.decode("latin-1")
        multi.setdefault(name, []).append(value)
        headers[name] = value
    method, path = scope["method"], sent_path(scope)
    # The host the client addressed, as API Gateway names its own (`domainName`): a DPoP
    # proof's `htu` is checked against it and the path.
    host, port = scope.get("server") or ("127.0.0.1", 80)
    return {
        "type": "REQUEST",
        "methodArn": f"arn:aws:execute-api:us-east-1:000000000000:local/dev/{method}{path}",
        "resource": path,
        "path": path,
        "httpMethod": method,
        "headers": headers,
        "multiValueHeaders": multi,
        "requestContext": {
            "path": path,
            "httpMethod": method,
            "stage": "dev",
            "domainName": f"{host}:{port}",
        },
    }


def decide(scope: Scope) -> tuple[int, dict[str, str], dict[str, Any]]:
    """(status, headers, body or Allow context) as the memory service's gateway answers."""
    from chalicelib.access.principal import dpop_challenge
    from chalicelib.config import resource_for_path
    from chalicelib.decisions.authorizer import Unauthorized, authorize, unauthorized_challenge
    from chalicelib.errors import DependencyUnavailable, problem_body
    from chalicelib.runtime import services

    svc = services()
    resource = resource_for_path(sent_path(scope), svc.settings.mcp_resources)
    try:
        answer = authorize(_event(scope), svc.resolver, svc.settings.mcp_resources, "http")
    except Unauthorized as refused:
        challenge = 'Bearer realm="svc"'
        refusal = refused.refusal
        if refusal is not None and refusal.dpop_error is not None:
            # A bound credential or the DPoP scheme: the challenge says DPoP (RFC 9449 §7.1).
            body = problem_body(401, refusal.code, refusal.detail or refusal.problem.detail)
            return 401, {"WWW-Authenticate": dpop_challenge(refusal.dpop_error)}, body
        if resource is not None:
            presented = any(
                name.lower() == b"authorization" for name, _ in scope.get("headers", [])
            )
            challenge = unauthorized_challenge(resource, presented)
        body = problem_body(401, "invalid_credentials", "A valid credential is required.")
        return 401, {"WWW-Authenticate": challenge}, body
    except DependencyUnavailable:
        return 500, {}, problem_body(500, "internal_error", "An internal error occurred.")
    (statement,) = answer["policyDocument"]["Statement"]
    context = answer["context"]
    if statement["Effect"] != "Allow":
        headers = {}
        if "wwwAuthenticate" in context:
            headers["WWW-Authenticate"] = context["wwwAuthenticate"]
        body = problem_body(403, context["code"], "The credential may not make this request.")
        return 403, headers, body
    return 200, {}, context


async def _send_json(send: Any, status: int, body: Any, headers: dict[str, str]) -> None:
    data = json.dumps(body).encode()
    content_type = "application/problem+json" if status >= 400 else "application/json"
    await send({
        "type": "http.response.start",
        "status": status,
        "headers": [
            (b"content-type", content_type.encode()),
            (b"content-length", str(len(data)).encode()),
            *((name.lower().encode(), value.encode()) for name, value in headers.items()),
        ],
    })
    await send({"type": "http.response.body", "body": data})


def build_server() -> Any:
    # WARNING: the SDK sets the root logger's level to this, and at INFO every library's
    # chatter (boto's "Found credentials", its own session notices) reached the banner.
    server: Any = MCPServer(
        name="memory-dev",
        instructions="Development MCP server of memory-auth.",
        log_level="WARNING",
    )

    @server.tool()
    def echo(text: str) -> str:
        """Returns the text it was given."""
        return text

    @server.tool()
    def whoami(ctx: Context) -> dict[str, str]:
        """Who the gate says is calling: user, workspace, client, scopes."""
        request = ctx.request_context.request
        principal = dict(getattr(request, "scope", {}).get("state", {}).get(PRINCIPAL, {}))
        return {
            name: principal.get(name, "")
            for name in ("userId", "workspaceId", "clientId", "credential", "scopes")
        }

    return server


class DevMcpServer:
    """The gate and the MCP app on loopback, served by uvicorn from a daemon thread."""

    def __init__(self, host: str, port: int, service_endpoint: str):
        self._socket = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._socket.bind((host, port))
        self.port = int(self._socket.getsockname()[1])
        self.endpoint = f"http://{host}:{self.port}"
        self.resource = f"{self.endpoint}/mcp"
        self._service = service_endpoint
        self._inner = build_server().streamable_http_app(
            streamable_http_path="/mcp", stateless_http=True, json_response=True, host=host
        )
        self._uvicorn: Any = None
        self._thread: threading.Thread | None = None

    def _metadata(self, path: str) -> tuple[int, Any]:
        """The service's answer for this well-known path (how the memory service routes it)."""
        try:
            with urllib.request.urlopen(self._service + path, timeout=5) as answer:  # noqa: S310
                return answer.status, json.loads(answer.read())
        except urllib.error.HTTPError as error:
            return error.code, json.loads(error.read() or b"null")

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        import anyio.to_thread

        path = scope.get("path", "")
        if scope["type"] != "http":
            await self._inner(scope, receive, send)
        elif path.startswith("/.well-known/oauth-protected-resource/"):
            status, body = await anyio.to_thread.run_sync(self._metadata, path)
            await _send_json(send, status, body, {})
        elif path == "/mcp" or path.startswith(("/mcp/", "/v1/")):
            status, headers, body = await anyio.to_thread.run_sync(decide, scope)
            if status != 200:
                await _send_json(send, status, body, headers)
            elif path.startswith("/v1/"):
                await _send_json(send, 200, body, {})
            else:
                scope.setdefault("state", {})[PRINCIPAL] = body
                await self._inner(scope, receive, send)
        else:
            from chalicelib.errors import problem_body

            await _send_json(send, 404, problem_body(404, "not_found", "No such route."), {})

    def start(self) -> DevMcpServer:
        import uvicorn

        config = uvicorn.Config(self, log_level="warning", lifespan="on")
        self._uvicorn = uvicorn.Server(config)
        self._thread = threading.Thread(
            target=self._uvicorn.run, kwargs={"sockets": [self._socket]}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._uvicorn is not None:
            self._uvicorn.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=5)
        with contextlib.suppress(OSError):
            self._socket.close()
