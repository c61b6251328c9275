"""The local stack behind `make run` and the end-to-end tests.

Starts moto (single-threaded, in its own process) as DynamoDB and KMS on loopback, creates
the table and keys from `infra/resources.json`, starts the development OpenID issuer
(`local/idp.py`) on 127.0.0.1:8001 and trusts it (also as the dashboard's login provider and
the LOGIN_PROVIDER of MCP authorizations), starts the development MCP server
(`local/mcp_server.py`) on 127.0.0.1:8002 as the only MCP_RESOURCES entry, starts the
development stand-in for GitHub's secret scanning (`local/secret_scanning.py`) on
127.0.0.1:8003 and points SECRET_SCANNING_KEYS_URL at it, serves the Chalice app with chalice
local's server on 127.0.0.1:8000 (`PORT` overrides), mints a token for a development user
and prints the dashboard's URL, the MCP server's and how to make a first call. Ctrl-C stops
everything it started.

    python -m local.stack [--port 8000] [--idp-port 8001] [--mcp-port 8002] [--scan-port 8003]
                          [--ready-file stack.json] [--quiet] [--faults plan.json]

`--port 0` picks free ports for the service and (unless `--idp-port`, `--mcp-port` or
`--scan-port` say otherwise) the issuer, the MCP server and the signer. TRUSTED_ISSUERS in the
calling environment adds issuers to the development one.

With `--ready-file`, it writes a JSON object (endpoint, token, ports, moto's pid) once it
is serving, whole or not at all (`local/running.py`, which is also how every test suite
starts it). `--faults` is for the end-to-end tests only: the service's AWS calls fail where
the plan file says (`local/faults.py`).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from infra.template import PROJECT_DIR, stage_environment
from local.running import write_ready_file

DEV_SUBJECT = "developer"  # the development user's `sub` at the development issuer
LOCAL_CREDENTIALS = {
    # moto accepts any credentials; these are placeholders, not secrets.
    "AWS_ACCESS_KEY_ID": "local",
    "AWS_SECRET_ACCESS_KEY": "local",
    "AWS_DEFAULT_REGION": "us-east-1",
    "AWS_REGION": "us-east-1",
}


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def wait_for_port(host: str, port: int, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError), socket.create_connection((host, port), timeout=0.5):
            return
        time.sleep(0.05)
    raise RuntimeError(f"nothing listens on {host}:{port} after {timeout:.0f} s")


def port_in_use(host: str, port: int) -> bool:
    with socket.socket() as sock:
        # As the servers themselves bind: a port left in TIME_WAIT by a previous run is free.
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError:
            return True
    return False


def busy_port(host: str, wanted: list[tuple[int, str, str]]) -> str | None:
    """One line naming the first busy (port, what, variable), or None when all are free."""
    for port, what, variable in wanted:
        if port and port_in_use(host, port):
            return (
                f"port {port} ({what}) is already in use on {host}: stop what listens there, "
                f"or pick another port with {variable}=<port> (e.g. make run {variable}="
                f"{port + 10})"
            )
    return None


def start_moto(host: str, port: int) -> subprocess.Popen[bytes]:
    process = subprocess.Popen(
        [sys.executable, "-m", "local.moto_server", "--host", host, "--port", str(port)],
        cwd=PROJECT_DIR,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_for_port(host, port)
    except RuntimeError:
        process.kill()
        raise
    return process


LOCAL_USAGE_FLUSH_SECONDS = "2"


def local_environment(
    stage: str,
    endpoint: str,
    moto_endpoint: str,
    trusted_issuers: str | None = None,
    dashboard_login: str | None = None,
    mcp: dict[str, str] | None = None,
) -> dict[str, str]:
    env = stage_environment(stage)
    env.update(LOCAL_CREDENTIALS)
    env["AWS_ENDPOINT_URL"] = moto_endpoint
    env["TOKEN_ISSUER"] = endpoint  # locally, the service's base URL is the loopback one
    env["LOCAL_MODE"] = "1"
    # Usage counts show within seconds locally (a deployed stage writes them every 5 minutes).
    env["USAGE_FLUSH_SECONDS"] = os.environ.get("USAGE_FLUSH_SECONDS", LOCAL_USAGE_FLUSH_SECONDS)
    if trusted_issuers is not None:
        env["TRUSTED_ISSUERS"] = trusted_issuers
    if dashboard_login is not None:
        env["DASHBOARD_LOGIN"] = dashboard_login
    env.update(mcp or {})
    return env


def local_dashboard_login(idp: Any) -> str:
    """DASHBOARD_LOGIN for the local service: the development issuer and its client id."""
    return json.dumps({"issuer": idp.endpoint, "clientId": idp.provider.audience})


def mcp_environment(idp: Any, mcp_resource: str) -> dict[str, str]:
    """MCP_RESOURCES and LOGIN_PROVIDER of the local stack: the development MCP server, and
    the development issuer as the login provider (its audience is the client id)."""
    trusted = idp.provider.trusted_issuer()
    return {
        "MCP_RESOURCES": json.dumps([mcp_resource]),
        "LOGIN_PROVIDER": json.dumps(
            {"issuer": trusted["issuer"], "clientId": trusted["audience"]}
        ),
    }


def start_mcp_server(host: str, port: int, service_endpoint: str) -> Any:
    from local.mcp_server import DevMcpServer

    return DevMcpServer(host, port, service_endpoint).start()


def start_idp(host: str, port: int, service_endpoint: str) -> Any:
    """The development OpenID issuer, in a thread of this process (needs LOCAL_MODE=1).

    It answers the dashboard's token requests with CORS for the service's origin.
    """
    from local.idp import DevIdpServer

    return DevIdpServer(host, port, cors_origins=(service_endpoint,)).start()


def start_secret_scanning(host: str, port: int) -> Any:
    """The development stand-in for GitHub's secret scanning (needs LOCAL_MODE=1)."""
    from local.secret_scanning import DevSecretScanningServer

    return DevSecretScanningServer(host, port).start()


