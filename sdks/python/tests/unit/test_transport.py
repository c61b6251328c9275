"""Transport: retries and backoff, what is never re-sent, and typed errors."""

from __future__ import annotations

from datetime import UTC, datetime

import httpx
import pytest

from memory_sdk import (
    ApiError,
    AuthenticationError,
    ConflictError,
    GoneError,
    NetworkError,
    NotFoundError,
    PermissionDeniedError,
    RateLimitError,
    RequestValidationError,
    ServiceError,
)
from memory_sdk.config import load_settings
from memory_sdk.transport import Call, Transport, retry_after_seconds
from tests.unit.fakes import ADMIN_KEY, ENDPOINT, FakeService, problem

pytestmark = pytest.mark.anyio

GET = Call("GET", "/v1/auth/api-keys")
CREATE = Call("POST", "/v1/auth/api-keys", json={"label": "x"}, replayable=False)


class Sleeps:
    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, delay: float) -> None:
        self.delays.append(delay)


def transport(fake: FakeService, sleeps: Sleeps, **svc: float) -> Transport:
    settings = load_settings(api_key=ADMIN_KEY, endpoint=ENDPOINT, svc=svc)
    return Transport(
        settings,
        lambda: ADMIN_KEY,
        http_transport=fake.transport(),
        sleep=sleeps,
        jitter=lambda: 1.0,
    )


def ok() -> httpx.Response:
    return httpx.Response(200, json={"keys": [], "nextCursor": None})


async def test_a_read_is_retried_on_5xx_with_exponential_backoff() -> None:
    fake = FakeService(problem(503, "dependency_unavailable"), httpx.Response(502), ok())
    sleeps = Sleeps()

    response = await transport(fake, sleeps, backoff=0.5, retries=2).send(GET)

    assert response.status_code == 200
    assert len(fake.requests) == 3
    assert sleeps.delays == [0.5, 1.0]


async def test_backoff_is_capped_by_backoff_max() -> None:
    fake = FakeService(*(httpx.Response(500) for _ in range(4)), ok())
    sleeps = Sleeps()

    await transport(fake, sleeps, backoff=1, backoff_max=2.5, retries=4).send(GET)

    assert sleeps.delays == [1.0, 2.0, 2.5, 2.5]


async def test_jitter_keeps_at_least_half_the_delay() -> None:
    fake = FakeService(httpx.Response(500), ok())
    sleeps = Sleeps()
    settings = load_settings(api_key=ADMIN_KEY, endpoint=ENDPOINT, svc={"backoff": 2})
    sender = Transport(
        settings,
        lambda: ADMIN_KEY,
        http_transport=fake.transport(),
        sleep=sleeps,
        jitter=lambda: 0.0,
    )

    await sender.send(GET)

    assert sleeps.delays == [1.0]


async def test_retry_after_seconds_is_honoured_on_429() -> None:
    fake = FakeService(problem(429, "rate_limited", **{"Retry-After": "3"}), ok())
    sleeps = Sleeps()

    await transport(fake, sleeps).send(GET)

    assert sleeps.delays == [3.0]


async def test_a_retry_after_beyond_the_maximum_is_raised_without_waiting() -> None:
    fake = FakeService(problem(429, "rate_limited", **{"Retry-After": "120"}))
    sleeps = Sleeps()

    with pytest.raises(RateLimitError) as raised:
        await transport(fake, sleeps, retry_after_max=60).send(GET)

    assert raised.value.retry_after == 120.0
    assert raised.value.code == "rate_limited"
    assert sleeps.delays == []


async def test_retries_give_up_and_raise_the_last_error() -> None:
    fake = FakeService(*(problem(503, "dependency_unavailable") for _ in range(3)))
    sleeps = Sleeps()

    with pytest.raises(ServiceError) as raised:
        await transport(fake, sleeps, retries=2).send(GET)

    assert raised.value.status == 503
    assert raised.value.code == "dependency_unavailable"
    assert len(fake.requests) == 3


async def test_a_read_is_retried_after_a_lost_answer() -> None:
    fake = FakeService(httpx.ReadTimeout("slow"), httpx.RemoteProtocolError("closed"), ok())
    sleeps = Sleeps()

    await transport(fake, sleeps).send(GET)

    assert len(fake.requests) == 3


@pytest.mark.parametrize(
    "answer",
    [
        problem(503, "dependency_unavailable"),
        httpx.Response(500),
        problem(429, "rate_limited", **{"Retry-After": "1"}),
        httpx.ReadTimeout("the answer never came"),
        httpx.RemoteProtocolError("server disconnected"),
        httpx.WriteError("broken pipe"),
    ],
    ids=["503", "500", "429", "read-timeout", "disconnected", "write-error"],
)
async def test_a_create_that_may_have_reached_the_service_is_never_resent(
    answer: httpx.Response | Exception,
) -> None:
    fake = FakeService(answer, ok())
    sleeps = Sleeps()

    with pytest.raises((ApiError, NetworkError)) as raised:
        await transport(fake, sleeps).send(CREATE)

    assert len(fake.requests) == 1
    assert sleeps.delays == []
    if isinstance(raised.value, NetworkError):
        assert raised.value.may_have_reached


@pytest.mark.parametrize(
    "path", ["/v1/auth/api-keys/key_1/rotate", "/v1/auth/refresh", "/v1/auth/exchange"]
)
async def test_rotate_and_token_calls_are_never_resent_after_sending(path: str) -> None:
    fake = FakeService(httpx.Response(503), ok())
    call = Call("POST", path, replayable=False)

    with pytest.raises(ServiceError):
        await transport(fake, Sleeps()).send(call)

    assert len(fake.requests) == 1


