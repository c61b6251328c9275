"""`make load`: a bounded load on the local stack, and what must hold under it.

A fixed number of requests at a fixed concurrency, on loopback only, that stops by itself.
The mix: whoami with admin keys, workspace keys and a user token; listing keys (all, and one
workspace's); creating admin and workspace keys; rotating and revoking them; and, every
`--race-every` operations, two rotations of one key released at the same instant. Then it
checks:

- no answer is a 5xx (nor a dropped connection);
- no request made with a key after its revocation was acknowledged (a 204 to DELETE, or the
  201 of the rotation that replaced it) is granted: each acknowledgement is followed at once
  by a request with that key, and every other request with a key is judged by when it
  started;
- every concurrent rotation has exactly one winner (one 201, the other 409);
- the local stack's moto keeps bounded memory: its resident memory (VmRSS, sampled every
  second) grows by at most MAX_MOTO_GROWTH_MIB_PER_1000 per thousand requests. moto as
  shipped grew by gigabytes over a thousand requests (README, "Local stack memory").

It prints throughput, latency percentiles and moto's memory, and ends with one JSON line; it
exits 1 when a check fails. Timing is never judged: `make test` runs the same checks as a
small bounded run (tests/e2e/test_load.py), `make load` the full one.

    python -m bench.load [--requests 2000] [--concurrency 8] [--race-every 25] [--seed 1]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx

from local.running import running_stack
from local.stack import LOCAL_USAGE_FLUSH_SECONDS

PROJECT_DIR = Path(__file__).resolve().parent.parent
KEYS = "/v1/auth/api-keys"
WHOAMI = "/v1/auth/whoami"
LOOPBACK = ("127.0.0.1", "localhost", "::1")
# The mix, by weight (a race counts as one operation of two requests).
MIX = {
    "whoami admin key": 18,
    "whoami workspace key": 18,
    "whoami user token": 8,
    "list keys": 8,
    "list workspace keys": 6,
    "create admin key": 8,
    "create workspace key": 8,
    "rotate": 10,
    "revoke": 10,
}
SEED_KEYS = 6  # of each category, before the timed run
# What the table itself may add (moto never deletes expired items): a few KiB per request.
# moto as shipped added about 3 GiB per thousand requests.
MAX_MOTO_GROWTH_MIB_PER_1000 = 64.0
RSS_SAMPLE_SECONDS = 1.0


def rss_mib(pid: int) -> float:
    """The resident memory of a process, in MiB (Linux: /proc/<pid>/status, VmRSS)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS for process {pid}")


class MemorySamples:
    """moto's resident memory, sampled by a thread of its own while the run goes on."""

    def __init__(self, pid: int):
        self._pid = pid
        self.mib: list[float] = [rss_mib(pid)]
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        while not self._stop.wait(RSS_SAMPLE_SECONDS):
            self.mib.append(rss_mib(self._pid))

    def __enter__(self) -> MemorySamples:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join()
        self.mib.append(rss_mib(self._pid))

    def report(self, requests: int) -> dict[str, float]:
        start, end = self.mib[0], self.mib[-1]
        return {
            "start": round(start, 1),
            "peak": round(max(self.mib), 1),
            "end": round(end, 1),
            "growthPer1000Requests": round((end - start) * 1000 / max(requests, 1), 1),
        }


@dataclass
class TrackedKey:
    id: str
    category: str
    plaintext: str = field(repr=False)
    # time.monotonic() when its revocation was acknowledged to us; None while it is not.
    revoked_at: float | None = None


@dataclass(frozen=True)
class Sample:
    operation: str
    status: int  # 0 for a failed connection
    started: float
    seconds: float
    key_id: str | None = None  # the key used as the credential, if any


