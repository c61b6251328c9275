"""`make test-contract`: schemathesis against the running local stack, with every check on,
once authenticated by an admin key and once by a user token.

Starts the local stack on free loopback ports, creates the admin key with the development
user's token, then runs `schemathesis run <stack>/openapi.json` (settings and per-operation
exceptions in tests/contract/schemathesis.toml) for each credential, printing schemathesis's
own summary: operations, test cases, failures. Exits non-zero when either run fails.

    python -m tests.contract.stage [--credential admin|user] [--max-examples N] [--seed N]

`--credential` runs one of the two (on a stack of its own): `make test` runs them side by side.
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
PROJECT = HERE.parent.parent
HOOKS = "tests.contract.hooks"
REDIRECT_URI = "http://127.0.0.1:9/callback"  # never followed: the run stops at the sign-in
SESSION_ID = "01JD7Q2X9V3K5M8N1P4R6T0W2Y"  # a sign-in's id to generate with (hooks.py swaps it)
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


def add_member(endpoint: str, idp: str, owner_token: str, workspace_id: str) -> str:
    """A second user (signed in once at the development issuer), made a member."""
    id_token = httpx.post(f"{idp}/token", json={"sub": "contract-member"}, timeout=60).json()
    pair = httpx.post(
        f"{endpoint}/v1/auth/exchange", json={"id_token": id_token["id_token"]}, timeout=60
    ).json()
    who = httpx.get(
        f"{endpoint}/v1/auth/whoami",
        headers={"Authorization": f"Bearer {pair['access_token']}"},
        timeout=60,
    ).json()
    answer = httpx.put(
        f"{endpoint}/v1/workspaces/{workspace_id}/members/{who['userId']}",
        headers={"Authorization": f"Bearer {owner_token}"},
        timeout=60,
    )
    answer.raise_for_status()
    return str(who["userId"])


def register_client(endpoint: str) -> str:
    answer = httpx.post(
        f"{endpoint}/v1/oauth/register",
        json={"redirect_uris": [REDIRECT_URI], "client_name": "contract tests"},
        timeout=60,
    )
    answer.raise_for_status()
    return str(answer.json()["client_id"])


def schemathesis(
    endpoint: str, credential: str, max_examples: int, seed: int, env: dict[str, str]
) -> int:
    """One run, with `credential` where the document asks for one (`[auth.openapi.*]` in
    schemathesis.toml): the public endpoints get none, as their clients send none."""
    command = [
        str(SCHEMATHESIS), "--no-color", "--config-file", str(CONFIG), "run",
        f"{endpoint}/openapi.json",
        "--url", endpoint,
        "--max-examples", str(max_examples),
        "--seed", str(seed),
        "--workers", "1",
        "--request-timeout", "30",
    ]
    env = {**os.environ, **env, "CONTRACT_CREDENTIAL": credential, "SCHEMATHESIS_HOOKS": HOOKS}
    # A fixed argument list, no shell.
    return run(command, check=False, env=env, cwd=PROJECT).returncode  # noqa: S603


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-examples", type=int, default=12)
    parser.add_argument("--seed", type=int, default=16)
    parser.add_argument(
        "--credential", choices=("admin", "user"), help="run only this credential's pass"
    )
    args = parser.parse_args(argv)
    failed = []
    with running_stack() as info:
        endpoint, token = info["endpoint"], info["token"]
        admin = create_key(endpoint, token)["key"]
        # One key per operation that changes it: a key the run revoked or rotated is rightly
        # 409 or 410 for the next, and would leave the others nothing valid to accept.
        keys = {
            name: create_key(
                endpoint, token, category="workspace", workspaceId=info["workspaceId"]
            )["id"]
            for name in ("KEY", "ROTATED_KEY", "UPDATED_KEY", "REVOKED_KEY")
        }
        identifiers = {
            "CONTRACT_WORKSPACE_ID": info["workspaceId"],
            "CONTRACT_USER_ID": info["userId"],
            "CONTRACT_SCAN_SIGNER": info["scanSignerEndpoint"],
            "CONTRACT_CLIENT_ID": register_client(endpoint),
            "CONTRACT_MEMBER_ID": add_member(
                endpoint, info["idpEndpoint"], token, info["workspaceId"]
            ),
            "CONTRACT_REDIRECT_URI": REDIRECT_URI,
            "CONTRACT_RESOURCE": info["mcpResource"],
            "CONTRACT_IDP": info["idpEndpoint"],
            "CONTRACT_ENDPOINT": endpoint,
            "CONTRACT_SESSION_ID": SESSION_ID,
            **{f"CONTRACT_{name}_ID": key_id for name, key_id in keys.items()},
        }
        credentials = {"admin": ("admin key", admin), "user": ("user token", token)}
        chosen = [args.credential] if args.credential else list(credentials)
        for name, credential in (credentials[choice] for choice in chosen):
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
