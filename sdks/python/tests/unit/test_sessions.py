"""`client.auth.sessions` and `sign_out_everywhere` against a scripted fake: the caller's
sign-ins listed, one ended, all ended, and what the client keeps afterwards."""

from __future__ import annotations

from datetime import UTC, datetime

import httpx
import pytest

from memory_sdk import (
    AuthenticationError,
    MemoryClient,
    NotFoundError,
    PermissionDeniedError,
    UnexpectedResponseError,
    UserSession,
)
from tests.unit.fakes import (
    ADMIN_KEY,
    ENDPOINT,
    FIRST,
    SECOND,
    SOMEONE_ELSES,
    FakeService,
    problem,
    session_resource,
)

pytestmark = pytest.mark.anyio

ACCESS = "eyJ" + "hbGciOiJSUzI1NiJ9.eyJzaWQiOiJzZXNfMDEifQ.c2lnbmF0dXJl"
REFRESH = "rt_" + "unitTestRefreshToken000000000000"


def user_client(fake: FakeService, *, workspace_id: str | None = None) -> MemoryClient:
    return MemoryClient(
        endpoint=ENDPOINT,
        workspace_id=workspace_id,
        access_token=ACCESS,
        backend="svc",
        svc={"backoff": 0},
        http_transport=fake.transport(),
    )


def tokens() -> httpx.Response:
    body = {"access_token": ACCESS, "token_type": "Bearer", "expires_in": 3600}
    return httpx.Response(200, json={**body, "refresh_token": REFRESH})


def listed(*sessions: dict[str, object]) -> httpx.Response:
    return httpx.Response(200, json={"sessions": list(sessions)})


async def test_list_answers_the_sign_ins_newest_first_with_this_one_marked() -> None:
    fake = FakeService(
        listed(
            session_resource(SECOND, current=True, createdAt="2026-11-27T11:00:00Z"),
            session_resource(FIRST, lastRefreshedAt=None, userAgent=None, ipAddress=None),
        )
    )

    async with user_client(fake) as client:
        sessions = await client.auth.sessions.list()

    assert [s.id for s in sessions] == [SECOND, FIRST]
    assert [s.current for s in sessions] == [True, False]
    assert isinstance(sessions[0], UserSession)
    assert sessions[0].created_at == datetime(2026, 11, 27, 11, 0, tzinfo=UTC)
    assert sessions[0].user_agent == "Mozilla/5.0 (X11; Linux x86_64) Chrome/131.0"
    assert sessions[0].ip_address == "203.0.113.7"
    assert sessions[1].last_refreshed_at is None
    assert sessions[1].user_agent is None and sessions[1].ip_address is None


async def test_list_sends_the_user_token_and_no_workspace_even_when_one_is_configured() -> None:
    fake = FakeService(listed())

    async with user_client(fake, workspace_id="ws_conf") as client:
        sessions = await client.auth.sessions.list()

    assert sessions == []
    request = fake.requests[0]
    assert (request.method, request.url.path) == ("GET", "/v1/auth/sessions")
    assert request.headers["Authorization"] == f"Bearer {ACCESS}"
    assert "X-Workspace-Id" not in request.headers


async def test_a_malformed_list_is_an_unexpected_response() -> None:
    fake = FakeService(listed({"id": FIRST, "current": True}))  # no times

    async with user_client(fake) as client:
        with pytest.raises(UnexpectedResponseError) as raised:
            await client.auth.sessions.list()

    assert raised.value.path == "/v1/auth/sessions"
    assert raised.value.__context__ is None


async def test_an_api_key_is_refused_listing_sign_ins_with_the_services_code() -> None:
    fake = FakeService(problem(403, "insufficient_scope", "Sessions need a user token."))

    async with MemoryClient(
        api_key=ADMIN_KEY, endpoint=ENDPOINT, http_transport=fake.transport()
    ) as client:
        with pytest.raises(PermissionDeniedError) as raised:
            await client.auth.sessions.list()

    assert raised.value.code == "insufficient_scope"
    assert fake.requests[0].headers["Authorization"] == f"Bearer {ADMIN_KEY}"


async def test_revoke_deletes_the_sign_in_by_its_id_kept_inside_its_path_segment() -> None:
    fake = FakeService(httpx.Response(204), httpx.Response(204))

    async with user_client(fake, workspace_id="ws_conf") as client:
        await client.auth.sessions.revoke(FIRST)
        await client.auth.sessions.revoke("../api-keys")

    assert [(r.method, r.url.raw_path) for r in fake.requests] == [
        ("DELETE", f"/v1/auth/sessions/{FIRST}".encode()),
        ("DELETE", b"/v1/auth/sessions/..%2Fapi-keys"),
    ]
    assert all("X-Workspace-Id" not in r.headers for r in fake.requests)


async def test_revoking_another_persons_or_an_unknown_sign_in_raises_not_found_404() -> None:
    fake = FakeService(problem(404, "not_found", "No such sign-in."))

    async with user_client(fake) as client:
        with pytest.raises(NotFoundError) as raised:
            await client.auth.sessions.revoke(SOMEONE_ELSES)

    assert (raised.value.status, raised.value.code) == (404, "not_found")
    assert len(fake.requests) == 1


async def test_an_empty_session_id_is_a_usage_error_before_any_request() -> None:
    fake = FakeService()

    async with user_client(fake) as client:
        with pytest.raises(ValueError, match="session_id"):
            await client.auth.sessions.revoke("")

    assert fake.requests == []


async def test_a_revoke_answered_503_is_re_sent_as_a_delete_may_be() -> None:
    fake = FakeService(problem(503, "dependency_unavailable"), httpx.Response(204))

    async with user_client(fake) as client:
        await client.auth.sessions.revoke(FIRST)

    assert [r.url.path for r in fake.requests] == [f"/v1/auth/sessions/{FIRST}"] * 2


async def test_sign_out_everywhere_deletes_every_sign_in_and_forgets_the_refresh_token() -> None:
    fake = FakeService(tokens(), httpx.Response(204))

    async with user_client(fake, workspace_id="ws_conf") as client:
        await client.auth.exchange("id-" + "token")
        await client.auth.sign_out_everywhere()
        with pytest.raises(ValueError, match="no refresh token"):
            await client.auth.refresh_access_token()

    request = fake.requests[1]
    assert (request.method, request.url.path) == ("DELETE", "/v1/auth/sessions")
    assert request.headers["Authorization"] == f"Bearer {ACCESS}"
    assert "X-Workspace-Id" not in request.headers
    assert len(fake.requests) == 2  # the refresh was refused here, not sent


async def test_after_sign_out_everywhere_a_call_is_refused_401_revoked_credentials() -> None:
    fake = FakeService(httpx.Response(204), problem(401, "revoked_credentials"))

    async with user_client(fake) as client:
        await client.auth.sign_out_everywhere()
        with pytest.raises(AuthenticationError) as raised:
            await client.auth.whoami()

    assert (raised.value.status, raised.value.code) == (401, "revoked_credentials")
    assert len(fake.requests) == 2  # a refusal of the credential is not retried


async def test_a_sign_out_everywhere_whose_answer_was_lost_says_the_sign_in_has_ended() -> None:
    fake = FakeService(
        httpx.ReadTimeout("lost after the service ended every sign-in"),
        problem(401, "revoked_credentials"),
    )

    async with user_client(fake) as client:
        with pytest.raises(AuthenticationError) as raised:
            await client.auth.sign_out_everywhere()

    assert raised.value.code == "revoked_credentials"
    assert [r.url.path for r in fake.requests] == ["/v1/auth/sessions"] * 2
