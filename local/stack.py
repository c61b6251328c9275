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
                          [--ready-file stack.json] [--connection-file .local/connection.env]
                          [--quiet] [--faults plan.json] [--regions 3]

Before anything starts it checks the ports and the configuration the service would get
(the stage's, and the caller's ALLOWED_ORIGINS, TRUSTED_ISSUERS, ...) and lists every
problem in one message. `--connection-file` (what `make run` passes) writes the connection
settings every local tool reads (`infra/connection.py`), and removes them on the way out.

`--port 0` picks free ports for the service and (unless `--idp-port`, `--mcp-port` or
`--scan-port` say otherwise) the issuer, the MCP server and the signer. TRUSTED_ISSUERS in the
calling environment adds issuers to the development one.

With `--ready-file`, it writes a JSON object (endpoint, token, ports, moto's pid) once it
is serving, whole or not at all (`local/running.py`, which is also how every test suite
starts it). `--faults` is for the end-to-end tests only: the service's AWS calls fail where
the plan file says (`local/faults.py`).

`--regions 3` (REGIONS=3, `make run REGIONS=3`) serves the global stage's three Regions over
the one store, each in a process of its own told its Region (`local/regions.py`): their
APIs on consecutive ports from the service's, their data-plane gates (the development MCP
server) on consecutive ports from the MCP server's, the issuer and the signer after them.
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
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from infra.connection import (
    LOCAL_CREDENTIALS,
    export_block,
    remove_connection,
    write_connection,
)
from infra.template import PROJECT_DIR, stage_environment
from local import regions as global_stage
from local.running import write_ready_file

DEV_SUBJECT = "developer"  # the development user's `sub` at the development issuer


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


def busy_ports(host: str, wanted: list[tuple[int, str, str]]) -> list[str]:
    """One line for each busy (port, what, variable); empty when all are free."""
    return [
        f"port {port} ({what}) is already in use on {host}: stop what listens there, "
        f"or pick another port with {variable}=<port> (e.g. make run {variable}={port + 10})"
        for port, what, variable in wanted
        if port and port_in_use(host, port)
    ]


def port_setting(
    environ: Mapping[str, str], variable: str, default: int, problems: list[str]
) -> int:
    """The port `variable` names (0: a free one), or `default`; a bad value is a problem."""
    text = environ.get(variable, "").strip()
    if not text:
        return default
    if not text.isascii() or not text.isdigit() or int(text) > 65535:
        problems.append(f"{variable}={text[:20]!r} is not a port: a whole number, 0 to 65535")
        return default
    return int(text)


# Set by the stack itself from what it starts: never the caller's.
_STACK_OWNED = ("LOGIN_PROVIDER", "MCP_RESOURCES", "DASHBOARD_LOGIN", "SECRET_SCANNING_KEYS_URL")
# What the stack makes from the stage's names (its table, keys, issuer and bus): these keep
# the stage's values. Every other setting the caller exported (MCP_REGISTRATION_LIMIT,
# KEY_LIMIT, MEMBER_LIMIT, POWERTOOLS_LOG_LEVEL, ...) wins over the stage's.
_STAGE_RESOURCES = (
    "STAGE", "AUTH_TABLE", "KEY_ENCRYPTION_KEY_ID", "REFRESH_TOKEN_KEY_ID",
    "TOKEN_SIGNING_KEY_ID", "TOKEN_ISSUER", "EVENT_BUS_NAME",
)
# The environment the stack was started in, before the stage's configuration is applied to it.
_CALLERS_ENVIRONMENT = dict(os.environ)


def callers_settings(stage_env: Mapping[str, str], caller: Mapping[str, str]) -> dict[str, str]:
    """The caller's values of the stage's settings that the stack does not own."""
    owned = (*_STAGE_RESOURCES, *_STACK_OWNED)
    return {k: caller[k] for k in stage_env if k in caller and k not in owned}


def configuration_problems(
    stage: str, endpoint: str, moto_endpoint: str, environ: Mapping[str, str]
) -> list[str]:
    """What the service would refuse in the configuration it is about to get (the stage's,
    the local values, the caller's ALLOWED_ORIGINS, TRUSTED_ISSUERS, ...), one line each,
    before anything starts: a mistake is one message, not a traceback after moto started."""
    from chalicelib.config import ConfigurationError, Settings

    env = {k: v for k, v in environ.items() if k not in _STACK_OWNED}
    env.update(local_environment(stage, endpoint, moto_endpoint))
    if environ.get("TRUSTED_ISSUERS") is not None:
        env["TRUSTED_ISSUERS"] = environ["TRUSTED_ISSUERS"]
    try:
        Settings.from_env(env)
    except ConfigurationError as error:
        return str(error).splitlines()
    return []


