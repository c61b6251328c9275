"""`make run REGIONS=3` over real HTTP: three Regions' APIs and data-plane gates, each a
process told its Region, over the one local store (DynamoDB one store in every Region, KMS
keys multi-Region). A change made in one Region is in force in the others on their very next
request, and one Region stopped leaves two serving.

The stacks here are this module's own (three Regions; the session's stack has one), started
as the session's is: free ports, a ready file.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import boto3
import httpx
import pytest

from infra.connection import LOCAL_CREDENTIALS
from infra.template import PROJECT_DIR, stage_environment
from local.running import running_stack
from local.stack import port_in_use
from tests.e2e.conftest import Stack

KEYS = "/v1/auth/api-keys"
WHOAMI = "/v1/auth/whoami"
DATA_PLANE = "/v1/memory/items"
BUS = stage_environment("dev")["EVENT_BUS_NAME"]  # the stack's stage
STOP_SECONDS = 30.0


def regional(info: dict[str, Any]) -> list[Stack]:
    """A client per Region, in the ready file's order (us-east-1, us-east-2, us-west-2)."""
    return [
        Stack({**info, "endpoint": r["endpoint"], "mcpResource": r["mcpResource"]})
        for r in info["regions"]
    ]


@pytest.fixture(scope="module")
def regions() -> Iterator[list[Stack]]:
    with running_stack("--regions", "3") as info:
        stacks = regional(info)
        yield stacks
        for stack in stacks:
            stack.http.close()


def gate(region: Stack, credential: str) -> int:
    """The status of a data-plane request through this Region's authorizer."""
    base = region.info["mcpResource"].removesuffix("/mcp")
    headers = {"Authorization": f"Bearer {credential}"}
    return httpx.get(base + DATA_PLANE, headers=headers, timeout=10).status_code


def whoami(region: Stack, credential: str) -> int:
    return region.call("GET", WHOAMI, credential).status_code


def workspace_key(region: Stack, label: str) -> dict[str, Any]:
    body = {"label": label, "category": "workspace", "workspaceId": region.workspace_id}
    answer = region.call("POST", KEYS, region.token, body=body)
    assert answer.status_code == 201, answer.text
    return dict(answer.json())


def sign_in(region: Stack, subject: str) -> dict[str, str]:
    idp = region.info["idpEndpoint"]
    claims = {"sub": subject, "email": f"{subject}@example.test"}
    id_token = httpx.post(idp + "/token", json=claims, timeout=10).json()["id_token"]
    answer = region.call("POST", "/v1/auth/exchange", body={"id_token": id_token})
    assert answer.status_code == 200, answer.text
    return dict(answer.json())


def refresh(region: Stack, refresh_token: str) -> httpx.Response:
    return region.call("POST", "/v1/auth/refresh", body={"refresh_token": refresh_token})


def test_the_three_regions_are_the_mrsc_set_each_on_its_own_api_and_gate(
    regions: list[Stack],
) -> None:
    names = [r["region"] for r in regions[0].info["regions"]]
    endpoints = {region.endpoint for region in regions}
    gates = {region.info["mcpResource"] for region in regions}

    assert names == ["us-east-1", "us-east-2", "us-west-2"]
    assert len(endpoints) == len(gates) == 3
    assert regions[0].info["endpoint"] == regions[0].endpoint  # the first is the stack's URL


@pytest.mark.parametrize("maker", [0, 2], ids=["made in us-east-1", "made in us-west-2"])
def test_a_key_created_in_one_region_is_accepted_in_every_region_at_once_200(
    regions: list[Stack], maker: int
) -> None:
    key = workspace_key(regions[maker], "made in one Region")

    assert [whoami(region, key["key"]) for region in regions] == [200, 200, 200]
    assert [gate(region, key["key"]) for region in regions] == [200, 200, 200]


def test_a_key_stored_in_one_region_is_revealed_in_every_region_200(
    regions: list[Stack],
) -> None:
    """Its stored secret was encrypted with the home Region's multi-Region key; each Region
    decrypts it with its own replica of that key."""
    key = workspace_key(regions[0], "revealed elsewhere")

    revealed = [
        region.call("GET", f"{KEYS}/{key['id']}/reveal", region.token) for region in regions
    ]

    assert [answer.status_code for answer in revealed] == [200, 200, 200]
    assert [answer.json()["key"] == key["key"] for answer in revealed] == [True, True, True]


def test_a_key_revoked_in_one_region_is_refused_in_every_region_on_the_next_request_401(
    regions: list[Stack],
) -> None:
    key = workspace_key(regions[0], "revoked in another Region")
    assert [gate(region, key["key"]) for region in regions] == [200, 200, 200]

    revoked = regions[1].call("DELETE", f"{KEYS}/{key['id']}", regions[1].token)

    assert revoked.status_code == 204
    assert [gate(region, key["key"]) for region in regions] == [401, 401, 401]
    assert [whoami(region, key["key"]) for region in regions] == [401, 401, 401]


def test_a_sign_out_in_one_region_refuses_the_refresh_token_in_every_other_400_invalid_grant(
    regions: list[Stack],
) -> None:
    pair = sign_in(regions[0], "regions-sign-out")

    signed_out = regions[1].http.post("/v1/auth/revoke", json={"token": pair["refresh_token"]})

    assert signed_out.status_code == 200
    refused = [refresh(regions[i], pair["refresh_token"]) for i in (2, 0)]
    assert [answer.status_code for answer in refused] == [400, 400]
    assert [answer.json()["error"] for answer in refused] == ["invalid_grant", "invalid_grant"]


