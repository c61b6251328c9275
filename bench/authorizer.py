"""`make bench`: the data-plane authorizer against the local stack's moto, in its own process.

For an API-key decision with a workspace (a workspace key sending its own X-Workspace-Id on
GET /v1/memory/items, the event of tests/fixtures/apigateway/), it prints:

- store round trips per decision (botocore `before-send` events: every HTTP request,
  retries included);
- the authorizer's CPU time per decision (`time.process_time()` in this process, median);
- the CPU time of the bare boto3 calls it makes, the same two GetItem requests on the same
  client, done alone: the floor of this design; and the ratio of the two;
- cold start: a fresh interpreter, as Lambda starts the authorizer's function
  (`_HANDLER=app.authorizer`), importing `app` and making the first decision, beside
  `import boto3` plus client creation alone (median of several runs of each, interleaved).

and ends with one JSON line holding these figures. It exits 1 when a target is missed:
at most 2 round trips, CPU within 1.3x of the bare calls, cold start within 1.5x of the
boto3-only baseline. moto's server is single-threaded and in its own process, so its work
never counts as ours.

    python -m bench.authorizer [--decisions 2000] [--cold-runs 11]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from infra.template import PROJECT_DIR
from tests.fixtures.authorizer_path import NOT_ON_THE_AUTHORIZER_PATH

OWNER = "usr_bench"
PATH = "/v1/memory/items"
MAX_ROUND_TRIPS = 2
MAX_CPU_RATIO = 1.3
MAX_COLD_START_RATIO = 1.5
# Loaded by the cold start only if something leaks into the authorizer's import path.
HEAVY_MODULES = NOT_ON_THE_AUTHORIZER_PATH

# Both children read the event first, so that their clocks start at the same point.
_PREAMBLE = """
import json, sys, time
event = json.loads(sys.stdin.read())
wall, cpu = time.perf_counter(), time.process_time()
"""
_REPORT = """
cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
heavy = sys.argv[1:]
loaded = sorted({p for m in sys.modules for p in heavy if m == p or m.startswith(p + ".")})
print(json.dumps({"wall": wall, "cpu": cpu, "effect": effect, "loaded": loaded}))
"""
AUTHORIZER_CHILD = (
    _PREAMBLE
    + """
import app
answer = app.authorizer(event, None)
effect = answer["policyDocument"]["Statement"][0]["Effect"]
"""
    + _REPORT
)
BOTO3_CHILD = (
    _PREAMBLE
    + """
