"""Fail closed, end to end: the local stack's DynamoDB and KMS stand-in (moto) is frozen
mid-run with SIGSTOP. Every request that needs it answers 503 `dependency_unavailable` within
the AWS clients' documented timeouts (README, "Timeouts") and never succeeds; the data-plane
authorizer raises and never answers Allow. After SIGCONT the service answers again.

The stack here is this module's own: freezing the session's stack would stall other tests.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import pytest

from local.running import running_stack
from tests.e2e.conftest import Stack
from tests.fixtures.events import bearer, request_event

KEYS = "/v1/auth/api-keys"
WHOAMI = "/v1/auth/whoami"
# Headroom for a 2-core machine shared with other test runs: the budget below is what the
# clients may take by their configuration; this is only scheduling slack on top of it.
SCHEDULING_SLACK_SECONDS = 10.0


def dependency_budget_seconds() -> float:
    """The longest one failing AWS call may take, from the service's own client config:
    every attempt waiting out its connect and read timeouts, plus the longest backoffs."""
    from chalicelib.runtime import aws_client

    config = aws_client("dynamodb", "us-east-1").meta.config
    retries = config.retries or {}
    attempts = retries.get("total_max_attempts") or retries.get("max_attempts", 4) + 1
    per_attempt = float(config.connect_timeout) + float(config.read_timeout)
    # botocore's standard mode waits at most min(20 s, 2**n) before retry n (n from 0).
    backoff = sum(min(20.0, 2.0**n) for n in range(attempts - 1))
    return attempts * per_attempt + backoff


@pytest.fixture(scope="module")
def own_stack() -> Iterator[Stack]:
    with running_stack() as info:
        try:
            yield Stack(info)
        finally:
            os.kill(info["motoPid"], signal.SIGCONT)  # never leave it frozen


class Fixture:
    """What the requests use: made while moto is up."""

    def __init__(self, stack: Stack):
        self.stack = stack
        created = stack.call("POST", KEYS, stack.token, body={"label": "fault admin"})
        self.admin = created.json()
        bound = stack.call(
            "POST",
            KEYS,
            stack.token,
            body={"label": "fault ws", "category": "workspace", "workspaceId": stack.workspace_id},
        )
        self.workspace_key = bound.json()
        assert created.status_code == bound.status_code == 201


def authenticated_requests(f: Fixture) -> dict[str, Callable[[httpx.Client], httpx.Response]]:
    token, ws = f.stack.token, f.stack.workspace_id
    auth = {"Authorization": bearer(token)}
    key_id = f.admin["id"]
    return {
        "whoami, admin key": lambda c: c.get(
            WHOAMI, headers={"Authorization": bearer(f.admin["key"])}
        ),
        "whoami, workspace key": lambda c: c.get(
            WHOAMI, headers={"Authorization": bearer(f.workspace_key["key"])}
        ),
        "whoami, user token + workspace": lambda c: c.get(
            WHOAMI, headers={**auth, "X-Workspace-Id": ws}
        ),
        "list keys": lambda c: c.get(KEYS, headers=auth),
        "list keys, admin key": lambda c: c.get(
            KEYS, headers={"Authorization": bearer(f.admin["key"])}
        ),
        "create key": lambda c: c.post(KEYS, headers=auth, json={"label": "during the fault"}),
        "get key": lambda c: c.get(f"{KEYS}/{key_id}", headers=auth),
        "reveal key": lambda c: c.get(f"{KEYS}/{key_id}/reveal", headers=auth),
        "rotate key": lambda c: c.post(f"{KEYS}/{key_id}/rotate", headers=auth),
        "revoke key": lambda c: c.delete(f"{KEYS}/{key_id}", headers=auth),
        "list workspaces": lambda c: c.get("/v1/workspaces", headers=auth),
        "create workspace": lambda c: c.post("/v1/workspaces", headers=auth, json={"name": "x"}),
        "members": lambda c: c.get(f"/v1/workspaces/{ws}/members", headers=auth),
    }
    # Not here: whoami with a user token and no workspace. It needs no dependency (the
    # token's signature is checked with the public key the process already holds), so its
    # 200 is right; the workspace variant above does need a read.


def data_plane_authorizer(stack: Stack, monkeypatch: pytest.MonkeyPatch) -> Any:
    """The authorizer's decision function, in this process, on the stack's moto."""
    from chalicelib.config import Settings
    from chalicelib.decisions import authorizer
    from chalicelib.runtime import Services
    from local.stack import stage_environment

    monkeypatch.setenv("AWS_ENDPOINT_URL", stack.info["motoEndpoint"])
    env = {**stage_environment("dev"), "TOKEN_ISSUER": stack.endpoint, "TRUSTED_ISSUERS": ""}
    services = Services(Settings.from_env(env))
    services.signing_keys.jwks()  # a warm container: the public key is already fetched

    def decide(credential: str, workspace: str | None) -> dict[str, Any]:
        event = request_event("/v1/memory/items", bearer(credential), workspace)
        return authorizer.authorize(event, services.resolver)

    return decide


def test_a_frozen_dependency_gives_503_never_a_success_then_the_service_recovers(
    own_stack: Stack, monkeypatch: pytest.MonkeyPatch
) -> None:
    from chalicelib.errors import DependencyUnavailable

    f = Fixture(own_stack)
    requests = authenticated_requests(f)
    decide = data_plane_authorizer(own_stack, monkeypatch)
    decisions = {
        "authorizer, workspace key": (f.workspace_key["key"], None),
        "authorizer, admin key + workspace": (f.admin["key"], own_stack.workspace_id),
        "authorizer, user token + workspace": (own_stack.token, own_stack.workspace_id),
    }
    assert all(decide(*d)["policyDocument"]["Statement"][0]["Effect"] == "Allow"
               for d in decisions.values())
    # The client gives up at the budget: an answer at all means it came within it.
    timeout = dependency_budget_seconds() + SCHEDULING_SLACK_SECONDS
    moto = own_stack.info["motoPid"]

    def send(name: str) -> httpx.Response:
        with httpx.Client(base_url=own_stack.endpoint, timeout=timeout) as client:
            return requests[name](client)

    def decide_safely(name: str) -> object:
        try:
            return decide(*decisions[name])
        except Exception as raised:  # what API Gateway sees: the authorizer failed
            return raised

    os.kill(moto, signal.SIGSTOP)
    try:
        with ThreadPoolExecutor(max_workers=len(requests) + len(decisions)) as pool:
            answers = dict(zip(requests, pool.map(send, requests), strict=True))
            outcomes = dict(zip(decisions, pool.map(decide_safely, decisions), strict=True))
    finally:
        os.kill(moto, signal.SIGCONT)

    refused = {name: (a.status_code, a.json().get("code")) for name, a in answers.items()}
    assert refused == {name: (503, "dependency_unavailable") for name in requests}
    assert all(a.headers["Content-Type"] == "application/problem+json" for a in answers.values())
    assert {name: type(o) for name, o in outcomes.items()} == {
        name: DependencyUnavailable for name in decisions
    }

    with httpx.Client(base_url=own_stack.endpoint, timeout=timeout) as client:
        after = client.get(WHOAMI, headers={"Authorization": bearer(f.workspace_key["key"])})
        listed = client.get(KEYS, headers={"Authorization": bearer(own_stack.token)})
    assert (after.status_code, listed.status_code) == (200, 200)
    assert decide(f.workspace_key["key"], None)["policyDocument"]["Statement"][0]["Effect"] == (
        "Allow"
    )


def test_a_frozen_dependency_gives_the_token_endpoints_503_temporarily_unavailable(
    own_stack: Stack,
) -> None:
    timeout = dependency_budget_seconds() + SCHEDULING_SLACK_SECONDS
    moto = own_stack.info["motoPid"]

    os.kill(moto, signal.SIGSTOP)
    try:
        with httpx.Client(base_url=own_stack.endpoint, timeout=timeout) as client:
            answer = client.post("/v1/auth/refresh", json={"refresh_token": "rt_" + "a" * 43})
    finally:
        os.kill(moto, signal.SIGCONT)

    assert answer.status_code == 503
    assert answer.json()["error"] == "temporarily_unavailable"
