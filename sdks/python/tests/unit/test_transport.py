"""Transport: the retry policy (retries and backoff, what is never re-sent) and typed errors."""

from __future__ import annotations

from datetime import UTC, datetime

import httpx
import pytest

from memory_sdk import (
    ApiError,
    AuthenticationError,
    BadRequestError,
    ConflictError,
    GoneError,
    NetworkError,
    NotFoundError,
    OAuthError,
    PermissionDeniedError,
    RateLimitError,
    RequestTimeoutError,
    ServerError,
    ServiceUnavailableError,
    SvcOptions,
)
from memory_sdk import retry as policy
from memory_sdk.config import load_settings
from memory_sdk.transport import Call, Transport, retry_after_seconds
from tests.unit.fakes import ADMIN_KEY, ENDPOINT, FakeService, problem

pytestmark = pytest.mark.anyio

GET = Call("GET", "/v1/auth/api-keys")
CREATE = Call("POST", "/v1/auth/api-keys", json={"label": "x"})
REVOKE = Call("DELETE", "/v1/auth/api-keys/key_1")


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
    fake = FakeService(*(httpx.Response(504) for _ in range(4)), ok())
    sleeps = Sleeps()

    await transport(fake, sleeps, backoff=1, backoff_max=2.5, retries=4).send(GET)

    assert sleeps.delays == [1.0, 2.0, 2.5, 2.5]


async def test_jitter_keeps_at_least_half_the_delay() -> None:
    fake = FakeService(httpx.Response(502), ok())
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

    with pytest.raises(ServiceUnavailableError) as raised:
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
@pytest.mark.parametrize("status", [429, 502, 503, 504])
async def test_rotate_and_token_calls_are_never_resent_after_sending(
    path: str, status: int
) -> None:
    fake = FakeService(httpx.Response(status), ok())
    call = Call("POST", path, oauth=path != "/v1/auth/api-keys/key_1/rotate")

    with pytest.raises(ApiError) as raised:
        await transport(fake, Sleeps()).send(call)

    assert raised.value.status == status
    assert len(fake.requests) == 1


@pytest.mark.parametrize("call", [GET, REVOKE], ids=["GET", "DELETE"])
@pytest.mark.parametrize("status", [500, 501, 505, 400, 401, 403, 404, 409, 410])
async def test_a_500_or_any_other_status_is_never_retried(call: Call, status: int) -> None:
    fake = FakeService(problem(status, "internal_error" if status >= 500 else "refused"), ok())
    sleeps = Sleeps()

    with pytest.raises(ApiError) as raised:
        await transport(fake, sleeps).send(call)

    assert raised.value.status == status
    assert len(fake.requests) == 1
    assert sleeps.delays == []


@pytest.mark.parametrize("status", [429, 502, 503, 504])
async def test_a_revoke_is_retried_like_a_read(status: int) -> None:
    fake = FakeService(httpx.Response(status), httpx.Response(204))
    sleeps = Sleeps()

    response = await transport(fake, sleeps, backoff=0.5).send(REVOKE)

    assert response.status_code == 204
    assert len(fake.requests) == 2
    assert sleeps.delays == [0.5]


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


async def test_a_revoke_whose_answer_was_lost_is_retried() -> None:
    fake = FakeService(httpx.ReadTimeout("slow"), httpx.Response(204))

    response = await transport(fake, Sleeps()).send(REVOKE)

    assert response.status_code == 204
    assert len(fake.requests) == 2


async def test_a_timeout_after_sending_is_a_request_timeout_that_may_have_reached() -> None:
    fake = FakeService(httpx.ReadTimeout("slow"))

    with pytest.raises(RequestTimeoutError) as raised:
        await transport(fake, Sleeps()).send(CREATE)

    assert isinstance(raised.value, NetworkError)
    assert raised.value.may_have_reached
    assert len(fake.requests) == 1


async def test_a_connect_timeout_is_a_request_timeout_that_never_left() -> None:
    fake = FakeService(*(httpx.ConnectTimeout("no answer") for _ in range(3)))

    with pytest.raises(RequestTimeoutError) as raised:
        await transport(fake, Sleeps(), retries=2).send(CREATE)

    assert not raised.value.may_have_reached
    assert len(fake.requests) == 3