def start_moto(host: str, port: int, regions: tuple[str, ...] = ()) -> subprocess.Popen[bytes]:
    """moto on `port`; with `regions`, DynamoDB is one store in all of them (REGIONS=3)."""
    command = [sys.executable, "-m", "local.moto_server", "--host", host, "--port", str(port)]
    if regions:
        command += ["--regions", ",".join(regions)]
    process = subprocess.Popen(
        command,
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
    env.update(callers_settings(env, _CALLERS_ENVIRONMENT))
    env.update(LOCAL_CREDENTIALS)
    env["AWS_ENDPOINT_URL"] = moto_endpoint
    env["TOKEN_ISSUER"] = endpoint  # locally, the service's base URL is the loopback one
    env["LOCAL_MODE"] = "1"
    # Usage counts show within seconds locally (a deployed stage writes them every 5 minutes).
    env["USAGE_FLUSH_SECONDS"] = os.environ.get("USAGE_FLUSH_SECONDS", LOCAL_USAGE_FLUSH_SECONDS)
    if os.environ.get("WEBHOOK_FIRST_RETRY_SECONDS"):  # tests: a failed delivery's first retry
        env["WEBHOOK_FIRST_RETRY_SECONDS"] = os.environ["WEBHOOK_FIRST_RETRY_SECONDS"]
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
    """MCP_RESOURCES, LOGIN_PROVIDER and ENTERPRISE_IDPS of the local stack: the development
    MCP server, the development issuer as the login provider (its audience is the client id)
    and as the enterprise IdP whose ID-JAGs are trusted (unless the caller's ENTERPRISE_IDPS
    says otherwise)."""
    trusted = idp.provider.trusted_issuer()
    return {
        "MCP_RESOURCES": json.dumps([mcp_resource]),
        "LOGIN_PROVIDER": json.dumps(
            {"issuer": trusted["issuer"], "clientId": trusted["audience"]}
        ),
        "ENTERPRISE_IDPS": os.environ.get("ENTERPRISE_IDPS")
        or json.dumps([idp.provider.enterprise_idp()]),
    }


def start_mcp_server(host: str, port: int, service_endpoint: str) -> Any:
    from local.mcp_server import DevMcpServer

    return DevMcpServer(host, port, service_endpoint).start()


def start_idp(host: str, port: int, service_endpoint: str, *more_endpoints: str) -> Any:
    """The development OpenID issuer, in a thread of this process (needs LOCAL_MODE=1).

    It answers the dashboard's token requests with CORS for the service's origin (each
    Region's, with REGIONS).
    """
    from local.idp import DevIdpServer

    return DevIdpServer(host, port, cors_origins=(service_endpoint, *more_endpoints)).start()


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
            self.unrouted = True
            try:
                self._send_http_response(404, headers, body)
            finally:
                self.unrouted = False

        unrouted = False

        def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
            # The app logs every request it serves as one JSON line (method, route, status):
            # an access-log line too would say it twice. Only what it never saw is told here.
            if self.unrouted:
                super().log_request(code, size)

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

    svc = services()
    return create_all(svc.dynamodb, svc.kms, stage, svc.events_client, sqs=svc.sqs)


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


def banner(info: dict[str, Any], connection_file: Path | None = None) -> str:
    endpoint = info["endpoint"]
    idp = info["idpEndpoint"]
    read = "python3 -c \"import json,sys; print(json.load(sys.stdin)['{}'])\""
    if connection_file is not None:
        where = str(connection_file)
        if connection_file.resolve().is_relative_to(PROJECT_DIR):
            where = str(connection_file.resolve().relative_to(PROJECT_DIR))
        settings = (
            f"written to {where}: every local tool reads it (make import-legacy, the examples,\n"
            f"python -m local.scan_report); load it into another shell with `. {where}`"
        )
    else:
        settings = "paste them into another shell"
    return f"""
memory-auth is running on {endpoint}  (DynamoDB and KMS: moto on {info["motoEndpoint"]})
{global_stage.banner(info)}Development OpenID issuer (trusted here, local mode only): {idp}

Dashboard: {endpoint}/dashboard/  (sign in with any name at the development issuer's form)

Connection settings ({settings}):

{export_block(info)}

A development user ({info["userId"]}) with a workspace ({info["workspaceId"]}) is ready;
MEMORY_LOCAL_TOKEN is its user token, valid for one hour. Create a first admin key, then
call whoami with it:

  curl -s -w '\\n' -X POST $MEMORY_ENDPOINT/v1/auth/api-keys \\
       -H "Authorization: Bearer $MEMORY_LOCAL_TOKEN" -H 'Content-Type: application/json' \\
       -d '{{"label": "my first key"}}'
  curl -s -w '\\n' $MEMORY_ENDPOINT/v1/auth/whoami \\
       -H "Authorization: Bearer <the key from above>"

Sign in as anyone in three steps (ID token -> exchange -> call):

  ID_TOKEN=$(curl -s -X POST {idp}/token -H 'Content-Type: application/json' \\
       -d '{{"sub": "alice", "email": "alice@example.com"}}' | {read.format("id_token")})
  TOKEN=$(curl -s -X POST {endpoint}/v1/auth/exchange -H 'Content-Type: application/json' \\
       -d "{{\\"id_token\\": \\"$ID_TOKEN\\"}}" | {read.format("access_token")})
  curl -s -w '\\n' {endpoint}/v1/auth/whoami -H "Authorization: Bearer $TOKEN"

Development MCP server, protected by this service's OAuth (its authorization server):
  {info["mcpResource"]}
A headless client in 30 lines (it signs in as `developer`):

  .venv/bin/python examples/mcp_client.py

Report a key as leaked, signed like GitHub (development signer on {info["scanSignerEndpoint"]}):

  .venv/bin/python -m local.scan_report --token <the key from above>

Workload identity (a CI job, no secret): trust the development issuer, mint a workload
token there, exchange it (docs/guides/workload-identity.md):

  WS={info["workspaceId"]}
  curl -s -w '\\n' -X POST {endpoint}/v1/workspaces/$WS/trust-policies \\
       -H "Authorization: Bearer $MEMORY_LOCAL_TOKEN" \\
       -H 'Content-Type: application/json' \\
       -d '{{"name": "ci", "issuer": "{idp}", "audience": "memory-service",
            "subject": "repo:acme/agents:*", "scopes": ["memory"]}}'
  WL=$(curl -s -X POST {idp}/workload-token -H 'Content-Type: application/json' \\
       -d '{{"sub": "repo:acme/agents:ref:refs/heads/main", "aud": "memory-service"}}' \\
       | {read.format("token")})
  curl -s -w '\\n' {endpoint}/v1/auth/exchange \\
       -d subject_token="$WL" -d workspace_id=$WS \\
       -d grant_type=urn:ietf:params:oauth:grant-type:token-exchange \\
       -d subject_token_type=urn:ietf:params:oauth:token-type:jwt

Press Ctrl-C to stop everything.
"""


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Run the service locally on moto.")
    problems: list[str] = []  # every one of them, in one message, before anything starts
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument(
        "--port", type=int, default=port_setting(os.environ, "PORT", 8000, problems)
    )
    parser.add_argument(
        "--moto-port", type=int, default=port_setting(os.environ, "MOTO_PORT", 0, problems)
    )
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
    parser.add_argument(
        "--regions", type=int, choices=range(1, len(global_stage.REGION_NAMES) + 1),
        default=global_stage.regions_setting(os.environ, problems),
        help="serve this many Regions over the one store (local/regions.py)",
    )
    parser.add_argument("--ready-file", type=Path)
    parser.add_argument(
        "--connection-file", type=Path,
        help="write the connection settings there (make run: .local/connection.env)",
    )
    parser.add_argument("--quiet", action="store_true", help="no request log lines")
    parser.add_argument(
        "--faults",
        type=Path,
        help="tests only: fail the AWS calls a plan file names (local/faults.py)",
    )
    args = parser.parse_args(argv)

    callers_issuers = os.environ.get("TRUSTED_ISSUERS")
    # 8001, 8002, 8003 for `make run` (moved up past the Regions' ports with REGIONS); free
    # ports when --port 0 asks for them.
    default = global_stage.default_ports(args.regions)
    if args.idp_port is None:
        args.idp_port = (
            port_setting(os.environ, "IDP_PORT", default["IDP_PORT"], problems) if args.port else 0
        )
    if args.mcp_port is None:
        args.mcp_port = (
            port_setting(os.environ, "MCP_PORT", default["MCP_PORT"], problems) if args.port else 0
        )
    if args.scan_port is None:
        args.scan_port = (
            port_setting(os.environ, "SCAN_SIGNER_PORT", default["SCAN_SIGNER_PORT"], problems)
            if args.port
            else 0
        )
    wanted = [
        (args.port, "the service", "PORT"),
        (args.idp_port, "the development OpenID issuer", "IDP_PORT"),
        (args.mcp_port, "the development MCP server", "MCP_PORT"),
        (args.scan_port, "the secret-scanning signer", "SCAN_SIGNER_PORT"),
        (args.moto_port, "moto, DynamoDB and KMS", "MOTO_PORT"),
    ]
    several = args.regions > 1
    if several:
        wanted += global_stage.region_ports(args.regions, args.port, args.mcp_port)
        problems += global_stage.ports_named_twice(wanted)
        if args.faults:
            problems.append("--faults runs with one Region only")
    problems += busy_ports(args.host, wanted)
    regions = (
        global_stage.plan(args.host, args.regions, args.port, args.mcp_port) if several else []
    )
    port = regions[0].port if regions else args.port or free_port(args.host)
    moto_port = args.moto_port or free_port(args.host)
    endpoint = f"http://{args.host}:{port}"
    moto_endpoint = f"http://{args.host}:{moto_port}"
    problems += configuration_problems(args.stage, endpoint, moto_endpoint, os.environ)
    if problems:  # nothing was started: nothing to stop, one message to read
        print("\n".join(problems), file=sys.stderr, flush=True)
        return 1

    print(f"[1/4] starting moto (DynamoDB, KMS) on {moto_endpoint}", flush=True)
    moto = start_moto(args.host, moto_port, tuple(r.name for r in regions))
    idp = None
    mcp_server = None
    scanning = None
    worker = None
    region_processes: list[subprocess.Popen[bytes]] = []
    # SIGTERM (from tests, or a supervisor) stops us the same way Ctrl-C does.
    signal.signal(signal.SIGTERM, _interrupt)
    try:
        os.environ.update(local_environment(args.stage, endpoint, moto_endpoint))
        sys.path.insert(0, str(PROJECT_DIR))
        idp = start_idp(args.host, args.idp_port, endpoint, *(r.endpoint for r in regions[1:]))
        trusted_issuers = local_trusted_issuers(idp, args.stage, callers_issuers)
        os.environ["TRUSTED_ISSUERS"] = trusted_issuers  # before the services read settings
        dashboard_login = local_dashboard_login(idp)
        os.environ["DASHBOARD_LOGIN"] = dashboard_login
        print(f"      development OpenID issuer on {idp.endpoint}", flush=True)
        if regions:  # each Region's process serves its own, in front of its authorizer
            mcp_resource = regions[0].mcp_resource
        else:
            mcp_server = start_mcp_server(args.host, args.mcp_port, endpoint)
            mcp_resource = mcp_server.resource
        mcp = mcp_environment(idp, mcp_resource)
        os.environ.update(mcp)
        print(f"      development MCP server on {mcp_resource}", flush=True)
        scanning = start_secret_scanning(args.host, args.scan_port)
        os.environ["SECRET_SCANNING_KEYS_URL"] = scanning.keys_url  # before settings are read
        print(f"      development secret-scanning signer on {scanning.endpoint}", flush=True)
        print("[2/4] creating the table and keys from infra/resources.json", flush=True)
        if regions:
            global_stage.bootstrap(args.stage, regions)
        else:
            bootstrap(args.stage)
        if args.faults:
            follow_faults(args.faults)
        from local.worker import QueueWorker

        worker = QueueWorker().start()  # webhook deliveries and revocation reports
        print(f"[3/4] starting the service on {endpoint}", flush=True)
        if regions:
            print(f"      and {', '.join(r.endpoint for r in regions[1:])}", flush=True)
            region_processes = global_stage.start(regions, args.stage, args.quiet, os.environ)
        else:
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
        info["mcpResource"] = mcp_resource
        info["motoPid"] = moto.pid  # the fault test freezes it (SIGSTOP) and resumes it
        info["stage"] = args.stage
        if regions:
            info["regions"] = global_stage.described(regions, region_processes)
        if args.ready_file:
            write_ready_file(args.ready_file, info)
        if args.connection_file:
            write_connection(args.connection_file, info)
        print(banner(info, args.connection_file), flush=True)
        if regions:
            global_stage.serve_until_stopped()
        else:
            server.server.serve_forever()
    except KeyboardInterrupt:
        print("\nstopping", flush=True)
    finally:
        global_stage.stop(region_processes)
        if worker is not None:
            worker.stop()
        if args.connection_file:
            remove_connection(args.connection_file, os.getpid())
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
    minted = svc.session_service.start(user_id).access
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
