"""`make test-contract`: schemathesis against the running local stack, with every check on,
once authenticated by an admin key and once by a user token.

Starts the local stack on free loopback ports, creates the admin key with the development
user's token, then runs `schemathesis run <stack>/openapi.json` (settings and per-operation
exceptions in tests/contract/schemathesis.toml) for each credential, printing schemathesis's
own summary: operations, test cases, failures. Exits non-zero when either run fails.

    python -m tests.contract.stage [--max-examples N] [--seed N]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from subprocess import run

import httpx

from local.running import running_stack

HERE = Path(__file__).resolve().parent
CONFIG = HERE / "schemathesis.toml"
SCHEMATHESIS = Path(sys.executable).parent / "schemathesis"


def create_key(endpoint: str, token: str, **fields: str) -> dict[str, str]:
    answer = httpx.post(
        f"{endpoint}/v1/auth/api-keys",
        headers={"Authorization": f"Bearer {token}"},
        json={"label": "contract tests", **fields},
        timeout=60,
    )
    answer.raise_for_status()
    return dict(answer.json())


def schemathesis(
    endpoint: str, credential: str, max_examples: int, seed: int, env: dict[str, str]
) -> int:
    command = [
        str(SCHEMATHESIS), "--no-color", "--config-file", str(CONFIG), "run",
        f"{endpoint}/openapi.json",
        "--url", endpoint,
        "--max-examples", str(max_examples),
        "--seed", str(seed),
        "--workers", "1",
        "--request-timeout", "30",
        "--header", f"Authorization: Bearer {credential}",
    ]
    # A fixed argument list, no shell.
    return run(command, check=False, env={**os.environ, **env}).returncode  # noqa: S603


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-examples", type=int, default=12)
    parser.add_argument("--seed", type=int, default=16)
    args = parser.parse_args(argv)
    failed = []
    with running_stack() as info:
        endpoint, token = info["endpoint"], info["token"]
        admin = create_key(endpoint, token)["key"]
        target = create_key(endpoint, token, category="workspace", workspaceId=info["workspaceId"])
        identifiers = {
            "CONTRACT_WORKSPACE_ID": info["workspaceId"],
            "CONTRACT_KEY_ID": target["id"],
            "CONTRACT_USER_ID": info["userId"],
        }
        for name, credential in {"admin key": admin, "user token": token}.items():
            print(f"==> schemathesis, authenticated by an {name}", flush=True)
            started = time.monotonic()
            code = schemathesis(endpoint, credential, args.max_examples, args.seed, identifiers)
            print(f"==> {name}: exit {code} in {time.monotonic() - started:.0f} s", flush=True)
            if code != 0:
                failed.append(name)
    if failed:
        print(f"schemathesis found failures (authenticated by: {', '.join(failed)})")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
