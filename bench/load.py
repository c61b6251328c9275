"""`make load`: a bounded mixed run against the local stack, with moto's memory measured.

Starts the local stack (`python -m local.stack`, moto single-threaded in its own process)
on free loopback ports, then sends a mix of the service's calls, one at a time, until
`--requests` were sent or `--max-seconds` passed. Each cycle of ten is one new user's
visit: a sign-in (the development issuer's ID token, exchanged), two refreshes, a key
created (with an Idempotency-Key), whoami with it, the user's keys listed, the key rotated,
read, revealed and revoked. It prints:

- moto's resident memory (VmRSS of its process) at the start, every `--sample-every`
  requests and at the end: the local stack must not grow without bound;
- per route: requests, median and 95th percentile latency;
- the statuses seen (a 500 is a bug: the run exits 1);
- with `--freeze` (the default), the time to a 503 with moto stopped (SIGSTOP) for a few
  routes: the failure budget of `chalicelib/runtime.py`, measured.

and ends with one JSON line holding these figures. Loopback only; bounded in count and time.

    python -m bench.load [--requests 3000] [--max-seconds 600] [--sample-every 500] [--no-freeze]
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import sys
import time
import uuid
from collections import Counter, defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

from local.running import running_stack


def rss_mib(pid: int) -> float:
    """The resident memory of a process, in MiB (Linux: /proc/<pid>/status, VmRSS)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS for process {pid}")


