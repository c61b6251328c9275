"""`make bench`: the data-plane authorizer against the local stack's moto, in its own process.

For a data-plane decision with a workspace (`GET /v1/memory/items`, the event of
tests/fixtures/apigateway/) by three kinds of credential: a key minted today (a workspace key
sending its own X-Workspace-Id; it names its owner and workspace), a key minted before (the
plain format, same binding) and a user token naming the workspace. It prints:

- store round trips per decision, per kind (botocore `before-send` events: every HTTP
  request, retries included), and writes per decision (the lastUsedAt writes, on their own
  client);
- a modelled latency floor per decision: the decision's own CPU time plus the per-call
  latency of DynamoDB (`--call-latency-ms`, 5 ms by default) for each request, charged by a
  `before-send` hook of this benchmark (charged, not slept: moto's own time is not
  DynamoDB's and would only add noise); p50 and p99 over the run;
- the authorizer's CPU time per decision (`time.process_time()` in this process, median),
  beside the CPU time of the bare boto3 call it makes for a new key (the same BatchGetItem on
  the same client, done alone: the floor of this design), and the ratio of the two;
- cold start: a fresh interpreter, as Lambda starts the authorizer's function
  (`_HANDLER=app.authorizer`), importing `app` and making the first decision, beside
  `import boto3` plus client creation alone (median of several runs of each, interleaved);
  the same with every route loaded (the API handler's function); and the start of a copy
  restored from a SnapStart snapshot: the snapshot hooks run first (not timed), then the
  after-restore hooks and the first decision (timed);
- those figures modelled at the memory each function is packaged with (bench/lambda_model.py:
  Lambda's CPU share is memory / 1,769 MB), and a table over common sizes;

and ends with one JSON line holding these figures (stdout: the report, then the JSON as its
last line; progress goes to stderr, and the service's own log lines are kept to warnings, on
stderr). It exits 1 when a target is missed: each kind of credential within its round trips
(SCENARIOS), CPU within 1.3x of the bare call, at most 0.01 writes per decision, cold start
within 1.2x of the boto3-only baseline in CPU time (the wall-time ratio is printed beside it:
the first decision waits for moto, which on a shared machine waits for the CPU). moto's
server is single-threaded and in its own process, so its work never counts as ours.

Cold starts compare like with like: boto3's modules were compiled to bytecode when pip
installed them, so the benchmark compiles app.py and chalicelib/ before its runs (compileall,
whatever PYTHONDONTWRITEBYTECODE says). Otherwise every fresh process would compile our
source and the baseline's never (in Lambda, without a snapshot, both would: nothing in the
package is compiled).

A kind of credential is a `Scenario`: how to mint one, its round-trip target, and the suffix
of its JSON fields (`roundTripsPerDecision<Suffix>`, `cpuPerDecision<Suffix>Us`,
`latencyFloor<Suffix>P50Ms`, ...; the key minted today has none), and the same figures again
under `credentials.<name>`. Another kind is one more entry in SCENARIOS.

    python -m bench.authorizer [--decisions 2000] [--cold-runs 11] [--call-latency-ms 5]
"""

from __future__ import annotations

import argparse
import compileall
import dataclasses
import functools
import json
import logging
import math
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from bench import lambda_model
from infra.template import PROJECT_DIR
from tests.fixtures.authorizer_path import NOT_ON_THE_AUTHORIZER_PATH

if TYPE_CHECKING:
    from chalicelib.runtime import Services

OWNER = "usr_bench"
PATH = "/v1/memory/items"
MAX_WRITES_PER_DECISION = 0.01  # lastUsedAt: one write per key and 5-minute window
MAX_CPU_RATIO = 1.3
MAX_DPOP_CPU_RATIO = 1.5  # a key-bound decision (the proof checked too) against a bearer one
DPOP = "dpop key"
MAX_COLD_START_RATIO = 1.2
CALL_LATENCY_MS = 5.0  # a strongly consistent DynamoDB read, in-region, as seen by the caller
# Loaded by the cold start only if something leaks into the authorizer's import path.
HEAVY_MODULES = NOT_ON_THE_AUTHORIZER_PATH



@dataclass(frozen=True)
class Scenario:
    """One kind of credential the benchmark decides with."""

    name: str  # as printed, and its key under `credentials` in the JSON
    suffix: str  # of its flat JSON fields: roundTripsPerDecision<suffix>, ...
    max_round_trips: int
    mint: Callable[[Services, str], str]  # (services, workspace id) -> the credential
    path: str = PATH  # where the request goes (an MCP token: its resource)


