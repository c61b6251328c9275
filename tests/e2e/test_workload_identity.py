"""Workload identity over real HTTP against the local stack: a trust policy naming the
development OpenID provider, a workload token minted there, the exchange, the runnable
example (examples/workload-identity/ci_job.py), the data-plane authorizer, and a deleted
policy refusing on the next request."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest

from infra.template import PROJECT_DIR, stage_environment
from tests.e2e.conftest import Stack
from tests.fixtures.events import bearer, request_event

AUDIENCE = "memory-service"
SUBJECT = "repo:acme/agents:ref:refs/heads/main"
EXAMPLE = PROJECT_DIR / "examples" / "workload-identity" / "ci_job.py"


def workload_token(stack: Stack, subject: str = SUBJECT, **claims: str) -> str:
    answer = httpx.post(
        stack.info["idpEndpoint"] + "/workload-token",
        json={"sub": subject, "aud": AUDIENCE, "claims": claims},
        timeout=10,
    )
    assert answer.status_code == 200, answer.text
    return str(answer.json()["token"])


def exchange(stack: Stack, subject_token: str) -> httpx.Response:
    return stack.http.post(
        "/v1/auth/exchange",
        data={
            "grant_type": "urn:ietf:params:oauth:grant-type:token-exchange",
            "subject_token": subject_token,
            "subject_token_type": "urn:ietf:params:oauth:token-type:jwt",
            "workspace_id": stack.workspace_id,
        },
    )


@pytest.fixture(scope="module")
def policy(stack: Stack) -> dict[str, Any]:
    answer = stack.call(
        "POST",
        f"/v1/workspaces/{stack.workspace_id}/trust-policies",
        stack.token,
        body={
            "name": "agents CI",
            "issuer": stack.info["idpEndpoint"],  # loopback http: accepted in local mode only
            "audience": AUDIENCE,
            "subject": "repo:acme/agents:ref:refs/heads/*",
            "claims": {"repository_owner": "acme"},
            "scopes": ["memory"],
        },
    )
    assert answer.status_code == 201, answer.text
    return dict(answer.json())


def authorize(stack: Stack, token: str, path: str) -> dict[str, Any]:
    """The data-plane authorizer's decision, made in this process on the stack's store."""
    from chalicelib.config import Settings
    from chalicelib.decisions.authorizer import authorize as decide
    from chalicelib.runtime import Services

    env = {**stage_environment("dev"), "TOKEN_ISSUER": stack.endpoint, "TRUSTED_ISSUERS": ""}
    previous = os.environ.get("AWS_ENDPOINT_URL")
    os.environ["AWS_ENDPOINT_URL"] = stack.info["motoEndpoint"]
    try:
        services = Services(Settings.from_env(env))
        event = request_event(path, bearer(token), stack.workspace_id)
        return dict(decide(event, services.resolver, ()))
    finally:
        if previous is None:
            os.environ.pop("AWS_ENDPOINT_URL", None)
        else:
            os.environ["AWS_ENDPOINT_URL"] = previous


def test_a_workload_token_of_the_development_provider_is_exchanged_and_used(
    stack: Stack, policy: dict[str, Any]
) -> None:
    exchanged = exchange(stack, workload_token(stack, repository_owner="acme"))
    token = exchanged.json()["access_token"]
    whoami = stack.call("GET", "/v1/auth/whoami", token)
    allowed = authorize(stack, token, "/v1/memory/items")
    other_scope = authorize(stack, token, "/v1/skills/items")

    assert exchanged.status_code == 200, exchanged.text
    assert exchanged.headers["cache-control"] == "no-store"
    assert exchanged.json()["scope"] == "memory"
    assert whoami.json()["credential"] == "workload"
    assert whoami.json()["workspaceId"] == stack.workspace_id
    assert allowed["policyDocument"]["Statement"][0]["Effect"] == "Allow"
    assert allowed["context"]["credential"] == "workload"
    assert other_scope["policyDocument"]["Statement"][0]["Effect"] == "Deny"


def test_a_token_matching_no_policy_is_refused(stack: Stack, policy: dict[str, Any]) -> None:
    answer = exchange(stack, workload_token(stack, "repo:evil/agents:ref:refs/heads/main"))

    assert answer.status_code == 400
    assert answer.json() == {
        "error": "invalid_grant",
        "error_description": "no trust policy of this workspace accepts this token",
    }


def test_the_example_ci_job_runs_with_workload_identity(
    stack: Stack, policy: dict[str, Any], tmp_path: Path
) -> None:
    token_file = tmp_path / "oidc-token"
    token_file.write_text(workload_token(stack, repository_owner="acme"))
    env = {
        **os.environ,
        "MEMORY_ENDPOINT": stack.endpoint,
        "MEMORY_WORKSPACE_ID": stack.workspace_id,
        "MEMORY_OIDC_TOKEN_FILE": str(token_file),
        "PYTHONPATH": str(PROJECT_DIR / "sdks" / "python" / "src"),
    }

    run = subprocess.run(
        [sys.executable, str(EXAMPLE)], env=env, capture_output=True, text=True, timeout=120
    )

    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout) == {
        "credential": "workload",
        "workspaceId": stack.workspace_id,
        "scopes": ["memory"],
    }


def test_deleting_the_policy_refuses_its_tokens_on_the_next_request(stack: Stack) -> None:
    created = stack.call(
        "POST",
        f"/v1/workspaces/{stack.workspace_id}/trust-policies",
        stack.token,
        body={
            "name": "short-lived",
            "issuer": stack.info["idpEndpoint"],
            "audience": AUDIENCE,
            "subject": "repo:acme/tools:ref:refs/heads/main",
            "scopes": ["entities"],
        },
    ).json()
    token = exchange(stack, workload_token(stack, "repo:acme/tools:ref:refs/heads/main")).json()[
        "access_token"
    ]
    before = stack.call("GET", "/v1/auth/whoami", token)
    stack.call(
        "DELETE", f"/v1/workspaces/{stack.workspace_id}/trust-policies/{created['id']}", stack.token
    )

    after = stack.call("GET", "/v1/auth/whoami", token)

    assert before.status_code == 200
    assert (after.status_code, after.json()["code"]) == (401, "revoked_credentials")


def test_the_banners_workload_commands_work_as_printed(stack: Stack) -> None:
    from local.stack import banner

    text = banner(stack.info)
    commands = text.split("token there, exchange it (docs/guides/workload-identity.md):\n\n", 1)[
        1
    ].split("\n\n", 1)[0]
    script = f"set -eo pipefail\nexport MEMORY_LOCAL_TOKEN='{stack.token}'\n{commands}"

    result = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=60)

    assert result.returncode == 0, result.stderr
    # Each answer on a line of its own (the commands end curl's output with a newline).
    printed = [json.loads(line) for line in result.stdout.splitlines() if line.strip()]
    created, exchanged = printed
    assert created["issuer"] == stack.info["idpEndpoint"]
    assert exchanged["token_type"] == "Bearer"
    assert exchanged["scope"] == "memory"