@pytest.mark.parametrize(
    ("status", "code", "expected"),
    [
        (400, "workspace_id_not_allowed", BadRequestError),
        (413, "payload_too_large", BadRequestError),
        (422, "invalid_parameter", BadRequestError),
        (401, "revoked_credentials", AuthenticationError),
        (403, "insufficient_scope", PermissionDeniedError),
        (404, "not_found", NotFoundError),
        (409, "key_not_active", ConflictError),
        (410, "key_revoked", GoneError),
        (429, "rate_limited", RateLimitError),
        (503, "dependency_unavailable", ServiceUnavailableError),
        (500, "internal_error", ServerError),
        (502, "bad_gateway", ServerError),
        (504, "gateway_timeout", ServerError),
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
    ("status", "error"),
    [
        (400, "invalid_grant"),
        (401, "invalid_client"),
        (400, "invalid_request"),
        (503, "temporarily_unavailable"),
    ],
)
async def test_oauth_error_bodies_are_oauth_errors_carrying_their_error_as_code(
    status: int, error: str
) -> None:
    body = {"error": error, "error_description": "described"}
    fake = FakeService(httpx.Response(status, json=body))
    call = Call("POST", "/v1/auth/refresh", oauth=True)

    with pytest.raises(ApiError) as raised:
        await transport(fake, Sleeps()).send(call)

    assert type(raised.value) is OAuthError
    assert (raised.value.status, raised.value.code) == (status, error)
    assert raised.value.detail == "described"


async def test_a_problem_from_a_token_endpoint_is_typed_by_its_status() -> None:
    fake = FakeService(problem(503, "dependency_unavailable"))
    call = Call("POST", "/v1/auth/refresh", oauth=True)

    with pytest.raises(ServiceUnavailableError) as raised:
        await transport(fake, Sleeps()).send(call)

    assert raised.value.code == "dependency_unavailable"


async def test_an_oauth_shaped_body_elsewhere_is_not_an_oauth_error() -> None:
    fake = FakeService(httpx.Response(404, json={"error": "not here"}))

    with pytest.raises(NotFoundError) as raised:
        await transport(fake, Sleeps()).send(GET)

    assert raised.value.code is None


async def test_a_non_json_error_has_no_code() -> None:
    fake = FakeService(httpx.Response(502, text="<html>Bad Gateway</html>"))

    with pytest.raises(ServerError) as raised:
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

    with pytest.raises(BadRequestError) as raised:
        await transport(fake, Sleeps()).send(GET)

    assert ADMIN_KEY not in str(raised.value)
    assert "abc.def" not in str(raised.value)
    assert "[redacted]" in raised.value.detail


async def test_transport_repr_and_logs_hold_no_credential(caplog: pytest.LogCaptureFixture) -> None:
    fake = FakeService(httpx.Response(503), ok())
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


# -- the policy itself (memory_sdk.retry) ------------------------------------------------------


@pytest.mark.parametrize(
    ("method", "status", "sent", "expected"),
    [
        ("GET", 429, True, True),
        ("GET", 502, True, True),
        ("GET", 503, True, True),
        ("GET", 504, True, True),
        ("GET", None, True, True),
        ("DELETE", 503, True, True),
        ("DELETE", None, True, True),
        ("GET", 500, True, False),
        ("DELETE", 500, True, False),
        ("GET", 501, True, False),
        ("GET", 404, True, False),
        ("POST", 429, True, False),
        ("POST", 503, True, False),
        ("POST", None, True, False),
        ("POST", None, False, True),
        ("GET", None, False, True),
    ],
)
def test_the_policy_table(method: str, status: int | None, sent: bool, expected: bool) -> None:
    assert policy.should_retry(method, status=status, sent=sent) is expected


def test_the_policy_budget_is_the_clients_default() -> None:
    options = SvcOptions()

    assert (options.retries, options.backoff, options.backoff_max, options.retry_after_max) == (
        2,
        0.5,
        8.0,
        60.0,
    )
    assert frozenset({429, 502, 503, 504}) == policy.RETRYABLE_STATUSES
    waits = [policy.retry_delay(n, jitter=lambda: 1.0) for n in range(6)]
    assert waits == [0.5, 1.0, 2.0, 4.0, 8.0, 8.0]
    assert policy.retry_delay(0, jitter=lambda: 0.0) == 0.25
    assert policy.retry_delay(0, 60.0, jitter=lambda: 1.0) == 60.0
    assert policy.retry_delay(0, 61.0, jitter=lambda: 1.0) is None
