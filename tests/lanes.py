"""`make test`'s tiers, run side by side where they can be, with where the time went.

On the 2-core machine, one tier after another left a core idle most of the time: lint and
the unit tests use one core each, and each tier that starts a local stack or a browser (the
end-to-end, contract, SDK and browser tests) spends much of its time waiting on it. So the
tiers run in three phases, and in each phase in lanes side by side:

1. lint beside the unit tests;
2. the functional tests alone (they use every core, with pytest-xdist);
3. the tiers that drive a stack or a browser, in three lanes.

A lane runs its tiers in order and stops at its first failure; the other lanes run on, and a
phase starts when the one before it ended without a failure. Every line a tier prints is
prefixed with the tier's name, and a table at the end gives each tier's wall and CPU time.

Two tiers must not build the same thing at once: the TypeScript SDK's tests rebuild the SDK's
dist/ (and reinstall its node_modules), which the dashboard bundles, so the infrastructure
tests (they package the dashboard's build) follow them in their lane, and the dashboard's
tests wait for them (`after`). `make test` builds what is shared first (the virtualenv, the
dashboard, Chromium, the Python SDK's editable install).

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
    after: str | None = None  # a tier of another lane that must have passed first


def make(target: str, *variables: str) -> tuple[str, ...]:
    return (MAKE, "--no-print-directory", target, *variables)


def contract(credential: str) -> tuple[str, ...]:
    return make("test-contract", f"ARGS=--credential {credential}")


Lane = tuple[Tier, ...]
PHASES: tuple[tuple[Lane, ...], ...] = (
    ((Tier("lint", make("lint")),), (Tier("unit", make("test-unit")),)),
    ((Tier("functional", make("test-functional")),),),
    (
        (
            Tier("e2e", make("test-e2e")),
            Tier("sdk-python", make("test-sdk-python")),
            Tier("docs", make("docs")),
        ),
        (
            Tier("sdk-typescript", make("test-sdk-typescript")),
            Tier("contract (admin key)", contract("admin")),
            Tier("infra", make("test-infra")),
        ),
        (
            Tier("contract (user token)", contract("user")),
            Tier("interop", make("test-interop")),
            Tier("dashboard", make("test-dashboard"), after="sdk-typescript"),
        ),
    ),
)


@dataclass
class Outcome:
    tier: Tier
    code: int | None = None  # None: not run
    seconds: float = 0.0
    cpu_seconds: float = 0.0  # user + system, the tier's processes and all they waited for
    done: threading.Event = field(default_factory=threading.Event)


@dataclass
class Run:
    outcomes: dict[str, Outcome]
    lock: threading.Lock = field(default_factory=threading.Lock)

    def say(self, tier: Tier, line: str) -> None:
        with self.lock:
            sys.stdout.write(f"[{tier.name}] {line}")
            if not line.endswith("\n"):
                sys.stdout.write("\n")
            sys.stdout.flush()

    def lane(self, lane: Lane) -> None:
        try:
            for tier in lane:
                if not self.ready(tier):
                    return
                outcome = self.outcomes[tier.name]
                started = time.monotonic()
                self.say(tier, "started")
                outcome.code, outcome.cpu_seconds = self.tier(tier)
                outcome.seconds = time.monotonic() - started
                self.say(tier, f"exit {outcome.code} in {outcome.seconds:.0f} s")
                outcome.done.set()
                if outcome.code != 0:
                    return
        finally:
            for tier in lane:  # the tiers a failure left unrun: nobody waits for them
                self.outcomes[tier.name].done.set()

    def ready(self, tier: Tier) -> bool:
        if tier.after is None:
            return True
        before = self.outcomes[tier.after]
        before.done.wait()
        return before.code == 0

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

    def phase(self, lanes: tuple[Lane, ...], serial: bool) -> None:
        if serial:
            for lane in lanes:
                self.lane(lane)
            return
        threads = [threading.Thread(target=self.lane, args=(lane,)) for lane in lanes]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()


def summary(outcomes: list[Outcome], wall: float) -> str:
    width = max(len(outcome.tier.name) for outcome in outcomes)
    lines = ["", "==> where the time went (wall, and CPU of all the tier's processes)"]
    for outcome in outcomes:
        if outcome.code is None:
            result = "not run (a tier before it failed)"
        else:
            result = "ok" if outcome.code == 0 else f"FAILED (exit {outcome.code})"
        lines.append(
            f"  {outcome.tier.name:<{width}}  {outcome.seconds:5.0f} s  "
            f"cpu {outcome.cpu_seconds:5.0f} s  {result}"
        )
    cpu = sum(outcome.cpu_seconds for outcome in outcomes)
    lines.append(f"  {'all':<{width}}  {wall:5.0f} s  cpu {cpu:5.0f} s")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--serial", action="store_true", help="every tier after the other (to time each alone)"
    )
    args = parser.parse_args(argv)
    tiers = [tier for lanes in PHASES for lane in lanes for tier in lane]
    run = Run({tier.name: Outcome(tier) for tier in tiers})
    started = time.monotonic()
    for lanes in PHASES:
        run.phase(lanes, args.serial)
        if any(run.outcomes[t.name].code != 0 for lane in lanes for t in lane):
            break
    outcomes = list(run.outcomes.values())
    print(summary(outcomes, time.monotonic() - started), flush=True)
    return 0 if all(outcome.code == 0 for outcome in outcomes) else 1


if __name__ == "__main__":
    sys.exit(main())