def _new_key(svc: Services, workspace_id: str) -> str:
    from chalicelib.access.principal import Principal
    from chalicelib.access.scopes import ALL_SCOPES
    from chalicelib.keys.service import NewKey

    owner = Principal(OWNER, "user_token", frozenset(ALL_SCOPES))
    new = NewKey(label="bench", category="workspace", workspace_id=workspace_id)
    return svc.key_service.create(owner, new).plaintext


def _old_key(svc: Services, workspace_id: str) -> str:
    from tests.fixtures.earlier_keys import mint_plain_key

    return mint_plain_key(svc, OWNER, workspace_id)


def _dpop_key(svc: Services, workspace_id: str) -> str:
    """A new key bound to the benchmark's DPoP key pair (`PAIR`)."""
    from chalicelib.access.principal import Principal
    from chalicelib.access.scopes import ALL_SCOPES
    from chalicelib.keys.service import NewKey

    owner = Principal(OWNER, "user_token", frozenset(ALL_SCOPES))
    new = NewKey(
        label="bench", category="workspace", workspace_id=workspace_id, dpop_jkt=_pair().jkt
    )
    return svc.key_service.create(owner, new).plaintext


@functools.cache
def _pair() -> Any:
    from tests.fixtures.dpop import DpopKey

    return DpopKey("ES256")


def _user_token(svc: Services, workspace_id: str) -> str:
    return svc.session_service.start(OWNER).access.token


# The first is the one every ratio is about (its bare BatchGetItem, its writes, cold start).
SCENARIOS = (
    Scenario("new key", "", 1, _new_key),  # the key and its membership in one BatchGetItem
    Scenario("old key", "OldKey", 2, _old_key),  # the key, then the membership
    # Its sign-in and the membership in one BatchGetItem; the signature is checked locally.
    Scenario("user token", "UserToken", 1, _user_token),
    Scenario("workload", "Workload", 1, lambda svc, ws: _workload_token(svc, ws)),  # its policy
    # A service client's token (client_credentials): its client's item, one GetItem.
    Scenario("service client", "ServiceClient", 1, lambda svc, ws: _service_client_token(svc, ws)),
    Scenario("delegated", "Delegated", 1, lambda svc, ws: _delegated_token(svc, ws)),  # root+member
    # An MCP access token at its resource: its grant and the membership in one BatchGetItem.
    Scenario("mcp", "Mcp", 1, lambda svc, ws: _mcp_token(svc, ws), "/mcp/tools"),
    # A new key bound to a key pair: `Authorization: DPoP`, its proof checked (ES256), then
    # the same one BatchGetItem as a new key.
    Scenario(DPOP, "DpopKey", 1, _dpop_key),
)
NEW_KEY = SCENARIOS[0].name

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
# As Lambda's runtime does with SnapStart: init and the before-snapshot hooks when the version
# is published; in each restored copy, the after-restore hooks, then the first request.
RESTORED_CHILD = (
    """
import json, sys, time
event = json.loads(sys.stdin.read())
import app
from snapshot_restore_py import get_after_restore, get_before_snapshot
for hook, args, kwargs in reversed(get_before_snapshot()):
    hook(*args, **kwargs)
wall, cpu = time.perf_counter(), time.process_time()
for hook, args, kwargs in get_after_restore():
    hook(*args, **kwargs)
answer = app.authorizer(event, None)
effect = answer["policyDocument"]["Statement"][0]["Effect"]
"""
    + _REPORT
)


@dataclass(frozen=True)
class Setup:
    events: dict[str, dict[str, Any]]  # per kind of credential
    bare_request: dict[str, Any]  # the new key's BatchGetItem, as the authorizer sends it
    # Kinds whose event goes stale (a DPoP proof lives 60 s): a fresh one, made outside the
    # measured decision.
    renew: dict[str, Callable[[], dict[str, Any]]] = dataclasses.field(default_factory=dict)