def test_a_refresh_retried_in_another_region_gets_the_same_successor_200(
    regions: list[Stack],
) -> None:
    pair = sign_in(regions[2], "regions-retry")

    rotated = refresh(regions[0], pair["refresh_token"])
    retried = refresh(regions[1], pair["refresh_token"])  # its answer lost, retried elsewhere

    assert [rotated.status_code, retried.status_code] == [200, 200]
    assert retried.json()["refresh_token"] == rotated.json()["refresh_token"]
    assert whoami(regions[2], retried.json()["access_token"]) == 200


def test_each_region_puts_its_events_on_its_own_regions_bus(regions: list[Stack]) -> None:
    """Each Region's process is told its Region: its AWS clients are that Region's (the
    store's DynamoDB is one table everywhere, so the event bus is where that shows)."""
    moto = regions[0].info["motoEndpoint"]
    queues = [bus_queue(moto, r["region"]) for r in regions[0].info["regions"]]

    made = [workspace_key(region, "where are my events")["id"] for region in regions]

    received = [key_ids(*queue) for queue in queues]
    assert received == [[made[0]], [made[1]], [made[2]]]


def aws(service: str, moto: str, region: str) -> Any:
    return boto3.client(
        service,
        region_name=region,
        endpoint_url=moto,
        aws_access_key_id=LOCAL_CREDENTIALS["AWS_ACCESS_KEY_ID"],
        aws_secret_access_key=LOCAL_CREDENTIALS["AWS_SECRET_ACCESS_KEY"],
    )


def bus_queue(moto: str, region: str) -> tuple[Any, str]:
    """An SQS queue of `region` that receives every key.created put on that Region's bus."""
    sqs, events = aws("sqs", moto, region), aws("events", moto, region)
    url = sqs.create_queue(QueueName="key-created")["QueueUrl"]
    arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]
    pattern = json.dumps({"source": ["memory-auth"], "detail-type": ["key.created"]})
    events.put_rule(Name="key-created", EventBusName=BUS, EventPattern=pattern)
    events.put_targets(
        Rule="key-created", EventBusName=BUS, Targets=[{"Id": "queue", "Arn": arn["QueueArn"]}]
    )
    return sqs, url


def key_ids(sqs: Any, url: str) -> list[str]:
    messages = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10).get("Messages", [])
    return [json.loads(m["Body"])["detail"]["keyId"] for m in messages]


@pytest.fixture
def stopping() -> Iterator[list[Stack]]:
    """Three Regions of this test's own: one of them is stopped."""
    with running_stack("--regions", "3") as info:
        stacks = regional(info)
        yield stacks
        for stack in stacks:
            stack.http.close()


def test_one_region_stopped_leaves_two_serving_every_change_in_force_in_both(
    stopping: list[Stack],
) -> None:
    first, east, west = stopping
    earlier = workspace_key(first, "made before the stop")

    stop_and_wait(first.info["regions"][0]["pid"])
    with pytest.raises(httpx.ConnectError):  # its process is gone, and its port with it
        httpx.get(first.endpoint + WHOAMI, timeout=2)

    assert [whoami(r, first.token) for r in (east, west)] == [200, 200]
    assert [gate(r, earlier["key"]) for r in (east, west)] == [200, 200]
    later = workspace_key(east, "made after the stop")
    assert [gate(r, later["key"]) for r in (east, west)] == [200, 200]
    assert west.call("DELETE", f"{KEYS}/{earlier['id']}", west.token).status_code == 204
    assert [gate(r, earlier["key"]) for r in (east, west)] == [401, 401]


def stop_and_wait(pid: int) -> None:
    """SIGTERM to a Region's process, then wait for its exit: the process's pidfd becomes
    readable when it exits (an event, not a poll), opened first so that the pid cannot be
    another process's by then."""
    handle = os.pidfd_open(pid)
    try:
        os.kill(pid, signal.SIGTERM)
        exited, _, _ = select.select([handle], [], [], STOP_SECONDS)
    finally:
        os.close(handle)
    assert exited, f"the Region's process {pid} still runs {STOP_SECONDS} s after SIGTERM"


def preflight(*arguments: str, environment: dict[str, str] | None = None) -> list[str]:
    """The stack's one message when it refuses to start (nothing started: no stdout)."""
    result = subprocess.run(
        [sys.executable, "-m", "local.stack", *arguments],
        cwd=PROJECT_DIR, capture_output=True, text=True, timeout=60,
        env={**os.environ, **(environment or {})},
    )
    assert (result.returncode, result.stdout) == (1, "")
    return result.stderr.strip().splitlines()


def test_regions_beyond_three_stop_the_stack_with_one_line_before_anything_starts() -> None:
    lines = preflight("--port", "0", environment={"REGIONS": "4"})

    assert lines == ["REGIONS='4' is not a number of Regions: 1 to 3"]


@contextlib.contextmanager
def busy_between_free_ports() -> Iterator[int]:
    """A port something listens on, with both its neighbours free."""
    for _ in range(50):
        with socket.socket() as taken:
            taken.bind(("127.0.0.1", 0))
            taken.listen()
            busy = int(taken.getsockname()[1])
            if not any(port_in_use("127.0.0.1", busy + step) for step in (-1, 1)):
                yield busy
                return
    pytest.fail("no listening port with free neighbours in 50 tries")


def test_a_busy_port_of_a_later_region_stops_the_stack_with_one_line_naming_it() -> None:
    with busy_between_free_ports() as busy:
        lines = preflight(
            "--regions", "3", "--port", str(busy - 1),
            "--idp-port", "0", "--mcp-port", "0", "--scan-port", "0",
        )

    assert len(lines) == 1
    assert str(busy) in lines[0] and "us-east-2 Region's API" in lines[0]
    assert "PORT=" in lines[0]