class Load:
    """One run: the plan, the keys it made, and every request's outcome."""

    def __init__(self, endpoint: str, token: str, workspace_id: str, seed: int):
        host = urlsplit(endpoint).hostname
        if host not in LOOPBACK:
            raise ValueError(f"load runs against loopback only, not {host!r}")
        self.endpoint = endpoint
        self.token = token
        self.workspace_id = workspace_id
        self.random = random.Random(seed)  # noqa: S311 - a reproducible plan, not a secret
        self.keys: dict[str, TrackedKey] = {}
        self.samples: list[Sample] = []
        self.races: list[list[int]] = []
        self.probes = 0  # requests made right after a revocation was acknowledged
        self._lock = threading.Lock()
        self._local = threading.local()

    # -- HTTP ----------------------------------------------------------------------------

    def _client(self) -> httpx.Client:
        client = getattr(self._local, "client", None)
        if client is None:
            client = httpx.Client(base_url=self.endpoint, timeout=60)
            self._local.client = client
        return client

    def _send(
        self,
        operation: str,
        method: str,
        path: str,
        credential: str,
        key_id: str | None = None,
        workspace: str | None = None,
        body: Any = None,
        client: httpx.Client | None = None,
    ) -> httpx.Response | None:
        headers = {"Authorization": f"Bearer {credential}"}
        if workspace is not None:
            headers["X-Workspace-Id"] = workspace
        started = time.monotonic()
        try:
            answer: httpx.Response | None = (client or self._client()).request(
                method, path, headers=headers, json=body
            )
        except httpx.HTTPError:
            answer = None
        seconds = time.monotonic() - started
        status = answer.status_code if answer is not None else 0
        with self._lock:
            self.samples.append(Sample(operation, status, started, seconds, key_id))
        return answer

    # -- keys ----------------------------------------------------------------------------

    def _create(self, operation: str, category: str, pooled: bool = True) -> TrackedKey | None:
        """A new key; `pooled`: other operations may pick it (use, rotate, revoke) at once."""
        body: dict[str, Any] = {"label": f"load {category}", "category": category}
        if category == "workspace":
            body["workspaceId"] = self.workspace_id
        answer = self._send(operation, "POST", KEYS, self.token, body=body)
        if answer is None or answer.status_code != 201:
            return None
        created = answer.json()
        key = TrackedKey(created["id"], category, created["key"])
        if pooled:
            with self._lock:
                self.keys[key.id] = key
        return key

    def _pick(self, category: str | None = None, live: bool = True) -> TrackedKey | None:
        with self._lock:
            found = [
                k
                for k in self.keys.values()
                if (category is None or k.category == category)
                and (not live or k.revoked_at is None)
            ]
        return self.random.choice(found) if found else None

    def _acknowledged(self, key: TrackedKey) -> None:
        """Its revocation was acknowledged: record when, then use it at once."""
        with self._lock:
            if key.revoked_at is None:
                key.revoked_at = time.monotonic()
            self.probes += 1
        self._send("whoami after revocation", "GET", WHOAMI, key.plaintext, key.id)

    # -- operations ----------------------------------------------------------------------

    def whoami_with_key(self, operation: str, category: str) -> None:
        # Mostly live keys, sometimes any key at all: revoked ones must be refused.
        key = self._pick(category, live=self.random.random() < 0.8)
        if key is not None:
            self._send(operation, "GET", WHOAMI, key.plaintext, key.id)

    def rotate(self, operation: str) -> None:
        key = self._pick()
        if key is None:
            return
        answer = self._send(operation, "POST", f"{KEYS}/{key.id}/rotate", self.token)
        if answer is not None and answer.status_code == 201:
            successor = answer.json()
            with self._lock:
                self.keys[successor["id"]] = TrackedKey(
                    successor["id"], key.category, successor["key"]
                )
            self._acknowledged(key)

    def revoke(self, operation: str) -> None:
        key = self._pick()
        if key is None:
            return
        answer = self._send(operation, "DELETE", f"{KEYS}/{key.id}", self.token)
        if answer is not None and answer.status_code == 204:
            self._acknowledged(key)

    def race(self) -> None:
        """Two rotations of one fresh key, released together from two threads.

        The key joins the pool only afterwards: a revocation drawn meanwhile would make
        both rotations lose, rightly, and the race would prove nothing."""
        key = self._create("race: create", "workspace", pooled=False)
        if key is None:
            return
        barrier = threading.Barrier(2)
        statuses: list[int] = []

        def rotate() -> None:
            with httpx.Client(base_url=self.endpoint, timeout=60) as client:
                barrier.wait()
                answer = self._send(
                    "race: rotate", "POST", f"{KEYS}/{key.id}/rotate", self.token, client=client
                )
            statuses.append(answer.status_code if answer is not None else 0)

        threads = [threading.Thread(target=rotate) for _ in range(2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        with self._lock:
            self.races.append(sorted(statuses))
            self.keys[key.id] = key
        if 201 in statuses:
            self._acknowledged(key)

    def operation(self, name: str) -> Callable[[], object]:
        token, ws = self.token, self.workspace_id
        return {
            "whoami admin key": lambda: self.whoami_with_key(name, "admin"),
            "whoami workspace key": lambda: self.whoami_with_key(name, "workspace"),
            "whoami user token": lambda: self._send(name, "GET", WHOAMI, token, workspace=ws),
            "list keys": lambda: self._send(name, "GET", f"{KEYS}?limit=20", token),
            "list workspace keys": lambda: self._send(name, "GET", KEYS, token, workspace=ws),
            "create admin key": lambda: self._create(name, "admin"),
            "create workspace key": lambda: self._create(name, "workspace"),
            "rotate": lambda: self.rotate(name),
            "revoke": lambda: self.revoke(name),
            "race": self.race,
        }[name]

    def plan(self, requests: int, race_every: int) -> list[str]:
        """About `requests` requests: operations drawn from the mix, races among them."""
        names, weights = zip(*MIX.items(), strict=True)
        planned: list[str] = []
        expected = 0.0
        # What an operation costs in requests on average: a rotation or revocation that
        # succeeds is followed by one more request (the probe), a race is three or four.
        cost = {name: 1.0 for name in names} | {"rotate": 2.0, "revoke": 2.0, "race": 4.0}
        while expected < requests:
            index = len(planned) + 1
            name = "race" if race_every and index % race_every == 0 else None
            name = name or self.random.choices(names, weights)[0]
            planned.append(name)
            expected += cost[name]
        return planned

    def run(self, requests: int, concurrency: int, race_every: int) -> dict[str, Any]:
        for category in ("admin", "workspace"):
            for _ in range(SEED_KEYS):
                self._create("seed: create", category)
        self.samples.clear()
        planned = self.plan(requests, race_every)
        started = time.monotonic()
        with ThreadPoolExecutor(max_workers=concurrency) as pool:
            for _ in pool.map(lambda name: self.operation(name)(), planned):
                pass
        return self.report(time.monotonic() - started, concurrency)

    # -- usage: requests sent per key against requests counted ----------------------------

    def usage(self, since: str) -> dict[str, Any]:
        """Once the run is over: wait one usage write window, make one more request with each
        live key (its first of the new window writes what was counted), then read each
        key's usage. A key is never counted more than it was used (the check that fails the
        run). When every usage write answers within its 0.5 s budget, a live key is counted
        exactly (one container, flushed); a write that timed out is sent again at the key's
        next window (which this run may not reach) or dropped, never added twice, so on a
        loaded machine a live key may be under-counted; a revoked key may miss its last
        window. Under-counts are reported, not failed."""
        time.sleep(float(LOCAL_USAGE_FLUSH_SECONDS) + 0.5)
        with self._lock:
            sent = Counter(
                s.key_id for s in self.samples if s.key_id is not None and 200 <= s.status < 300
            )
            live = [k for k in self.keys.values() if k.revoked_at is None and k.id in sent]
        for key in live:
            answer = self._send("usage: flush", "GET", WHOAMI, key.plaintext, key.id)
            if answer is not None and answer.status_code == 200:
                sent[key.id] += 1
        live_ids = {k.id for k in live}
        rows: list[dict[str, Any]] = []
        for key_id, requests in sorted(sent.items()):
            answer = self._send(
                "usage: read", "GET", f"{KEYS}/{key_id}/usage?granularity=hour&from={since}",
                self.token,
            )
            counted = (
                sum(b["requests"] for b in answer.json()["buckets"])
                if answer is not None and answer.status_code == 200
                else -1
            )
            rows.append({"keyId": key_id, "live": key_id in live_ids, "sent": requests,
                         "counted": counted})
        over = [r for r in rows if r["counted"] > r["sent"]]
        unread = [r for r in rows if r["counted"] < 0]
        missed_live = [r for r in rows if r["live"] and r["counted"] != r["sent"]]
        failures = []
        if over:
            failures.append(f"{len(over)} keys were counted more than they were used")
        if unread:
            failures.append(f"{len(unread)} keys' usage could not be read")
        under = sum(r["sent"] - r["counted"] for r in missed_live if r["counted"] >= 0)
        return {
            "keys": rows,
            "sent": sum(r["sent"] for r in rows),
            "counted": sum(max(r["counted"], 0) for r in rows),
            "liveSent": sum(r["sent"] for r in rows if r["live"]),
            "liveCounted": sum(max(r["counted"], 0) for r in rows if r["live"]),
            "liveKeysUnderCounted": len(missed_live),
            "liveUnderCount": under,
            "failures": failures,
        }

    # -- checks --------------------------------------------------------------------------

    def granted_after_revocation(self) -> list[Sample]:
        return [
            s
            for s in self.samples
            if s.key_id is not None
            and 200 <= s.status < 300
            and (revoked := self.keys[s.key_id].revoked_at) is not None
            and s.started > revoked
        ]

    def report(self, seconds: float, concurrency: int) -> dict[str, Any]:
        durations = sorted(s.seconds for s in self.samples)
        server_errors = [s for s in self.samples if s.status >= 500 or s.status == 0]
        granted = self.granted_after_revocation()
        refused_after = [
            s
            for s in self.samples
            if s.key_id is not None
            and (revoked := self.keys[s.key_id].revoked_at) is not None
            and s.started > revoked
            and s.status == 401
        ]
        bad_races = [r for r in self.races if r != [201, 409]]
        failures = []
        if server_errors:
            failures.append(f"{len(server_errors)} answers were 5xx or dropped connections")
        if granted:
            failures.append(f"{len(granted)} requests were granted to a revoked key")
        if bad_races:
            failures.append(
                f"{len(bad_races)} concurrent rotations had not exactly one winner"
                f" (statuses: {', '.join(map(str, bad_races[:5]))})"
            )
        if not self.races or not refused_after:
            failures.append("the run was too small to exercise every check")
        return {
            "requests": len(self.samples),
            "concurrency": concurrency,
            "seconds": round(seconds, 2),
            "throughputPerSecond": round(len(self.samples) / seconds, 1),
            "p50Ms": round(percentile(durations, 0.50) * 1000, 1),
            "p99Ms": round(percentile(durations, 0.99) * 1000, 1),
            "maxMs": round(durations[-1] * 1000, 1) if durations else 0.0,
            "statuses": dict(sorted(Counter(str(s.status) for s in self.samples).items())),
            "operations": dict(sorted(Counter(s.operation for s in self.samples).items())),
            "serverErrors": len(server_errors),
            "requestsAfterRevocation": len(refused_after) + len(granted),
            "grantedAfterRevocation": len(granted),
            "rotationRaces": len(self.races),
            "racesWithOneWinner": len(self.races) - len(bad_races),
            "failures": failures,
        }


def percentile(ordered: list[float], fraction: float) -> float:
    """The nearest-rank percentile of an ascending list (0.0 for none)."""
    if not ordered:
        return 0.0
    rank = max(1, round(fraction * len(ordered) + 0.5))
    return ordered[min(rank, len(ordered)) - 1]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="A bounded load on the local stack.")
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--race-every", type=int, default=25, help="a rotation race every N")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    if args.requests < 50 or not 1 <= args.concurrency <= 64 or args.race_every < 2:
        parser.error("--requests at least 50, --concurrency 1 to 64, --race-every at least 2")

    print("starting the local stack (moto, the development issuer, the service)", flush=True)
    with running_stack() as info:
        print(
            f"{args.requests} requests, {args.concurrency} at a time, on {info['endpoint']}",
            flush=True,
        )
        load = Load(info["endpoint"], info["token"], info["workspaceId"], args.seed)
        since = time.strftime("%Y-%m-%dT%H:00:00Z", time.gmtime())
        with MemorySamples(int(info["motoPid"])) as memory:
            report = load.run(args.requests, args.concurrency, args.race_every)
        usage = load.usage(since)
    report["usage"] = {k: v for k, v in usage.items() if k != "keys"}
    report["failures"].extend(usage["failures"])
    moto = memory.report(report["requests"])
    report["motoRssMiB"] = moto
    if moto["growthPer1000Requests"] > MAX_MOTO_GROWTH_MIB_PER_1000:
        report["failures"].append(
            f"moto grew by {moto['growthPer1000Requests']} MiB per 1000 requests"
            f" (at most {MAX_MOTO_GROWTH_MIB_PER_1000:g})"
        )
    print(
        f"{report['requests']} requests in {report['seconds']} s: "
        f"{report['throughputPerSecond']} requests/s, p50 {report['p50Ms']} ms, "
        f"p99 {report['p99Ms']} ms, max {report['maxMs']} ms"
    )
    print(f"statuses {report['statuses']}")
    print(
        f"moto RSS: {moto['start']} MiB at the start, {moto['peak']} MiB at its peak, "
        f"{moto['end']} MiB at the end ({moto['growthPer1000Requests']} MiB per 1000 requests)"
    )
    print(
        f"5xx or dropped: {report['serverErrors']}; granted after revocation: "
        f"{report['grantedAfterRevocation']} of {report['requestsAfterRevocation']}; "
        f"rotation races with one winner: {report['racesWithOneWinner']} of "
        f"{report['rotationRaces']}"
    )
    print("requests sent per key against requests counted (GET .../usage):")
    for row in usage["keys"]:
        state = "live" if row["live"] else "revoked"
        print(f"  {row['keyId']} ({state}): sent {row['sent']}, counted {row['counted']}")
    print(
        f"usage: sent {usage['sent']}, counted {usage['counted']}; live keys: sent "
        f"{usage['liveSent']}, counted {usage['liveCounted']} (a revoked key may miss its "
        "last window; none may be counted more than it was used)"
    )
    if usage["liveKeysUnderCounted"]:
        print(
            f"usage: {usage['liveKeysUnderCounted']} live keys under-counted by "
            f"{usage['liveUnderCount']} in all: usage writes that outlived their 0.5 s budget "
            "(moto on a loaded machine) wait for the key's next window or are dropped, never "
            "added twice. Exact counts need a quiet machine."
        )
    for failure in report["failures"]:
        print(f"FAILED: {failure}")
    print(json.dumps(report, separators=(",", ":")))
    return 1 if report["failures"] else 0


if __name__ == "__main__":
    sys.exit(main())
