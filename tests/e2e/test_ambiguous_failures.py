"""A lost answer never logs a user out, never loses a key, never answers 500 (over HTTP).

The scenarios of `tests/retry_scenarios.py` against the local stack, started with
`--faults` (its test-only hook, `local/faults.py`): the test writes a plan naming the AWS
call to fail, the stack's own boto3 clients fail it, and every answer travels over real
HTTP from chalice local's server, with moto as DynamoDB and KMS in its own process.
"""

from __future__ import annotations

import os
import signal
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from local.faults import KINDS, Fault, read_state, write_plan
from local.running import running_stack
from tests.e2e.conftest import Stack
from tests.e2e.test_key_service import sign_in
from tests.retry_scenarios import (
    EXCHANGE,
    KEYS,
    REFRESH,
    SCENARIOS,
    Reply,
    Service,
    every_call,
)


class OverHttp:
    """The `Service` of the scenarios, over HTTP to a stack that follows a fault plan."""

    def __init__(self, stack: Stack, plan: Path):
        self.stack = stack
        self._plan = plan
        self._plan_id = ""

    def call(
        self,
        method: str,
        path: str,
        credential: str | None = None,
        body: Any = None,
        headers: dict[str, str] | None = None,
    ) -> Reply:
        answer = self.stack.call(method, path, credential, body=body, headers=headers or {})
        parsed = answer.json() if answer.content else None
        return Reply(answer.status_code, parsed, dict(answer.headers))

    def arm(self, fault: Fault | None) -> None:
        self._plan_id = uuid.uuid4().hex
        write_plan(self._plan, self._plan_id, fault)

    def _state(self) -> dict[str, Any]:
        state = read_state(self._plan)
        return state if state.get("id") == self._plan_id else {}

    def fired(self) -> bool:
        return bool(self._state().get("fired"))

    def operations(self) -> list[str]:
        return list(self._state().get("operations", []))

    def user_token(self) -> str:
        # A person who signed in (no fault is armed here): only users can join a workspace.
        _, token = sign_in(self.stack, f"retry-{uuid.uuid4().hex[:20]}")
        return token

    def id_token(self, subject: str) -> str:
        answer = httpx.post(self.stack.info["idpEndpoint"] + "/token", json={"sub": subject})
        assert answer.status_code == 200, answer.text
        return str(answer.json()["id_token"])


@pytest.fixture(scope="module")
def service() -> Iterator[OverHttp]:
    with tempfile.TemporaryDirectory() as tmp:
        plan = Path(tmp) / "faults.json"
        write_plan(plan, "none", None)
        with running_stack("--faults", str(plan)) as info:
            yield OverHttp(Stack(info), plan)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_a_failure_at_any_aws_call_ends_as_one_successful_call(
    service: Service, scenario: str, kind: str
) -> None:
    covered = every_call(service, SCENARIOS[scenario], kind)
    assert covered >= 2


@contextmanager
def frozen(pid: int) -> Iterator[None]:
    """moto stopped (SIGSTOP): it still accepts connections, and never answers."""
    os.kill(pid, signal.SIGSTOP)
    try:
        yield
    finally:
        os.kill(pid, signal.SIGCONT)


def test_a_frozen_store_answers_503_and_the_retry_creates_one_key(service: OverHttp) -> None:
    token = service.user_token()
    headers = {"Idempotency-Key": uuid.uuid4().hex}
    with frozen(int(service.stack.info["motoPid"])):
        stalled = service.call("POST", KEYS, token, body={"label": "ci"}, headers=headers)
    retried = service.call("POST", KEYS, token, body={"label": "ci"}, headers=headers)
    assert stalled.status == 503
    assert stalled.body["code"] == "dependency_unavailable"
    assert retried.status == 201
    assert [k["id"] for k in service.call("GET", KEYS, token).body["keys"]] == [retried.body["id"]]


def test_a_frozen_store_answers_refresh_503_and_the_retry_keeps_the_sign_in(
    service: OverHttp,
) -> None:
    pair = service.call("POST", EXCHANGE, body={"id_token": service.id_token("frozen")}).body
    sent = {"refresh_token": pair["refresh_token"]}
    with frozen(int(service.stack.info["motoPid"])):
        stalled = service.call("POST", REFRESH, body=sent)
    retried = service.call("POST", REFRESH, body=sent)
    assert stalled.status == 503
    assert stalled.body["error"] == "temporarily_unavailable"
    assert retried.status == 200
    onward = service.call("POST", REFRESH, body={"refresh_token": retried.body["refresh_token"]})
    assert onward.status == 200
