"""Answers lost after the service wrote, over real HTTP: the SDK re-sends, one call results.

A stack of its own, started with the repository's test-only `--faults` hook (local/faults.py):
its DynamoDB transaction is applied, then the answer is lost, so the service answers 503.
The client re-sends as `memory_sdk.retry` says (the same Idempotency-Key, the same refresh
token), and the end state is that of one successful call.
"""

from __future__ import annotations

import contextlib
import json
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from memory_sdk import MemoryClient
from tests.e2e.conftest import _local_stack, digest

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

LOST_WRITE = {"call": 0, "kind": "lost", "operation": "dynamodb.TransactWriteItems"}


@dataclass(frozen=True)
class FaultyStack:
    endpoint: str
    ready: dict[str, Any]
    plan: Path

    def arm(self, fault: dict[str, Any] | None) -> None:
        """The plan file the stack reads before each AWS call: a new id arms afresh."""
        temporary = self.plan.with_name(self.plan.name + ".tmp")
        temporary.write_text(json.dumps({"id": uuid.uuid4().hex, **(fault or {})}))
        temporary.replace(self.plan)

    @contextlib.contextmanager
    def failing(self, fault: dict[str, Any]) -> Iterator[None]:
        self.arm(fault)
        try:
            yield
        finally:
            self.arm(None)


@pytest.fixture(scope="module")
def faulty(tmp_path_factory: pytest.TempPathFactory) -> Iterator[FaultyStack]:
    plan = tmp_path_factory.mktemp("faults") / "plan.json"
    plan.write_text(json.dumps({"id": "none"}))
    local = _local_stack()
    with local.running_stack("--faults", str(plan)) as ready:
        yield FaultyStack(ready["endpoint"], ready, plan)


async def signed_in(faulty: FaultyStack, subject: str) -> MemoryClient:
    async with httpx.AsyncClient() as http:
        answer = await http.post(f"{faulty.ready['idpEndpoint']}/token", json={"sub": subject})
    answer.raise_for_status()
    client = MemoryClient(endpoint=faulty.endpoint, backend="svc")
    await client.auth.exchange(answer.json()["id_token"])
    return client


async def test_a_create_whose_answer_was_lost_creates_one_key(faulty: FaultyStack) -> None:
    async with await signed_in(faulty, "sdk-lost-create") as client:
        with faulty.failing(LOST_WRITE):
            created = await client.auth.create_api_key("lost")
        listed = await client.auth.list_api_keys(all_workspaces=True)
    assert created.key is not None
    async with MemoryClient(
        endpoint=faulty.endpoint, api_key=created.key.get_secret_value()
    ) as by_key:
        principal = await by_key.auth.whoami()

    assert [key.id for key in listed] == [created.id]
    assert principal.key_id == created.id


async def test_a_rotation_whose_answer_was_lost_rotates_once(faulty: FaultyStack) -> None:
    async with await signed_in(faulty, "sdk-lost-rotate") as client:
        old = await client.auth.create_api_key("old")
        with faulty.failing(LOST_WRITE):
            successor = await client.auth.rotate_api_key(old.id)
        listed = {key.id: key for key in await client.auth.list_api_keys(all_workspaces=True)}

    assert set(listed) == {old.id, successor.id}
    assert listed[old.id].status == "revoked"
    assert listed[old.id].replaced_by == successor.id
    assert successor.key is not None


async def test_a_refresh_whose_answer_was_lost_keeps_the_sign_in(faulty: FaultyStack) -> None:
    async with await signed_in(faulty, "sdk-lost-refresh") as client:
        with faulty.failing(LOST_WRITE):
            refreshed = await client.auth.refresh_access_token()
        onward = await client.auth.refresh_access_token()
        principal = await client.auth.whoami()

    assert refreshed.refresh_token is not None and onward.refresh_token is not None
    assert digest(refreshed.refresh_token.get_secret_value()) != digest(
        onward.refresh_token.get_secret_value()
    )
    assert principal.credential == "user_token"
