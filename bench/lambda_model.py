"""What a CPU time measured here means inside Lambda, and what it costs there.

Lambda gives a function CPU in proportion to its memory: a full vCPU at 1,769 MB, 1/14 of
one at the default 128 MB. Our code is single-threaded, so above 1,769 MB it runs no faster.
The model, used by `make bench` and the README's sizing table:

- CPU-bound time at M MB = the time measured on one core here × max(1, 1769 / M)
  (a Lambda vCPU taken as equal to one core of the machine the benchmark ran on);
- time spent waiting (on DynamoDB, on the disk) does not scale with memory;
- billed duration = that time rounded up to the millisecond, × M / 1024 GB;
- the sizing rule (`sized`): the smallest of 128, 256, 512, 1,024 and 1,769 MB at which a
  request takes at most 1.5 times as long as on a full core.

Prices: AWS Lambda, x86, us-east-1, list prices as published in 2026 (AWS Lambda pricing
page); they move rarely, and the README's table says which ones it used.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

PROJECT_DIR = Path(__file__).resolve().parent.parent
FULL_CORE_MB = 1769
# Chalice's names of the two functions in .chalice/config.json "lambda_functions".
FUNCTIONS = {"authorizer": "authorizer", "apiHandler": "api_handler"}
DEFAULT_MEMORY_MB = 128  # Lambda's (and Chalice's) default when none is configured

PRICE_PER_GB_SECOND = 0.0000166667
PRICE_PER_REQUEST = 0.20 / 1_000_000
SNAPSTART_CACHE_PER_GB_SECOND = 0.0000015046  # per published version, while it is active
SNAPSTART_RESTORE_PER_GB = 0.0001397998  # per restored execution environment


def cpu_factor(memory_mb: int) -> float:
    """How much longer CPU-bound work takes at `memory_mb` than on a full core."""
    return max(1.0, FULL_CORE_MB / memory_mb)


def on_lambda(cpu_seconds: float, wait_seconds: float, memory_mb: int) -> float:
    """Seconds that work measured here (CPU, and waiting) takes in a function of `memory_mb`."""
    return cpu_seconds * cpu_factor(memory_mb) + wait_seconds


# The sizes the sizing rule picks from: powers of two, and the size of one full core.
SIZES_MB = (128, 256, 512, 1024, FULL_CORE_MB)
# How much slower than on a full core a function may be at the size the rule picks.
WITHIN_FULL_CORE = 1.5


def sized(cpu_seconds: float, wait_seconds: float) -> int:
    """The sizing rule: the smallest size at which work of `cpu_seconds` plus `wait_seconds`
    takes at most WITHIN_FULL_CORE times as long as on a full core. Below it, our own CPU
    time rather than the store sets the latency; above it, each doubling of the price buys
    less than the store's own latency."""
    fastest = cpu_seconds + wait_seconds
    for memory_mb in SIZES_MB:
        if on_lambda(cpu_seconds, wait_seconds, memory_mb) <= WITHIN_FULL_CORE * fastest:
            return memory_mb
    return FULL_CORE_MB


def cpu_band(memory_mb: int, wait_seconds: float) -> tuple[float, float]:
    """The CPU times per request (seconds, with `wait_seconds` of waiting) for which the rule
    gives `memory_mb`: above the first bound the next smaller size is too slow, up to the
    second this one is fast enough (`math.inf` for the largest size)."""

    def fast_enough_up_to(size: int) -> float:
        # on_lambda(cpu, wait, size) <= WITHIN_FULL_CORE * (cpu + wait), solved for cpu.
        excess = cpu_factor(size) - WITHIN_FULL_CORE
        return math.inf if excess <= 0 else (WITHIN_FULL_CORE - 1) * wait_seconds / excess

    index = SIZES_MB.index(memory_mb)
    low = 0.0 if index == 0 else fast_enough_up_to(SIZES_MB[index - 1])
    return low, fast_enough_up_to(memory_mb)


def cost_per_million(duration_seconds: float, memory_mb: int) -> float:
    """US dollars for a million invocations of `duration_seconds` each, requests included."""
    billed = math.ceil(duration_seconds * 1000) / 1000
    return 1_000_000 * (billed * memory_mb / 1024 * PRICE_PER_GB_SECOND + PRICE_PER_REQUEST)


def packaged_memory(config_path: Path = PROJECT_DIR / ".chalice" / "config.json") -> dict[str, int]:
    """Each function's memory as `chalice package` writes it into the template."""
    config = json.loads(config_path.read_text())
    functions = config.get("lambda_functions", {})
    default = config.get("lambda_memory_size", DEFAULT_MEMORY_MB)
    return {
        name: int(functions.get(chalice_name, {}).get("lambda_memory_size", default))
        for name, chalice_name in FUNCTIONS.items()
    }