class Mix:
    """The calls of one user's day, in a fixed cycle; state carried from call to call."""

    def __init__(self, http: httpx.Client, idp: str, token: str):
        self.http = http
        self.idp = idp
        self.token = token  # the development user's, until the first sign-in
        self.refresh_token: str | None = None
        self.key: dict[str, Any] | None = None

    def _bearer(self, credential: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {credential}"}

    def exchange(self) -> httpx.Response:
        """A new user signs in: the rest of the cycle manages that user's keys."""
        id_token = self.http.post(f"{self.idp}/token", json={"sub": f"load-{uuid.uuid4().hex[:8]}"})
        answer = self.http.post("/v1/auth/exchange", json={"id_token": id_token.json()["id_token"]})
        if answer.status_code == 200:
            self.refresh_token = answer.json()["refresh_token"]
            self.token = answer.json()["access_token"]
        return answer

    def refresh(self) -> httpx.Response:
        if self.refresh_token is None:
            return self.exchange()
        answer = self.http.post("/v1/auth/refresh", json={"refresh_token": self.refresh_token})
        if answer.status_code == 200:
            self.refresh_token = answer.json()["refresh_token"]
        return answer

    def create(self) -> httpx.Response:
        answer = self.http.post(
            "/v1/auth/api-keys",
            json={"label": "load"},
            headers={**self._bearer(self.token), "Idempotency-Key": uuid.uuid4().hex},
        )
        if answer.status_code == 201:
            self.key = answer.json()
        return answer

    def _with_key(self, call: Callable[[dict[str, Any]], httpx.Response]) -> httpx.Response:
        if self.key is None:
            return self.create()
        return call(self.key)

    def whoami(self) -> httpx.Response:
        return self._with_key(
            lambda k: self.http.get("/v1/auth/whoami", headers=self._bearer(k["key"]))
        )

    def list_keys(self) -> httpx.Response:
        return self.http.get("/v1/auth/api-keys?limit=20", headers=self._bearer(self.token))

    def get(self) -> httpx.Response:
        return self._with_key(
            lambda k: self.http.get(
                f"/v1/auth/api-keys/{k['id']}", headers=self._bearer(self.token)
            )
        )

    def reveal(self) -> httpx.Response:
        return self._with_key(
            lambda k: self.http.get(
                f"/v1/auth/api-keys/{k['id']}/reveal", headers=self._bearer(self.token)
            )
        )

    def rotate(self) -> httpx.Response:
        def rotate(key: dict[str, Any]) -> httpx.Response:
            answer = self.http.post(
                f"/v1/auth/api-keys/{key['id']}/rotate",
                headers={**self._bearer(self.token), "Idempotency-Key": uuid.uuid4().hex},
            )
            self.key = answer.json() if answer.status_code == 201 else None
            return answer

        return self._with_key(rotate)

    def revoke(self) -> httpx.Response:
        def revoke(key: dict[str, Any]) -> httpx.Response:
            self.key = None
            return self.http.delete(
                f"/v1/auth/api-keys/{key['id']}", headers=self._bearer(self.token)
            )

        return self._with_key(revoke)

    def cycle(self) -> list[tuple[str, Callable[[], httpx.Response]]]:
        return [
            ("exchange", self.exchange),
            ("refresh", self.refresh),
            ("create", self.create),
            ("whoami", self.whoami),
            ("refresh", self.refresh),
            ("list", self.list_keys),
            ("rotate", self.rotate),
            ("get", self.get),
            ("reveal", self.reveal),
            ("revoke", self.revoke),
        ]


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def run(
    mix: Mix, moto_pid: int, requests: int, max_seconds: float, sample_every: int
) -> dict[str, Any]:
    latencies: dict[str, list[float]] = defaultdict(list)
    statuses: Counter[int] = Counter()
    samples = [(0, round(rss_mib(moto_pid), 1))]
    started = time.monotonic()
    sent = 0
    while sent < requests and time.monotonic() - started < max_seconds:
        for route, call in mix.cycle():
            if sent >= requests:
                break
            began = time.perf_counter()
            answer = call()
            latencies[route].append((time.perf_counter() - began) * 1000)
            statuses[answer.status_code] += 1
            sent += 1
            if sent % sample_every == 0:
                samples.append((sent, round(rss_mib(moto_pid), 1)))
                print(f"  {sent:>6} requests  moto RSS {samples[-1][1]:>8.1f} MiB", flush=True)
    if samples[-1][0] != sent:
        samples.append((sent, round(rss_mib(moto_pid), 1)))
    return {
        "requests": sent,
        "seconds": round(time.monotonic() - started, 1),
        "statuses": dict(sorted(statuses.items())),
        "motoRssMiB": samples,
        "routes": {
            route: {
                "count": len(values),
                "p50Ms": round(statistics.median(values), 1),
                "p95Ms": round(percentile(values, 0.95), 1),
            }
            for route, values in sorted(latencies.items())
        },
    }


def frozen(mix: Mix, moto_pid: int) -> dict[str, Any]:
    """Each route's answer with moto stopped: its status and how long it took."""
    probes = [("create", mix.create), ("refresh", mix.refresh), ("whoami", mix.whoami)]
    measured: dict[str, Any] = {}
    os.kill(moto_pid, signal.SIGSTOP)
    try:
        for route, call in probes:
            began = time.perf_counter()
            answer = call()
            measured[route] = {
                "status": answer.status_code,
                "seconds": round(time.perf_counter() - began, 2),
            }
    finally:
        os.kill(moto_pid, signal.SIGCONT)
    return measured


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="A bounded mixed load on the local stack.")
    parser.add_argument("--requests", type=int, default=3000)
    parser.add_argument("--max-seconds", type=float, default=600.0)
    parser.add_argument("--sample-every", type=int, default=500)
    parser.add_argument("--no-freeze", dest="freeze", action="store_false")
    args = parser.parse_args(argv)
    if args.requests < 1 or args.sample_every < 1 or args.max_seconds <= 0:
        parser.error("--requests, --sample-every and --max-seconds must be positive")

    with running_stack() as info:
        moto_pid = int(info["motoPid"])
        print(f"local stack on {info['endpoint']}, moto pid {moto_pid}", flush=True)
        with httpx.Client(base_url=info["endpoint"], timeout=30) as http:
            mix = Mix(http, info["idpEndpoint"], info["token"])
            print(f"sending up to {args.requests} requests (at most {args.max_seconds:.0f} s)")
            figures = run(mix, moto_pid, args.requests, args.max_seconds, args.sample_every)
            if args.freeze:
                print("stopping moto (SIGSTOP): time to a 503 per route", flush=True)
                figures["frozen"] = frozen(mix, moto_pid)

    first, last = figures["motoRssMiB"][0][1], figures["motoRssMiB"][-1][1]
    print(
        f"\nmoto RSS: {first:.1f} MiB at start, {last:.1f} MiB after {figures['requests']} requests"
    )
    print(f"{'route':<10}{'count':>7}{'p50 ms':>10}{'p95 ms':>10}")
    for route, numbers in figures["routes"].items():
        print(f"{route:<10}{numbers['count']:>7}{numbers['p50Ms']:>10}{numbers['p95Ms']:>10}")
    print(f"statuses: {figures['statuses']}")
    for route, probe in figures.get("frozen", {}).items():
        print(f"moto frozen: {route} answered {probe['status']} in {probe['seconds']} s")
    print(json.dumps(figures, separators=(",", ":")))
    return 1 if 500 in figures["statuses"] else 0


if __name__ == "__main__":
    sys.exit(main())
