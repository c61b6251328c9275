"""`make run REGIONS=3`: the global stage's three Regions on one machine, over one store.

Each Region is a process of its own (`python -m local.regions`), told its Region as Lambda
tells a function, by AWS_REGION: it builds its DynamoDB and KMS clients for that Region and
serves that Region's API (chalice local) on one port and its data-plane gate (the
development MCP server, which runs the data-plane authorizer's decision on every request) on
another. The Regions' APIs take consecutive ports from PORT, their gates consecutive ports
from MCP_PORT.

moto is the one store behind them all, as the global stage's table is: DynamoDB answers
every Region from the same tables (`local/moto_server.py --regions`), as replicas with
multi-Region strong consistency do, so a write in one Region is what the next read in any
other Region sees. KMS stays per Region, as it is in AWS: the stack creates its keys as
multi-Region keys in the first Region and replicates each into the others under the same
alias (`local/resources.py`), so every Region holds the same key material under the same key
id: a token signed in one Region verifies in every one, a key stored in one is revealed in any.

The Regions share one issuer (TOKEN_ISSUER, the first Region's URL), as the deployed Regions
share the host name Route 53 routes to them. The stack's own process (`local/stack.py`)
keeps moto, the development OpenID issuer and the secret-scanning signer; a Region's process
can be stopped (SIGTERM) and the others serve on.

    python -m local.regions --region us-east-2 --port 8001 --gate-port 8005 [--stage dev]
                            [--quiet]

(the stack starts these itself, with the environment the service needs).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from infra.global_stage import MRSC_REGION_SETS
from infra.template import PROJECT_DIR

# One Region set of multi-Region strong consistency; the first is the local credentials'
# Region (infra/connection.py), where the stack's own clients live.
REGION_NAMES = MRSC_REGION_SETS["US"]
STARTUP_SECONDS = 60.0
STOP_SECONDS = 5.0


@dataclass(frozen=True)
class Region:
    name: str
    host: str
    port: int  # its API
    gate_port: int  # its data-plane gate (the development MCP server)

    @property
    def endpoint(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def mcp_resource(self) -> str:
        return f"http://{self.host}:{self.gate_port}/mcp"


def regions_setting(environ: Mapping[str, str], problems: list[str]) -> int:
    """How many Regions REGIONS asks for (1 when unset); a bad value is a problem."""
    text = environ.get("REGIONS", "").strip()
    if not text:
        return 1
    if text not in {str(n) for n in range(1, len(REGION_NAMES) + 1)}:
        problems.append(
            f"REGIONS={text[:20]!r} is not a number of Regions: 1 to {len(REGION_NAMES)}"
        )
        return 1
    return int(text)


def default_ports(count: int) -> dict[str, int]:
    """The development servers' default ports with `count` Regions: each moves up past the
    ports the Regions after the first take (REGIONS=3: the APIs on 8000-8002, the issuer on
    8003, the gates on 8004-8006, the signer on 8007; one Region: 8001, 8002, 8003)."""
    more = count - 1
    return {"IDP_PORT": 8001 + more, "MCP_PORT": 8002 + more, "SCAN_SIGNER_PORT": 8003 + 2 * more}


def region_ports(count: int, port: int, gate_port: int) -> list[tuple[int, str, str]]:
    """(port, what, variable) of the Regions after the first, for the busy-port check (the
    first Region's are the stack's PORT and MCP_PORT); none that will be free ports."""
    wanted = []
    for index, name in enumerate(REGION_NAMES[1:count], start=1):
        if port:
            wanted.append((port + index, f"the {name} Region's API", "PORT"))
        if gate_port:
            wanted.append((gate_port + index, f"the {name} Region's data-plane gate", "MCP_PORT"))
    return wanted


def ports_named_twice(wanted: Sequence[tuple[int, str, str]]) -> list[str]:
    """One line for each port two parts of the stack would both listen on."""
    first: dict[int, str] = {}
    problems = []
    for port, what, variable in wanted:
        if not port:
            continue
        if port in first:
            problems.append(
                f"port {port} would serve both {first[port]} and {what}: "
                f"move one ({variable}=<port>)"
            )
        else:
            first[port] = what
    return problems


def plan(host: str, count: int, port: int, gate_port: int) -> list[Region]:
    """`count` Regions: APIs on consecutive ports from `port`, gates from `gate_port`; a 0
    gives each its own free port."""
    free = free_ports(host, (0 if port else count) + (0 if gate_port else count))
    return [
        Region(
            name,
            host,
            port + index if port else free.pop(),
            gate_port + index if gate_port else free.pop(),
        )
        for index, name in enumerate(REGION_NAMES[:count])
    ]


def free_ports(host: str, count: int) -> list[int]:
    """`count` distinct free ports (each held until all are found, so none comes twice)."""
    with contextlib.ExitStack() as held:
        sockets = [held.enter_context(socket.socket()) for _ in range(count)]
        for sock in sockets:
            sock.bind((host, 0))
        return [int(sock.getsockname()[1]) for sock in sockets]


def bootstrap(stage: str, regions: Sequence[Region]) -> dict[str, Any]:
    """The global stage's resources: the table once (one store in every Region), each KMS key
    a multi-Region key of the first Region replicated into the others under its alias, and
    each Region's event buses. Run in the stack's process, whose clients are the first
    Region's."""
    from chalicelib.runtime import aws_client, services
    from local.resources import create_all, create_replicas

    svc = services()
    created = create_all(
        svc.dynamodb, svc.kms, stage, svc.events_client, multi_region=True, sqs=svc.sqs
    )
    replicas = {
        region.name: (aws_client("kms", region.name), aws_client("events", region.name))
        for region in regions[1:]
    }
    create_replicas(stage, svc.kms, created["keys"], replicas)
    return created