def prepare() -> Setup:
    """The table, a workspace and its owner's credentials, created as the local stack does."""
    from chalicelib import ids, items
    from chalicelib.hashing import hash_secret
    from chalicelib.runtime import services
    from chalicelib.workspaces.model import Workspace
    from local.resources import create_all
    from tests.fixtures.events import bearer, request_event

    svc = services()
    create_all(svc.dynamodb, svc.kms, "dev", svc.events_client)
    now = svc.clock.now()
    workspace = Workspace(ids.new_workspace_id(now), "Bench", OWNER, now)
    svc.workspace_store.create(workspace)
    credentials = {scenario.name: scenario.mint(svc, workspace.id) for scenario in SCENARIOS}
    table = svc.settings.table_name
    new_key_hash = hash_secret(credentials[NEW_KEY])
    keys = [items.credential(new_key_hash), items.member(workspace.id, OWNER)]

    def dpop_event() -> dict[str, Any]:
        key = credentials[DPOP]
        event = request_event(PATH, f"DPoP {key}", workspace.id)
        context = event["requestContext"]
        proof = _pair().proof("GET", f"https://{context['domainName']}{context['path']}", key)
        event["headers"]["DPoP"] = proof
        event["multiValueHeaders"]["DPoP"] = [proof]
        return event

    events = {
        s.name: request_event(s.path, bearer(credentials[s.name]), workspace.id)
        for s in SCENARIOS
    }
    events[DPOP] = dpop_event()
    return Setup(
        events,
        {"RequestItems": {table: {"Keys": keys, "ConsistentRead": True}}},
        {DPOP: dpop_event},
    )


def _workload_token(svc: Any, workspace_id: str) -> str:
    """A workload token under a trust policy of the workspace, as the exchange mints it."""
    from chalicelib import ids
    from chalicelib.workloads.model import TrustPolicy, workload_subject

    now = svc.clock.now()
    policy = TrustPolicy(
        ids.new_trust_policy_id(now), workspace_id, "bench CI",
        "https://token.actions.githubusercontent.com", "memory-service",
        "repo:acme/agents:ref:refs/heads/*", {}, ("memory",), 900, now, OWNER,
    )
    svc.trust_policies.create(policy)
    subject = "repo:acme/agents:ref:refs/heads/main"
    extra = {"workspace_id": workspace_id, "scope": "memory", "policy": policy.id,
             "act": {"sub": subject, "iss": policy.issuer}}
    return str(svc.signer.mint(workload_subject(policy.id, subject), extra=extra,
                               lifetime=900).token)


def _service_client_token(svc: Any, workspace_id: str) -> str:
    """A service client's token, as the client_credentials grant mints it."""
    from chalicelib import ids
    from chalicelib.service_clients.model import ServiceClient

    now = svc.clock.now()
    jwk = {"kty": "EC", "crv": "P-256", "x": "bench", "y": "bench", "kid": "k1", "alg": "ES256"}
    client = ServiceClient(
        ids.new_service_client_id(now), workspace_id, "bench", ("memory",), (jwk,), None, now,
        OWNER,
    )
    svc.service_clients.create(client)
    extra = {"client_id": client.id, "workspace_id": workspace_id, "scope": "memory"}
    return str(svc.signer.mint(client.id, extra=extra, lifetime=900).token)


def _delegated_token(svc: Any, workspace_id: str) -> str:
    """A browser's token delegated from a workspace key of its own (its root)."""
    key = _new_key(svc, workspace_id)
    return str(svc.delegator.delegate(key, None, None, None, "bench").token)


MCP_RESOURCE = "https://memory.bench.example/mcp"  # the bench's MCP_RESOURCES entry


def _mcp_token(svc: Any, workspace_id: str) -> str:
    """An MCP client's access token for the bench's resource, with its grant (a refresh
    family bound to the client) stored as the authorization server stores one."""
    from chalicelib import ids
    from chalicelib.sessions.refresh import GRANT_CLIENT

    now = svc.clock.now()
    grant_id = ids.ulid(now)
    grant = {GRANT_CLIENT: "bench-client", "resource": MCP_RESOURCE, "scope": "memory",
             "workspaceId": workspace_id}
    svc.refresh_tokens.start_family(OWNER, now, family_id=grant_id, grant=grant)
    extra = {"client_id": "bench-client", "scope": "memory", "workspace_id": workspace_id,
             "sid": grant_id}
    return str(svc.signer.mint(OWNER, audience=MCP_RESOURCE, extra=extra).token)


def allowed(answer: dict[str, Any]) -> bool:
    return bool(answer["policyDocument"]["Statement"][0]["Effect"] == "Allow")


def percentile(values: list[float], fraction: float) -> float:
    """Nearest-rank percentile: the smallest value with `fraction` of the values at or below."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(fraction * len(ordered)) - 1)]


@dataclass
class Run:
    """One kind of credential's decisions: CPU seconds, round trips and modelled latency."""

    cpu: list[float]
    round_trips: list[int]
    floor: list[float]  # CPU time plus the per-call latency charged for its requests

    def summary(self) -> dict[str, float]:
        return {
            "round_trips": statistics.fmean(self.round_trips),
            "cpu": statistics.median(self.cpu),
            "floor_p50": percentile(self.floor, 0.50),
            "floor_p99": percentile(self.floor, 0.99),
        }