import boto3
boto3.client("dynamodb")
effect = None
"""
    + _REPORT
)


@dataclass(frozen=True)
class Setup:
    event: dict[str, Any]
    requests: list[dict[str, Any]]  # the authorizer's GetItem requests, as it sends them


def prepare() -> Setup:
    """The table, a workspace and a workspace key, created as the local stack does."""
    from chalicelib import ids
    from chalicelib.access.principal import Principal
    from chalicelib.access.scopes import ALL_SCOPES
    from chalicelib.keys.service import NewKey
    from chalicelib.keys.store import CREDENTIAL_SK, credential_pk
    from chalicelib.runtime import services
    from chalicelib.table import PARTITION_KEY, key
    from chalicelib.workspaces.model import Workspace
    from chalicelib.workspaces.store import member_sk, workspace_pk
    from local.resources import create_all
    from tests.fixtures.events import bearer, request_event

    svc = services()
    create_all(svc.dynamodb, svc.kms, "dev")
    now = svc.clock.now()
    workspace = Workspace(ids.new_workspace_id(now), "Bench", OWNER, now)
    svc.workspaces.create(workspace)
    owner = Principal(OWNER, "user_token", frozenset(ALL_SCOPES))
    issued = svc.key_service.create(
        owner, NewKey(label="bench", category="workspace", workspace_id=workspace.id)
    )
    table = svc.settings.table_name
    requests = [
        {
            "TableName": table,
            "Key": key(credential_pk(issued.api_key.key_hash), CREDENTIAL_SK),
            "ConsistentRead": True,
        },
        {
            "TableName": table,
            "Key": key(workspace_pk(workspace.id), member_sk(OWNER)),
            "ConsistentRead": True,
            "ProjectionExpression": "#pk",
            "ExpressionAttributeNames": {"#pk": PARTITION_KEY},
        },
    ]
    return Setup(request_event(PATH, bearer(issued.plaintext), workspace.id), requests)


def allowed(answer: dict[str, Any]) -> bool:
    return bool(answer["policyDocument"]["Statement"][0]["Effect"] == "Allow")


def warm(setup: Setup, decisions: int, warmup: int) -> dict[str, float]:
    """Per-decision CPU of the authorizer and of its bare boto3 calls, interleaved."""
    import app
    from chalicelib.runtime import services

    client = services().dynamodb
    sends = 0
    counting = False

    def on_send(**_: Any) -> None:
        nonlocal sends
        if counting:
            sends += 1

    client.meta.events.register("before-send.dynamodb", on_send)
    credential_request, membership_request = setup.requests

    def decide() -> None:
        if not allowed(app.authorizer(setup.event, None)):
            raise SystemExit("the benchmark's decision was not Allow")

    def bare() -> None:
        client.get_item(**credential_request)
        client.get_item(**membership_request)

    def cpu(run: Callable[[], None]) -> float:
        start = time.process_time()
        run()
        return time.process_time() - start

    for _ in range(warmup):
        decide()
        bare()
    decision_cpu: list[float] = []
    bare_cpu: list[float] = []
    for i in range(decisions):
        # Alternate the order, so that neither side always runs on a warmer cache.
        if i % 2:
            bare_cpu.append(cpu(bare))
        counting = True
        decision_cpu.append(cpu(decide))
        counting = False
        if not i % 2:
            bare_cpu.append(cpu(bare))
    return {
        "round_trips": sends / decisions,
        "decision_cpu": statistics.median(decision_cpu),
        "bare_cpu": statistics.median(bare_cpu),
    }


def fresh(script: str, event: dict[str, Any], env: dict[str, str]) -> dict[str, Any]:
    result = subprocess.run(  # noqa: S603 (our interpreter, our script, no shell)
        [sys.executable, "-c", script, *HEAVY_MODULES],
        input=json.dumps(event),
        cwd=PROJECT_DIR,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    if result.returncode != 0:
        # The child's traceback names no secret: the event is only ever read from stdin.
        raise SystemExit("a cold-start process failed:\n" + result.stderr[-2000:])
    return dict(json.loads(result.stdout.strip().splitlines()[-1]))


def cold(setup: Setup, runs: int) -> dict[str, Any]:
    authorizer_env = {**os.environ, "_HANDLER": "app.authorizer"}
    api_env = {**os.environ, "_HANDLER": "app.app"}  # the same first decision, all routes loaded
    fresh(AUTHORIZER_CHILD, setup.event, authorizer_env)  # writes any missing .pyc files
    fresh(AUTHORIZER_CHILD, setup.event, api_env)
    fresh(BOTO3_CHILD, setup.event, authorizer_env)
    authorizer, baseline, full_app = [], [], []
    for _ in range(runs):
        authorizer.append(fresh(AUTHORIZER_CHILD, setup.event, authorizer_env))
        baseline.append(fresh(BOTO3_CHILD, setup.event, authorizer_env))
        full_app.append(fresh(AUTHORIZER_CHILD, setup.event, api_env))
    if not all(run["effect"] == "Allow" for run in authorizer + full_app):
        raise SystemExit("a cold-start decision was not Allow")

    def median(rows: list[dict[str, Any]], field: str) -> float:
        return statistics.median(row[field] for row in rows)

    return {
        "wall": median(authorizer, "wall"),
        "cpu": median(authorizer, "cpu"),
        "baseline_wall": median(baseline, "wall"),
        "baseline_cpu": median(baseline, "cpu"),
        "full_app_wall": median(full_app, "wall"),
        "loaded": sorted({m for run in authorizer for m in run["loaded"]}),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Benchmark the data-plane authorizer.")
    parser.add_argument("--decisions", type=int, default=2000)
    parser.add_argument("--warmup", type=int, default=100)
    parser.add_argument("--cold-runs", type=int, default=11)
    args = parser.parse_args(argv)
    if args.decisions < 1 or args.cold_runs < 1:
        parser.error("--decisions and --cold-runs must be at least 1")

    from local.stack import free_port, local_environment, start_moto

    host = "127.0.0.1"
    moto_endpoint = f"http://{host}:{free_port(host)}"
    print(f"starting moto (single-threaded, its own process) on {moto_endpoint}", flush=True)
    moto = start_moto(host, int(moto_endpoint.rsplit(":", 1)[1]))
    try:
        os.environ.update(local_environment("dev", "http://127.0.0.1", moto_endpoint))
        os.environ["_HANDLER"] = "app.authorizer"  # as in the authorizer's Lambda function
        sys.path.insert(0, str(PROJECT_DIR))
        setup = prepare()
        print(f"measuring {args.decisions} decisions and their bare boto3 calls", flush=True)
        hot = warm(setup, args.decisions, args.warmup)
        print(f"measuring cold start: {args.cold_runs} fresh processes of each kind", flush=True)
        start = cold(setup, args.cold_runs)
    finally:
        moto.terminate()
        moto.wait(timeout=10)

    cpu_ratio = hot["decision_cpu"] / hot["bare_cpu"]
    cold_ratio = start["wall"] / start["baseline_wall"]
    met = {
        "roundTrips": hot["round_trips"] <= MAX_ROUND_TRIPS,
        "cpuRatio": cpu_ratio <= MAX_CPU_RATIO,
        "coldStartRatio": cold_ratio <= MAX_COLD_START_RATIO,
    }
    figures = {
        "decisions": args.decisions,
        "roundTripsPerDecision": round(hot["round_trips"], 2),
        "cpuPerDecisionUs": round(hot["decision_cpu"] * 1e6),
        "bareBoto3CpuUs": round(hot["bare_cpu"] * 1e6),
        "cpuRatio": round(cpu_ratio, 3),
        "coldStartMs": round(start["wall"] * 1e3, 1),
        "coldStartCpuMs": round(start["cpu"] * 1e3, 1),
        "boto3BaselineMs": round(start["baseline_wall"] * 1e3, 1),
        "boto3BaselineCpuMs": round(start["baseline_cpu"] * 1e3, 1),
        "coldStartRatio": round(cold_ratio, 3),
        "coldStartRuns": args.cold_runs,
        "coldStartAllRoutesMs": round(start["full_app_wall"] * 1e3, 1),
        "coldStartHeavyModules": start["loaded"],
        "targetsMet": all(met.values()),
    }

    def mark(ok: bool) -> str:
        return "ok" if ok else "MISSED"

    print(
        f"""