def start(
    regions: Sequence[Region], stage: str, quiet: bool, environment: Mapping[str, str]
) -> list[subprocess.Popen[bytes]]:
    """A process per Region, each with `environment` told its own Region; returns once every
    one serves its API and its gate (or raises, having stopped them all)."""
    processes: list[subprocess.Popen[bytes]] = []
    try:
        for region in regions:
            command = [
                sys.executable, "-m", "local.regions", "--region", region.name,
                "--host", region.host, "--port", str(region.port),
                "--gate-port", str(region.gate_port), "--stage", stage,
                *(["--quiet"] if quiet else []),
            ]
            told = {**environment, "AWS_REGION": region.name, "AWS_DEFAULT_REGION": region.name}
            processes.append(subprocess.Popen(command, cwd=PROJECT_DIR, env=told))
        for region, process in zip(regions, processes, strict=True):
            _wait_until_serving(region, process)
    except BaseException:
        stop(processes)
        raise
    return processes


def _wait_until_serving(region: Region, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + STARTUP_SECONDS
    for port in (region.port, region.gate_port):
        while not _listening(region.host, port):
            if process.poll() is not None:
                raise RuntimeError(
                    f"the {region.name} Region's process exited ({process.returncode}) "
                    "before it served"
                )
            if time.monotonic() > deadline:
                raise RuntimeError(f"the {region.name} Region did not serve on port {port}")
            time.sleep(0.05)


def _listening(host: str, port: int) -> bool:
    with contextlib.suppress(OSError), socket.create_connection((host, port), timeout=0.5):
        return True
    return False


def stop(processes: Sequence[subprocess.Popen[bytes]]) -> None:
    """SIGTERM to every Region's process still running, then wait for each (kill a laggard)."""
    for process in processes:
        if process.poll() is None:
            process.terminate()
    for process in processes:
        try:
            process.wait(timeout=STOP_SECONDS)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def described(regions: Sequence[Region], processes: Sequence[subprocess.Popen[bytes]]) -> list[
    dict[str, Any]
]:
    """The ready file's `regions`: each Region's name, API, gate and process id."""
    return [
        {
            "region": region.name,
            "endpoint": region.endpoint,
            "mcpResource": region.mcp_resource,
            "pid": process.pid,
        }
        for region, process in zip(regions, processes, strict=True)
    ]


def banner(info: Mapping[str, Any]) -> str:
    """The banner's lines for the Regions ("" for one Region)."""
    regions = info.get("regions") or []
    if len(regions) < 2:
        return ""
    width = max(len(r["region"]) for r in regions)
    lines = "\n".join(
        f"  {r['region']:<{width}}  {r['endpoint']}  (data-plane gate: {r['mcpResource']})"
        for r in regions
    )
    return f"""
{len(regions)} Regions over one store (each a process told its Region; any one can stop):
{lines}
One issuer for all ({info["endpoint"]}); a change in one Region is in force in every other
on its next request.
"""


def serve_until_stopped() -> None:
    """The stack's process while the Regions serve: it waits for Ctrl-C or SIGTERM."""
    while True:
        time.sleep(3600)


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def _stop_when_orphaned(parent: int) -> None:
    """SIGTERM to this process once the stack that started it is gone (killed outright, it
    could not stop us itself): a Region never outlives its store."""

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(1)
        os.kill(os.getpid(), signal.SIGTERM)

    threading.Thread(target=watch, daemon=True).start()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="One Region of the local stack.")
    parser.add_argument("--region", required=True, choices=REGION_NAMES)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--gate-port", type=int, required=True)
    parser.add_argument("--stage", default="dev")
    parser.add_argument("--quiet", action="store_true", help="no request log lines")
    args = parser.parse_args(argv)
    signal.signal(signal.SIGTERM, _interrupt)
    _stop_when_orphaned(os.getppid())
    from local.stack import make_server, start_mcp_server

    given = dict(os.environ)
    server = make_server(args.host, args.port, args.stage, args.quiet)
    # Building the server applied the stage's configuration to os.environ; what the stack
    # gave this Region wins again, as in the stack's own process.
    os.environ.update(given)
    gate = start_mcp_server(args.host, args.gate_port, f"http://{args.host}:{args.port}")
    try:
        server.server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        # Ctrl-C reaches the whole process group, then the stack stops us too: once is enough.
        for stopping in (signal.SIGINT, signal.SIGTERM):
            signal.signal(stopping, signal.SIG_IGN)
        gate.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