def warm(setup: Setup, decisions: int, warmup: int, call_latency: float) -> dict[str, Any]:
    """Per-decision figures of each kind of credential; for new keys, interleaved with the
    bare BatchGetItem they make."""
    import app
    from chalicelib.runtime import services

    client = services().dynamodb
    sends = 0
    charged = 0.0
    counting = False

    def on_send(**_: Any) -> None:
        # The benchmark's latency model: each request DynamoDB would receive costs
        # `call_latency` on top of our own work. Charged here, never slept.
        nonlocal sends, charged
        if counting:
            sends += 1
            charged += call_latency

    client.meta.events.register("before-send.dynamodb", on_send)
    writes = 0

    def on_write(**_: Any) -> None:
        nonlocal writes
        writes += 1

    services().last_use_dynamodb.meta.events.register("before-send.dynamodb", on_write)

    def cpu(run: Callable[[], None]) -> float:
        start = time.process_time()
        run()
        return time.process_time() - start

    def bare() -> None:
        client.batch_get_item(**setup.bare_request)

    def decide(event: dict[str, Any]) -> Callable[[], None]:
        def run() -> None:
            if not allowed(app.authorizer(event, None)):
                raise SystemExit("the benchmark's decision was not Allow")

        return run

    def measure(kind: str, count: int, bare_cpu: list[float] | None) -> Run:
        nonlocal sends, charged, counting
        run = Run([], [], [])
        decision = decide(setup.events[kind])
        for i in range(count):
            if kind in setup.renew and not i % 100:
                decision = decide(setup.renew[kind]())
            # Alternate the order, so that neither side always runs on a warmer cache.
            if bare_cpu is not None and i % 2:
                bare_cpu.append(cpu(bare))
            sends, charged, counting = 0, 0.0, True
            spent = cpu(decision)
            counting = False
            run.cpu.append(spent)
            run.round_trips.append(sends)
            run.floor.append(spent + charged)
            if bare_cpu is not None and not i % 2:
                bare_cpu.append(cpu(bare))
        return run

    for kind in setup.events:  # first decisions load code and fetch the signing keys
        event = setup.renew[kind]() if kind in setup.renew else setup.events[kind]
        for _ in range(warmup):
            decide(event)()
    for _ in range(warmup):
        bare()
    bare_cpu: list[float] = []
    writes = 0
    runs = {NEW_KEY: measure(NEW_KEY, decisions, bare_cpu)}
    new_key_writes = writes
    others = max(1, decisions // 4)
    runs.update({s.name: measure(s.name, others, None) for s in SCENARIOS[1:] if s.name != DPOP})
    writes = 0
    runs[DPOP] = measure(DPOP, others, None)
    return {
        "dpop_writes": writes / others,
        "kinds": {kind: run.summary() for kind, run in runs.items()},
        "counts": {s.name: decisions if s.name == NEW_KEY else others for s in SCENARIOS},
        "bare_cpu": statistics.median(bare_cpu),
        "writes": new_key_writes / decisions,
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


def compile_project() -> None:
    """Bytecode for every module a cold start imports from this project, as pip wrote it for
    boto3's: written even under PYTHONDONTWRITEBYTECODE (py_compile ignores it)."""
    compileall.compile_file(PROJECT_DIR / "app.py", quiet=1)
    compileall.compile_dir(PROJECT_DIR / "chalicelib", quiet=1)


def cold(setup: Setup, runs: int) -> dict[str, Any]:
    compile_project()
    event = setup.events[NEW_KEY]
    authorizer_env = {**os.environ, "_HANDLER": "app.authorizer"}
    api_env = {**os.environ, "_HANDLER": "app.app"}  # the same first decision, all routes loaded
    kinds = {
        "authorizer": (AUTHORIZER_CHILD, authorizer_env),
        "baseline": (BOTO3_CHILD, authorizer_env),
        "full_app": (AUTHORIZER_CHILD, api_env),
        "restored": (RESTORED_CHILD, authorizer_env),
        "restored_full_app": (RESTORED_CHILD, api_env),
    }
    for script, env in kinds.values():  # a first run of each, not counted
        fresh(script, event, env)
    rows: dict[str, list[dict[str, Any]]] = {kind: [] for kind in kinds}
    for _ in range(runs):
        for kind, (script, env) in kinds.items():
            rows[kind].append(fresh(script, event, env))
    decided = [row for kind, kind_rows in rows.items() if kind != "baseline" for row in kind_rows]
    if not all(row["effect"] == "Allow" for row in decided):
        raise SystemExit("a cold-start decision was not Allow")

    def median(kind: str, field: str) -> float:
        return statistics.median(row[field] for row in rows[kind])

    figures: dict[str, Any] = {
        f"{kind}_{field}": median(kind, field) for kind in kinds for field in ("wall", "cpu")
    }
    figures["loaded"] = sorted({m for row in rows["authorizer"] for m in row["loaded"]})
    return figures


def modelled(
    hot: dict[str, Any], start: dict[str, Any], memory_mb: int, call_latency: float
) -> dict[str, float]:
    """The authorizer's figures in a function of `memory_mb` (bench/lambda_model.py)."""
    new = hot["kinds"][NEW_KEY]
    cpu = lambda_model.on_lambda(new["cpu"], 0.0, memory_mb)
    network = new["round_trips"] * call_latency
    return {
        "cpuPerDecisionMs": cpu * 1e3,
        "latencyFloorP50Ms": lambda_model.on_lambda(new["floor_p50"] - network, network, memory_mb)
        * 1e3,
        "latencyFloorP99Ms": lambda_model.on_lambda(new["floor_p99"] - network, network, memory_mb)
        * 1e3,
        "coldStartMs": started(start, "authorizer", memory_mb, call_latency) * 1e3,
        "restoredStartMs": started(start, "restored", memory_mb, call_latency) * 1e3,
        "costPerMillionUsd": lambda_model.cost_per_million(cpu + network, memory_mb),
    }


def started(start: dict[str, Any], kind: str, memory_mb: int, call_latency: float) -> float:
    """A start in a function of `memory_mb`: its CPU time, scaled, and the first decision's
    one round trip. Not the wall time measured here, whose excess over the CPU time is mostly
    waiting for the other processes of this shared machine."""
    return lambda_model.on_lambda(start[f"{kind}_cpu"], call_latency, memory_mb)


def imported(code: str) -> dict[str, int]:
    """Each module a fresh process loads running `code`, with its own import time (µs),
    from `python -X importtime` (the authorizer's environment: `_HANDLER` included)."""
    result = subprocess.run(  # noqa: S603 (our interpreter, our code, no shell)
        [sys.executable, "-X", "importtime", "-c", code],
        cwd=PROJECT_DIR,
        env=os.environ.copy(),
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    own: dict[str, int] = {}
    for line in result.stderr.splitlines():
        fields = line.removeprefix("import time:").split("|")
        if len(fields) == 3 and fields[0].strip().isdigit():
            own[fields[2].strip()] = int(fields[0])
    return own


def heaviest(ratio: float, count: int = 12) -> str:
    """Over the target: the modules the authorizer's imports load beyond boto3 and a client,
    heaviest first (what to defer or drop). Nothing when the target is met."""
    if ratio <= MAX_COLD_START_RATIO:
        return ""
    baseline = imported('import boto3; boto3.client("dynamodb")')
    extra = {m: us for m, us in imported("import app").items() if m not in baseline}
    top = sorted(extra.items(), key=lambda item: -item[1])[:count]
    listed = "\n".join(f"    {us / 1e3:6.1f} ms  {module}" for module, us in top)
    return (
        f"\n  imported beyond boto3, heaviest first (self time, -X importtime; "
        f"{len(extra)} modules, {sum(extra.values()) / 1e3:.1f} ms in all):\n{listed}"
    )


def progress(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def quiet_service_logs() -> None:
    """The service logs a key created, a use recorded: not the benchmark's output. Warnings
    only, and on stderr, so that stdout is the report and its JSON line."""
    from chalicelib.logs import logger

    logger.setLevel(logging.WARNING)
    handler = logger.registered_handler
    if isinstance(handler, logging.StreamHandler):
        handler.setStream(sys.stderr)


def per_scenario(kinds: dict[str, dict[str, float]], counts: dict[str, int]) -> dict[str, Any]:
    """Each kind of credential's figures: flat (`<field><suffix><unit>`, the names the targets
    and earlier runs use) and nested under `credentials`."""
    flat: dict[str, Any] = {}
    nested: dict[str, Any] = {}
    for scenario in SCENARIOS:
        summary, suffix = kinds[scenario.name], scenario.suffix
        figures = {
            "decisions": counts[scenario.name],
            "roundTripsPerDecision": round(summary["round_trips"], 2),
            "maxRoundTrips": scenario.max_round_trips,
            "cpuPerDecisionUs": round(summary["cpu"] * 1e6),
            "latencyFloorP50Ms": round(summary["floor_p50"] * 1e3, 1),
            "latencyFloorP99Ms": round(summary["floor_p99"] * 1e3, 1),
        }
        nested[scenario.name] = figures
        flat[f"roundTripsPerDecision{suffix}"] = figures["roundTripsPerDecision"]
        flat[f"cpuPerDecision{suffix}Us"] = figures["cpuPerDecisionUs"]
        flat[f"latencyFloor{suffix}P50Ms"] = figures["latencyFloorP50Ms"]
        flat[f"latencyFloor{suffix}P99Ms"] = figures["latencyFloorP99Ms"]
    return {**flat, "credentials": nested}


def sizing(cpu: float, wait: float, packaged_mb: int) -> dict[str, Any]:
    """The sizing rule on this run's CPU time, beside the size the authorizer is packaged with,
    and the CPU times per decision for which the rule keeps the packaged size."""
    low, high = lambda_model.cpu_band(packaged_mb, wait)
    rule_mb = lambda_model.sized(cpu, wait)
    return {
        "ruleMb": rule_mb,
        "packagedMb": packaged_mb,
        "agrees": rule_mb == packaged_mb,
        "cpuPerDecisionMs": round(cpu * 1e3, 2),
        "packagedHoldsForCpuMs": [round(low * 1e3, 2), round(high * 1e3, 2)],
    }


def sizing_lines(size: dict[str, Any]) -> str:
    low, high = size["packagedHoldsForCpuMs"]
    lines = [
        f"  sizing rule (smallest size within {lambda_model.WITHIN_FULL_CORE}x of a full core's "
        f"time): {size['ruleMb']} MB for this run's {size['cpuPerDecisionMs']:.2f} ms of CPU "
        f"per decision; packaged: {size['packagedMb']} MB (.chalice/config.json)",
        f"  the rule gives {size['packagedMb']} MB while a decision's CPU here is between "
        f"{low:.2f} and {high:.2f} ms",
    ]
    if size["agrees"]:
        lines.append("  they agree: nothing to do")
    else:
        lines.append(
            "  they differ: this run's CPU time depends on this machine and its load, and asks "
            "for nothing by itself. Change lambda_memory_size only when quiet runs keep giving "
            f"{size['ruleMb']} MB, or the deployed function's REPORT durations say so "
            '(docs/performance.md, "When make bench prints another figure")'
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Benchmark the data-plane authorizer.")
    parser.add_argument("--decisions", type=int, default=2000)
    parser.add_argument("--warmup", type=int, default=100)
    parser.add_argument("--cold-runs", type=int, default=11)
    parser.add_argument("--call-latency-ms", type=float, default=CALL_LATENCY_MS)
    args = parser.parse_args(argv)
    if args.decisions < 1 or args.cold_runs < 1 or args.call_latency_ms < 0:
        parser.error("--decisions and --cold-runs must be at least 1, the latency at least 0")
    call_latency = args.call_latency_ms / 1e3

    from chalicelib.config import DEFAULT_USAGE_FLUSH_SECONDS
    from local.stack import free_port, local_environment, start_moto

    host = "127.0.0.1"
    moto_endpoint = f"http://{host}:{free_port(host)}"
    progress(f"starting moto (single-threaded, its own process) on {moto_endpoint}")
    moto = start_moto(host, int(moto_endpoint.rsplit(":", 1)[1]))
    try:
        os.environ.update(local_environment("dev", "http://127.0.0.1", moto_endpoint))
        # Usage counting on, with the deployed write window (the local stack shortens it).
        os.environ["USAGE_FLUSH_SECONDS"] = str(DEFAULT_USAGE_FLUSH_SECONDS)
        os.environ["MCP_RESOURCES"] = json.dumps([MCP_RESOURCE])
        os.environ["_HANDLER"] = "app.authorizer"  # as in the authorizer's Lambda function
        sys.path.insert(0, str(PROJECT_DIR))
        quiet_service_logs()
        setup = prepare()
        progress(f"measuring {args.decisions} decisions and their bare boto3 calls")
        hot = warm(setup, args.decisions, args.warmup, call_latency)
        progress(f"measuring cold start: {args.cold_runs} fresh processes of each kind")
        start = cold(setup, args.cold_runs)
    finally:
        moto.terminate()
        moto.wait(timeout=10)

    kinds = hot["kinds"]
    new = kinds[NEW_KEY]
    cpu_ratio = new["cpu"] / hot["bare_cpu"]
    # CPU time, not wall: the first decision waits for moto's answer, and on a shared machine
    # that wait is moto's queue, not our start (the model adds a round trip for it instead).
    cold_ratio = start["authorizer_cpu"] / start["baseline_cpu"]
    cold_wall_ratio = start["authorizer_wall"] / start["baseline_wall"]
    met = {
        f"roundTrips{s.suffix}": kinds[s.name]["round_trips"] <= s.max_round_trips
        for s in SCENARIOS
    }
    dpop_ratio = kinds[DPOP]["cpu"] / new["cpu"]
    met.update(
        {
            "writesPerDecision": hot["writes"] <= MAX_WRITES_PER_DECISION,
            "cpuRatio": cpu_ratio <= MAX_CPU_RATIO,
            "dpopCpuRatio": dpop_ratio <= MAX_DPOP_CPU_RATIO,
            "writesPerDecisionDpopKey": hot["dpop_writes"] <= MAX_WRITES_PER_DECISION,
            "coldStartRatio": cold_ratio <= MAX_COLD_START_RATIO,
        }
    )
    memory = lambda_model.packaged_memory()
    size = sizing(new["cpu"], new["round_trips"] * call_latency, memory["authorizer"])
    at_packaged = modelled(hot, start, memory["authorizer"], call_latency)
    api_memory = memory["apiHandler"]

    def at_api_memory(kind: str) -> float:
        return started(start, kind, api_memory, call_latency) * 1e3

    def ms(seconds: float) -> float:
        return round(seconds * 1e3, 1)

    scenarios = per_scenario(kinds, hot["counts"])
    credentials = scenarios.pop("credentials")
    figures = {
        "decisions": args.decisions,
        "roundTripsPerDecision": scenarios.pop("roundTripsPerDecision"),
        "cpuPerDecisionUs": scenarios.pop("cpuPerDecisionUs"),
        "bareBoto3CpuUs": round(hot["bare_cpu"] * 1e6),
        "cpuRatio": round(cpu_ratio, 3),
        "dpopCpuRatio": round(dpop_ratio, 3),
        "coldStartMs": ms(start["authorizer_wall"]),
        "coldStartCpuMs": ms(start["authorizer_cpu"]),
        "boto3BaselineMs": ms(start["baseline_wall"]),
        "boto3BaselineCpuMs": ms(start["baseline_cpu"]),
        "coldStartRatio": round(cold_ratio, 3),
        "coldStartWallRatio": round(cold_wall_ratio, 3),
        "coldStartRuns": args.cold_runs,
        "coldStartAllRoutesMs": ms(start["full_app_wall"]),
        "coldStartHeavyModules": start["loaded"],
        "targetsMet": all(met.values()),
        "targetsMissed": sorted(name for name, ok in met.items() if not ok),
        # Per kind of credential (SCENARIOS): the flat fields, then the same nested.
        **scenarios,
        "writesPerDecision": round(hot["writes"], 4),
        "writesPerDecisionDpopKey": round(hot["dpop_writes"], 4),
        "decisionsOldKeyAndUserToken": hot["counts"][SCENARIOS[1].name],
        "callLatencyMs": args.call_latency_ms,
        "credentials": credentials,
        "coldStartAllRoutesCpuMs": ms(start["full_app_cpu"]),
        "restoredStartMs": ms(start["restored_wall"]),
        "restoredStartCpuMs": ms(start["restored_cpu"]),
        "restoredStartAllRoutesMs": ms(start["restored_full_app_wall"]),
        "restoredStartAllRoutesCpuMs": ms(start["restored_full_app_cpu"]),
        "memoryMb": memory,
        "sizingRuleMb": size["ruleMb"],
        "sizing": size,
        "modelledAtPackagedMemory": {
            "authorizer": {k: round(v, 4 if k.startswith("cost") else 1)
                           for k, v in at_packaged.items()},
            "apiHandler": {
                "coldStartMs": round(at_api_memory("full_app"), 1),
                "restoredStartMs": round(at_api_memory("restored_full_app"), 1),
            },
        },
    }

    def mark(ok: bool) -> str:
        return "ok" if ok else "MISSED"

    def row(scenario: Scenario) -> str:
        summary = kinds[scenario.name]
        ok = met[f"roundTrips{scenario.suffix}"]
        return (
            f"  {scenario.name:<12} {summary['round_trips']:5.2f} round trips (target <= "
            f"{scenario.max_round_trips}, {mark(ok)})   CPU {summary['cpu'] * 1e6:6.0f} us   "
            f"floor p50 {summary['floor_p50'] * 1e3:5.2f} ms  "
            f"p99 {summary['floor_p99'] * 1e3:5.2f} ms"
        )

    rows = "\n".join(row(scenario) for scenario in SCENARIOS)
    sizes = "\n".join(
        f"  {size_mb:>5} MB  decision CPU {m['cpuPerDecisionMs']:6.2f} ms  floor p50 "
        f"{m['latencyFloorP50Ms']:6.2f} p99 {m['latencyFloorP99Ms']:6.2f} ms  cold start "
        f"{m['coldStartMs']:7.1f} ms  restored {m['restoredStartMs']:6.1f} ms  "
        f"${m['costPerMillionUsd']:.3f} per million"
        for size_mb in lambda_model.SIZES_MB
        for m in [modelled(hot, start, size_mb, call_latency)]
    )
    print(
        f"""
Data-plane decisions with a workspace (GET {PATH}); floor = own CPU + {args.call_latency_ms:g} ms per store request
{rows}
  usage writes per decision (new key)       {hot["writes"]:.4f}  target <= {MAX_WRITES_PER_DECISION}  {mark(met["writesPerDecision"])}
  bare boto3 call alone (1 BatchGetItem)  {hot["bare_cpu"] * 1e6:7.0f} us  median of {args.decisions}
  ratio (new key / bare call)             {cpu_ratio:7.3f}x    target <= {MAX_CPU_RATIO}x  {mark(met["cpuRatio"])}
  ratio (DPoP-bound key / new key, CPU)   {dpop_ratio:7.3f}x    target <= {MAX_DPOP_CPU_RATIO}x  {mark(met["dpopCpuRatio"])}  (writes per decision {hot["dpop_writes"]:.4f})
cold start (fresh process, compiled bytecode on both sides, median of {args.cold_runs})
  imports + first decision            {start["authorizer_wall"] * 1e3:7.1f} ms  ({start["authorizer_cpu"] * 1e3:.1f} ms CPU)
  import boto3 + client alone         {start["baseline_wall"] * 1e3:7.1f} ms  ({start["baseline_cpu"] * 1e3:.1f} ms CPU)
  ratio (CPU time)                    {cold_ratio:7.3f}x    target <= {MAX_COLD_START_RATIO}x  {mark(met["coldStartRatio"])}  (wall: {cold_wall_ratio:.3f}x)
  with every route (API handler)      {start["full_app_wall"] * 1e3:7.1f} ms  ({start["full_app_cpu"] * 1e3:.1f} ms CPU)
  heavy modules loaded                {", ".join(start["loaded"]) or "none"}{heaviest(cold_ratio)}
restored from a SnapStart snapshot (after-restore hooks + first decision, median of {args.cold_runs})
  authorizer                          {start["restored_wall"] * 1e3:7.1f} ms  ({start["restored_cpu"] * 1e3:.1f} ms CPU)
  API handler                         {start["restored_full_app_wall"] * 1e3:7.1f} ms  ({start["restored_full_app_cpu"] * 1e3:.1f} ms CPU)
modelled at the packaged memory (CPU share = memory / {lambda_model.FULL_CORE_MB} MB; starts: CPU + the first round trip)
  authorizer, {memory["authorizer"]} MB: decision CPU {at_packaged["cpuPerDecisionMs"]:.2f} ms, floor p50 {at_packaged["latencyFloorP50Ms"]:.2f} ms p99 {at_packaged["latencyFloorP99Ms"]:.2f} ms, cold start {at_packaged["coldStartMs"]:.0f} ms, restored {at_packaged["restoredStartMs"]:.0f} ms
  API handler, {api_memory} MB: cold start {figures["modelledAtPackagedMemory"]["apiHandler"]["coldStartMs"]:.0f} ms, restored {figures["modelledAtPackagedMemory"]["apiHandler"]["restoredStartMs"]:.0f} ms
the authorizer at other sizes (same model; cost: x86 us-east-1, requests included, no SnapStart charges)
{sizes}
{sizing_lines(size)}
"""  # noqa: E501
    )
    print(json.dumps(figures, separators=(",", ":")))
    return 0 if figures["targetsMet"] else 1


if __name__ == "__main__":
    sys.exit(main())