@pytest.mark.parametrize(
    "failure",
    [httpx.ConnectError("refused"), httpx.ConnectTimeout("no answer"), httpx.PoolTimeout("busy")],
    ids=["connect-error", "connect-timeout", "pool-timeout"],
)
async def test_a_create_that_never_left_is_retried(failure: Exception) -> None:
    fake = FakeService(failure, httpx.Response(201, json={"id": "key_1"}))

    response = await transport(fake, Sleeps()).send(CREATE)

    assert response.status_code == 201
    assert len(fake.requests) == 2


async def test_connection_failures_after_retries_are_a_network_error() -> None:
    fake = FakeService(*(httpx.ConnectError("refused") for _ in range(3)))

    with pytest.raises(NetworkError) as raised:
        await transport(fake, Sleeps(), retries=2).send(GET)

    assert not raised.value.may_have_reached
    assert isinstance(raised.value.__cause__, httpx.ConnectError)


async def test_a_revoke_is_retried_because_it_is_idempotent() -> None:
    fake = FakeService(httpx.Response(500), httpx.Response(204))

    response = await transport(fake, Sleeps()).send(Call("DELETE", "/v1/auth/api-keys/key_1"))

    assert response.status_code == 204
    assert len(fake.requests) == 2


@pytest.mark.parametrize(
    ("status", "code", "expected"),
    [
        (400, "workspace_id_not_allowed", RequestValidationError),
        (413, "payload_too_large", RequestValidationError),
        (401, "revoked_credentials", AuthenticationError),
        (403, "insufficient_scope", PermissionDeniedError),
        (404, "not_found", NotFoundError),
        (409, "key_not_active", ConflictError),
        (410, "key_revoked", GoneError),
        (429, "rate_limited", RateLimitError),
        (503, "dependency_unavailable", ServiceError),
        (500, "internal_error", ServiceError),
        (405, "method_not_allowed", ApiError),
    ],
)
async def test_each_status_raises_its_error_with_the_problem_code(
    status: int, code: str, expected: type[ApiError]
) -> None:
    fake = FakeService(problem(status, code, "what went wrong"))

    with pytest.raises(ApiError) as raised:
        await transport(fake, Sleeps(), retries=0).send(GET)

    error = raised.value
    assert type(error) is expected
    assert (error.status, error.code, error.detail) == (status, code, "what went wrong")
    assert code in str(error)
    assert repr(error) == f"{expected.__name__}(status={status}, code={code!r})"


@pytest.mark.parametrize(
    ("status", "error", "expected"),
    [
        (400, "invalid_grant", AuthenticationError),
        (401, "invalid_client", AuthenticationError),
        (400, "invalid_request", RequestValidationError),
        (503, "temporarily_unavailable", ServiceError),
    ],
)
async def test_oauth_error_bodies_carry_their_error_as_code(
    status: int, error: str, expected: type[ApiError]
) -> None:
    body = {"error": error, "error_description": "described"}
    fake = FakeService(httpx.Response(status, json=body))
    call = Call("POST", "/v1/auth/refresh", replayable=False, oauth=True)

    with pytest.raises(ApiError) as raised:
        await transport(fake, Sleeps()).send(call)

    assert type(raised.value) is expected
    assert raised.value.code == error
    assert raised.value.detail == "described"


async def test_a_non_json_error_has_no_code() -> None:
    fake = FakeService(httpx.Response(502, text="<html>Bad Gateway</html>"))

    with pytest.raises(ServiceError) as raised:
        await transport(fake, Sleeps(), retries=0).send(GET)

    assert raised.value.code is None
    assert "html" not in str(raised.value)


async def test_redirects_are_not_followed_with_the_credential() -> None:
    fake = FakeService(httpx.Response(302, headers={"Location": "https://elsewhere.example/"}))

    with pytest.raises(ApiError) as raised:
        await transport(fake, Sleeps()).send(GET)

    assert raised.value.status == 302
    assert len(fake.requests) == 1


async def test_a_secret_in_an_error_detail_is_redacted() -> None:
    fake = FakeService(problem(400, "invalid_label", f"bad label {ADMIN_KEY} and Bearer abc.def"))

    with pytest.raises(RequestValidationError) as raised:
        await transport(fake, Sleeps()).send(GET)

    assert ADMIN_KEY not in str(raised.value)
    assert "abc.def" not in str(raised.value)
    assert "[redacted]" in raised.value.detail


async def test_transport_repr_and_logs_hold_no_credential(caplog: pytest.LogCaptureFixture) -> None:
    fake = FakeService(httpx.Response(500), ok())
    sender = transport(fake, Sleeps())

    with caplog.at_level("DEBUG"):
        await sender.send(GET)

    assert ADMIN_KEY not in repr(sender)
    assert caplog.records, "the transport logs its attempts at DEBUG"
    for record in caplog.records:
        assert ADMIN_KEY not in record.getMessage()


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (None, None),
        ("7", 7.0),
        (" 0 ", 0.0),
        ("Sat, 21 Nov 2026 12:00:30 GMT", 30.0),
        ("Sat, 21 Nov 2026 11:00:00 GMT", 0.0),
        ("soon", None),
        ("-5", None),
    ],
)
def test_retry_after_parsing(value: str | None, expected: float | None) -> None:
    now = datetime(2026, 11, 21, 12, 0, 0, tzinfo=UTC)

    assert retry_after_seconds(value, now) == expected
