"""`make test`'s tiers that drive a running stack or a browser, in two lanes side by side.

The lint, unit and functional tiers run first (the functional one on every core, with
pytest-xdist). Each tier after them starts its own local stack on free ports, or a browser,
and spends most of its time waiting on one: about one core each. One after another they left
the second core idle for ten minutes, so here they run in two lanes at once. A lane runs its
tiers in order and stops at its first failure; the other lane runs on. Every line a tier prints
is prefixed with the tier's name, and a table at the end says how long each took.

Tiers that share a build stay in one lane: the TypeScript SDK's tests rebuild the SDK's dist/,
which the dashboard bundles, so both are in the second lane, after the infrastructure tests
(which package the dashboard's build). `make test` builds the shared parts first (the
virtualenv, the dashboard, Chromium).

    python -m tests.lanes [--serial]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

PROJECT = Path(__file__).resolve().parent.parent
MAKE = os.environ.get("MAKE", "make")


@dataclass(frozen=True)
class Tier:
    name: str
    command: tuple[str, ...]


def make(target: str, *variables: str) -> tuple[str, ...]:
    return (MAKE, "--no-print-directory", target, *variables)


def contract(credential: str) -> tuple[str, ...]:
    return make("test-contract", f"ARGS=--credential {credential}")


# About eight minutes each on the 2-core machine (docs/development.md, "Test time").
LANES: tuple[tuple[Tier, ...], ...] = (
    (
        Tier("contract (user token)", contract("user")),
        Tier("e2e", make("test-e2e")),
        Tier("sdk-python", make("test-sdk-python")),
    ),
    (
        Tier("contract (admin key)", contract("admin")),
        Tier("infra", make("test-infra")),
        Tier("sdk-typescript", make("test-sdk-typescript")),
        Tier("dashboard", make("test-dashboard")),
        Tier("docs", make("docs")),
    ),
)


@dataclass
class Outcome:
    tier: Tier
    code: int | None = None  # None: not run, an earlier tier of its lane failed
    seconds: float = 0.0
    cpu_seconds: float = 0.0  # user + system, the tier's processes and every one they waited for


@dataclass
class Run:
    lanes: list[list[Outcome]]
    lock: threading.Lock = field(default_factory=threading.Lock)

    def say(self, tier: Tier, line: str) -> None:
        with self.lock:
            sys.stdout.write(f"[{tier.name}] {line}")
            if not line.endswith("\n"):
                sys.stdout.write("\n")
            sys.stdout.flush()

    def lane(self, outcomes: list[Outcome]) -> None:
        for outcome in outcomes:
            started = time.monotonic()
            self.say(outcome.tier, "started")
            outcome.code, outcome.cpu_seconds = self.tier(outcome.tier)
            outcome.seconds = time.monotonic() - started
            self.say(outcome.tier, f"exit {outcome.code} in {outcome.seconds:.0f} s")
            if outcome.code != 0:
                return

    def tier(self, tier: Tier) -> tuple[int, float]:
        # Our own make targets, a fixed argument list, no shell.
        process = subprocess.Popen(  # noqa: S603
            tier.command,
            cwd=PROJECT,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            text=True,
            errors="replace",
            bufsize=1,
        )
        assert process.stdout is not None
        for line in process.stdout:
            self.say(tier, line)
        _, status, usage = os.wait4(process.pid, 0)
        process.returncode = os.waitstatus_to_exitcode(status)
        return process.returncode, usage.ru_utime + usage.ru_stime


def summary(outcomes: list[Outcome], wall: float) -> str:
    width = max(len(outcome.tier.name) for outcome in outcomes)
    lines = ["", "==> where the time went (lanes side by side unless --serial)"]
    for outcome in outcomes:
        if outcome.code is None:
            result = "not run (an earlier tier of its lane failed)"
        else:
            result = "ok" if outcome.code == 0 else f"FAILED (exit {outcome.code})"
        lines.append(
            f"  {outcome.tier.name:<{width}}  {outcome.seconds:5.0f} s  "
            f"cpu {outcome.cpu_seconds:5.0f} s  {result}"
        )
    cpu = sum(outcome.cpu_seconds for outcome in outcomes)
    lines.append(f"  {'wall':<{width}}  {wall:5.0f} s  cpu {cpu:5.0f} s")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--serial", action="store_true", help="one lane after the other (to time each alone)"
    )
    args = parser.parse_args(argv)
    run = Run([[Outcome(tier) for tier in tiers] for tiers in LANES])
    started = time.monotonic()
    if args.serial:
        for outcomes in run.lanes:
            run.lane(outcomes)
    else:
        threads = [threading.Thread(target=run.lane, args=(lane,)) for lane in run.lanes]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    outcomes = [outcome for lane in run.lanes for outcome in lane]
    print(summary(outcomes, time.monotonic() - started), flush=True)
    return 0 if all(outcome.code == 0 for outcome in outcomes) else 1


if __name__ == "__main__":
    sys.exit(main())