def local_trusted_issuers(idp: Any, stage: str, callers: str | None) -> str:
    """TRUSTED_ISSUERS for the local service: the caller's (or the stage's), plus the dev IdP."""
    configured = callers or stage_environment(stage).get("TRUSTED_ISSUERS", "")
    issuers = [i for i in json.loads(configured or "[]") if i.get("issuer") != idp.endpoint]
    return json.dumps([*issuers, idp.provider.trusted_issuer()])


def unknown_route_body() -> dict[str, Any]:
    """The problem+json 404 for a route the API does not have, as its gateway answers it."""
    from chalicelib.errors import problem_body

    return problem_body(404, "not_found", "No such route.")


def make_server(host: str, port: int, stage: str, quiet: bool) -> Any:
    """chalice local's server, with unknown routes answered as the API's gateway would."""
    from chalice.cli.factory import CLIFactory
    from chalice.local import (
        CustomLocalChalice,
        LocalChalice,
        LocalDevServer,
        LocalGatewayException,
    )

    from chalicelib.api.cors import cors_headers
    from local.gateway import LocalApiGatewayHandler

    class RequestHandler(LocalApiGatewayHandler):
        def _send_error_response(self, error: LocalGatewayException) -> None:
            self.unknown_route()

        def unknown_route(self) -> None:
            # chalice local imitates API Gateway's "Missing Authentication Token" 403 (and
            # echoes the Authorization header in it). Our deployed API answers unknown
            # routes with a problem+json 404 (a gateway response in infra/); so do we here.
            body = json.dumps(unknown_route_body(), separators=(",", ":"))
            headers = {"Content-Type": "application/problem+json"}
            headers.update(cors_headers(self.headers.get("Origin")))
            self._send_http_response(404, headers, body)

        def log_message(self, format: str, *args: Any) -> None:
            if not quiet:
                super().log_message(format, *args)

    factory = CLIFactory(project_dir=str(PROJECT_DIR))
    config = factory.create_config_obj(chalice_stage_name=stage)
    app_obj = config.chalice_app
    CustomLocalChalice.__bases__ = (LocalChalice, app_obj.__class__)
    app_obj.__class__ = CustomLocalChalice
    return LocalDevServer(app_obj, config, host, port, handler_cls=RequestHandler)


def bootstrap(stage: str) -> dict[str, Any]:
    from chalicelib.runtime import services
    from local.resources import create_all

    return create_all(services().dynamodb, services().kms, stage, services().events_client)