API-key decision with a workspace (workspace key + its X-Workspace-Id, GET {PATH})
  store round trips per decision      {hot["round_trips"]:.2f}        target <= {MAX_ROUND_TRIPS}  {mark(met["roundTrips"])}
  authorizer CPU per decision         {hot["decision_cpu"] * 1e6:7.0f} us  median of {args.decisions}
  bare boto3 calls alone (2 GetItem)  {hot["bare_cpu"] * 1e6:7.0f} us  median of {args.decisions}
  ratio                               {cpu_ratio:7.3f}x    target <= {MAX_CPU_RATIO}x  {mark(met["cpuRatio"])}
cold start (fresh process, median of {args.cold_runs})
  imports + first decision            {start["wall"] * 1e3:7.1f} ms  ({start["cpu"] * 1e3:.1f} ms CPU)
  import boto3 + client alone         {start["baseline_wall"] * 1e3:7.1f} ms  ({start["baseline_cpu"] * 1e3:.1f} ms CPU)
  ratio                               {cold_ratio:7.3f}x    target <= {MAX_COLD_START_RATIO}x  {mark(met["coldStartRatio"])}
  for comparison, with every route    {start["full_app_wall"] * 1e3:7.1f} ms  (_HANDLER=app.app)
  heavy modules loaded                {", ".join(start["loaded"]) or "none"}
"""  # noqa: E501
    )
    print(json.dumps(figures, separators=(",", ":")))
    return 0 if figures["targetsMet"] else 1


if __name__ == "__main__":
    sys.exit(main())
