"""A workspace owned by Alice, a GitHub-like workload issuer, and the exchange as a client
sends it (an RFC 8693 form)."""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlencode

import pytest

from chalicelib.logs import logger
from chalicelib.runtime import Services
from chalicelib.workloads.issuers import IssuerKeys
from tests.functional.conftest import Answer, Api
from tests.workload_issuer import AUDIENCE, GITHUB, FakeFetcher, WorkloadIssuer

TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"
JWT_TYPE = "urn:ietf:params:oauth:token-type:jwt"


@pytest.fixture
def issuer() -> WorkloadIssuer:
    return WorkloadIssuer()


@pytest.fixture
def fetcher(services: Services, issuer: WorkloadIssuer) -> FakeFetcher:
    fake = FakeFetcher(issuer)
    # The key cache's clock is the fetcher's `now`, which tests move past the cooldown.
    keys = IssuerKeys(fake, now=lambda: fake.now)  # type: ignore[arg-type]
    vars(services)["workload_issuer_keys"] = keys
    return fake


@pytest.fixture
def workspace(api: Api, alice: str) -> str:
    return api.workspace(alice)


def policy_body(**overrides: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "name": "agents CI",
        "issuer": GITHUB,
        "audience": AUDIENCE,
        "subject": "repo:acme/agents:ref:refs/heads/*",
        "claims": {"repository_owner": "acme"},
        "scopes": ["memory", "entities"],
    }
    body.update(overrides)
    return {name: value for name, value in body.items() if value is not None}


def create_policy(api: Api, owner: str, workspace: str, **overrides: Any) -> Answer:
    return api.call(
        "POST", f"/v1/workspaces/{workspace}/trust-policies", owner, body=policy_body(**overrides)
    )


def exchange(api: Api, subject_token: str, workspace: str | None, **more: str) -> Answer:
    form = {
        "grant_type": TOKEN_EXCHANGE,
        "subject_token": subject_token,
        "subject_token_type": JWT_TYPE,
        **({"workspace_id": workspace} if workspace else {}),
        **more,
    }
    return api.call(
        "POST",
        "/v1/auth/exchange",
        raw=urlencode(form).encode(),
        headers={"Content-Type": "application/x-www-form-urlencoded"},
    )


class LogLines:
    """The service's JSON log lines while a test runs, as Lambda prints them."""

    def __init__(self) -> None:
        self.text = io.StringIO()

    def records(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.text.getvalue().splitlines()]

    def of(self, message: str) -> list[dict[str, Any]]:
        return [record for record in self.records() if record.get("message") == message]


@pytest.fixture
def log_lines() -> Iterator[LogLines]:
    lines = LogLines()
    handler = logging.StreamHandler(lines.text)
    handler.setFormatter(logger.registered_formatter)
    logging.getLogger("memory-auth").addHandler(handler)
    try:
        yield lines
    finally:
        logging.getLogger("memory-auth").removeHandler(handler)