def follow_faults(plan: Path) -> None:
    """The end-to-end tests' hook: the service's AWS clients fail where `plan` says.

    Only the local stack can do this (`local/` is never deployed), and only when asked."""
    from chalicelib.runtime import services
    from local.faults import FaultInjector

    injector = FaultInjector()
    injector.follow(plan)
    svc = services()
    for client in (svc.dynamodb, svc.last_use_dynamodb, svc.kms):
        injector.attach(client)


def banner(info: dict[str, Any]) -> str:
    endpoint = info["endpoint"]
    idp = info["idpEndpoint"]
    read = "python3 -c \"import json,sys; print(json.load(sys.stdin)['{}'])\""
    return f"""
memory-auth is running on {endpoint}  (DynamoDB and KMS: moto on {info["motoEndpoint"]})
Development OpenID issuer (trusted here, local mode only): {idp}

Dashboard: {endpoint}/dashboard/  (sign in with any name at the development issuer's form)

Sign in as anyone in three steps (ID token -> exchange -> call):

  ID_TOKEN=$(curl -s -X POST {idp}/token -H 'Content-Type: application/json' \\
       -d '{{"sub": "alice", "email": "alice@example.com"}}' | {read.format("id_token")})
  TOKEN=$(curl -s -X POST {endpoint}/v1/auth/exchange -H 'Content-Type: application/json' \\
       -d "{{\\"id_token\\": \\"$ID_TOKEN\\"}}" | {read.format("access_token")})
  curl -s {endpoint}/v1/auth/whoami -H "Authorization: Bearer $TOKEN"

Development MCP server, protected by this service's OAuth (its authorization server):
  {info["mcpResource"]}
Point an MCP client at it (e.g. `npx @modelcontextprotocol/inspector`, Streamable HTTP);
it discovers us from the 401, and the development issuer signs you in.

A development user ({info["userId"]}) with a workspace ({info["workspaceId"]}) is ready.
Its user token, valid for one hour:

  export TOKEN='{info["token"]}'

Create a first admin key, then call whoami with it:

  curl -s -X POST {endpoint}/v1/auth/api-keys \\
       -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' \\
       -d '{{"label": "my first key"}}'
  curl -s {endpoint}/v1/auth/whoami -H "Authorization: Bearer <the key from above>"

Report that key as leaked, signed like GitHub (development signer on {info["scanSignerEndpoint"]}):

  python -m local.scan_report --service {endpoint} --signer {info["scanSignerEndpoint"]} \\
       --token <the key from above>

Press Ctrl-C to stop everything.
"""


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Run the service locally on moto.")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=int(os.environ.get("PORT", "8000")))
    parser.add_argument("--moto-port", type=int, default=int(os.environ.get("MOTO_PORT", "0")))
    parser.add_argument(
        "--idp-port", type=int, default=None, help="development OpenID issuer (0: a free port)"
    )
    parser.add_argument(
        "--mcp-port", type=int, default=None, help="development MCP server (0: a free port)"
    )
    parser.add_argument(
        "--scan-port", type=int, default=None,
        help="development secret-scanning signer and key list (0: a free port)",
    )
    parser.add_argument("--stage", default="dev")
    parser.add_argument("--ready-file", type=Path)
    parser.add_argument("--quiet", action="store_true", help="no request log lines")
    parser.add_argument(
        "--faults",
        type=Path,
        help="tests only: fail the AWS calls a plan file names (local/faults.py)",
    )
    args = parser.parse_args(argv)

    callers_issuers = os.environ.get("TRUSTED_ISSUERS")
    port = args.port or free_port(args.host)
    moto_port = args.moto_port or free_port(args.host)
    if args.idp_port is None:  # 8001 for `make run`; a free port when --port 0 asks for them
        args.idp_port = int(os.environ.get("IDP_PORT", "8001")) if args.port else 0
    if args.mcp_port is None:
        args.mcp_port = int(os.environ.get("MCP_PORT", "8002")) if args.port else 0
    if args.scan_port is None:  # 8003 for `make run`
        args.scan_port = int(os.environ.get("SCAN_SIGNER_PORT", "8003")) if args.port else 0
    busy = busy_port(
        args.host,
        [
            (args.port, "the service", "PORT"),
            (args.idp_port, "the development OpenID issuer", "IDP_PORT"),
            (args.mcp_port, "the development MCP server", "MCP_PORT"),
            (args.scan_port, "the secret-scanning signer", "SCAN_SIGNER_PORT"),
            (args.moto_port, "moto, DynamoDB and KMS", "MOTO_PORT"),
        ],
    )
    if busy is not None:  # before anything starts: nothing to stop, one line to read
        print(busy, file=sys.stderr, flush=True)
        return 1
    endpoint = f"http://{args.host}:{port}"
    moto_endpoint = f"http://{args.host}:{moto_port}"

    print(f"[1/4] starting moto (DynamoDB, KMS) on {moto_endpoint}", flush=True)
    moto = start_moto(args.host, moto_port)
    idp = None
    mcp_server = None
    scanning = None
    # SIGTERM (from tests, or a supervisor) stops us the same way Ctrl-C does.
    signal.signal(signal.SIGTERM, _interrupt)
    try:
        os.environ.update(local_environment(args.stage, endpoint, moto_endpoint))
        sys.path.insert(0, str(PROJECT_DIR))
        idp = start_idp(args.host, args.idp_port, endpoint)
        trusted_issuers = local_trusted_issuers(idp, args.stage, callers_issuers)
        os.environ["TRUSTED_ISSUERS"] = trusted_issuers  # before the services read settings
        dashboard_login = local_dashboard_login(idp)
        os.environ["DASHBOARD_LOGIN"] = dashboard_login
        print(f"      development OpenID issuer on {idp.endpoint}", flush=True)
        mcp_server = start_mcp_server(args.host, args.mcp_port, endpoint)
        mcp = mcp_environment(idp, mcp_server.resource)
        os.environ.update(mcp)
        print(f"      development MCP server on {mcp_server.resource}", flush=True)
        scanning = start_secret_scanning(args.host, args.scan_port)
        os.environ["SECRET_SCANNING_KEYS_URL"] = scanning.keys_url  # before settings are read
        print(f"      development secret-scanning signer on {scanning.endpoint}", flush=True)
        print("[2/4] creating the table and keys from infra/resources.json", flush=True)
        bootstrap(args.stage)
        if args.faults:
            follow_faults(args.faults)
        print(f"[3/4] starting the service on {endpoint}", flush=True)
        server = make_server(args.host, port, args.stage, args.quiet)
        # The stage's config has just been applied to os.environ; local values win again.
        os.environ.update(
            local_environment(
                args.stage, endpoint, moto_endpoint, trusted_issuers, dashboard_login, mcp
            )
        )
        print("[4/4] preparing a development user", flush=True)
        info = prepare_developer(endpoint, moto_endpoint, port, moto_port, idp.provider.issuer)
        info["idpEndpoint"] = idp.endpoint
        info["scanSignerEndpoint"] = scanning.endpoint
        info["dashboard"] = f"{endpoint}/dashboard/"
        info["mcpResource"] = mcp_server.resource
        info["motoPid"] = moto.pid  # the fault test freezes it (SIGSTOP) and resumes it
        if args.ready_file:
            write_ready_file(args.ready_file, info)
        print(banner(info), flush=True)
        server.server.serve_forever()
    except KeyboardInterrupt:
        print("\nstopping", flush=True)
    finally:
        if mcp_server is not None:
            mcp_server.stop()
        if idp is not None:
            idp.stop()
        if scanning is not None:
            scanning.stop()
        moto.terminate()
        with contextlib.suppress(subprocess.TimeoutExpired):
            moto.wait(timeout=5)
    return 0


def prepare_developer(
    endpoint: str, moto_endpoint: str, port: int, moto_port: int, idp_issuer: str
) -> dict[str, Any]:
    """The development user: signed in once at the development issuer (as `developer`), so
    it is a user like any other (it can be added to workspaces), with a workspace."""
    from chalicelib import ids
    from chalicelib.runtime import services
    from chalicelib.sessions.openid import Identity
    from chalicelib.workspaces.model import Workspace

    svc = services()
    now = svc.clock.now()
    user_id = svc.users.sign_in(Identity(idp_issuer, DEV_SUBJECT, name="Developer"), now)
    workspace = Workspace(ids.new_workspace_id(now), "Development", user_id, now)
    svc.workspace_store.create(workspace)
    minted = svc.signer.mint(user_id)
    return {
        "endpoint": endpoint,
        "port": port,
        "motoEndpoint": moto_endpoint,
        "motoPort": moto_port,
        "userId": user_id,
        "workspaceId": workspace.id,
        "token": minted.token,
        "pid": os.getpid(),
    }


if __name__ == "__main__":
    sys.exit(main())
