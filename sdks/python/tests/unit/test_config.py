"""Configuration: every variable, precedence, and clear errors."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from memory_sdk import DEFAULT_ENDPOINT, ConfigurationError, MemoryClient, SvcOptions
from memory_sdk.config import load_settings
from tests.unit.fakes import ADMIN_KEY, ENDPOINT, FakeService

pytestmark = pytest.mark.anyio

OTHER_KEY = "sv" + "c_unitTestOtherKey00000000000000000000000000000"


def whoami_answer() -> httpx.Response:
    return httpx.Response(
        200, json={"userId": "usr_1", "credential": "api_key", "scopes": ["memory"]}
    )


# -- defaults and each variable --------------------------------------------------------------


def test_defaults_without_environment_are_bolt_and_the_hosted_url() -> None:
    settings = load_settings()

    assert settings.backend == "bolt"
    assert settings.backend_defaulted
    assert settings.endpoint == DEFAULT_ENDPOINT
    assert settings.api_key is None
    assert settings.workspace_id is None
    assert settings.svc == SvcOptions()


def test_memory_api_key_selects_the_svc_backend(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMORY_API_KEY", ADMIN_KEY)

    settings = load_settings()

    assert settings.backend == "svc"
    assert settings.api_key is not None
    assert settings.api_key.get_secret_value() == ADMIN_KEY
    assert ADMIN_KEY not in repr(settings)
    assert ADMIN_KEY not in str(settings)


@pytest.mark.parametrize("value", ["svc", "SVC", " svc "])
def test_nam_backend_svc_without_a_key(monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setenv("NAM_BACKEND", value)

    settings = load_settings()

    assert settings.backend == "svc"
    assert not settings.backend_defaulted


def test_nam_backend_bolt_wins_over_an_api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMORY_API_KEY", ADMIN_KEY)
    monkeypatch.setenv("NAM_BACKEND", "bolt")

    settings = load_settings()

    assert settings.backend == "bolt"


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("https://memory.example.org/", "https://memory.example.org"),
        ("https://memory.example.org/stage", "https://memory.example.org/stage"),
        ("http://127.0.0.1:8000", "http://127.0.0.1:8000"),
        ("http://127.1.2.3", "http://127.1.2.3"),
        ("http://127.255.255.254:9/", "http://127.255.255.254:9"),
        ("http://localhost:8000/", "http://localhost:8000"),
        ("http://LOCALHOST:8000", "http://LOCALHOST:8000"),
        ("http://[::1]:8000", "http://[::1]:8000"),
        ("http://[0:0:0:0:0:0:0:1]:8000", "http://[0:0:0:0:0:0:0:1]:8000"),
    ],
)
def test_memory_endpoint_overrides_the_url(
    monkeypatch: pytest.MonkeyPatch, value: str, expected: str
) -> None:
    monkeypatch.setenv("MEMORY_ENDPOINT", value)

    settings = load_settings()

    assert settings.endpoint == expected


async def test_memory_workspace_id_is_sent_as_x_workspace_id(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("MEMORY_API_KEY", ADMIN_KEY)
    monkeypatch.setenv("MEMORY_ENDPOINT", ENDPOINT)
    monkeypatch.setenv("MEMORY_WORKSPACE_ID", "ws_env")
    fake = FakeService(whoami_answer())

    async with MemoryClient(http_transport=fake.transport()) as client:
        await client.auth.whoami()

    assert client.workspace_id == "ws_env"
    assert client.settings.workspace_id == "ws_env"
    assert fake.requests[0].headers["X-Workspace-Id"] == "ws_env"
    assert fake.requests[0].headers["Authorization"] == f"Bearer {ADMIN_KEY}"


async def test_no_x_workspace_id_without_a_workspace(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMORY_API_KEY", ADMIN_KEY)
    fake = FakeService(whoami_answer())

    async with MemoryClient(endpoint=ENDPOINT, http_transport=fake.transport()) as client:
        await client.auth.whoami()

    assert "X-Workspace-Id" not in fake.requests[0].headers


@pytest.mark.parametrize(
    ("variable", "value", "field", "expected"),
    [
        ("NAM_SVC__TIMEOUT", "2.5", "timeout", 2.5),
        ("NAM_SVC__RETRIES", "0", "retries", 0),
        ("NAM_SVC__BACKOFF", "0.1", "backoff", 0.1),
        ("NAM_SVC__BACKOFF_MAX", "3", "backoff_max", 3.0),
        ("NAM_SVC__RETRY_AFTER_MAX", "5", "retry_after_max", 5.0),
        ("NAM_SVC__HEADERS", '{"X-Trace": "on"}', "headers", {"X-Trace": "on"}),
        ("NAM_SVC__HEADERS__X-Trace", "on", "headers", {"x-trace": "on"}),
        ("nam_svc__timeout", "4", "timeout", 4.0),
        ("NAM_SVC", '{"timeout": 7, "retries": 1}', "timeout", 7.0),
    ],
)
def test_nam_svc_nested_overrides(
    monkeypatch: pytest.MonkeyPatch, variable: str, value: str, field: str, expected: Any
) -> None:
    monkeypatch.setenv(variable, value)

    settings = load_settings()

    assert getattr(settings.svc, field) == expected


async def test_nam_svc_headers_are_sent(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NAM_SVC__HEADERS", '{"X-Trace": "on"}')
    fake = FakeService(whoami_answer())

    async with MemoryClient(
        api_key=ADMIN_KEY, endpoint=ENDPOINT, http_transport=fake.transport()
    ) as client:
        await client.auth.whoami()

    assert fake.requests[0].headers["X-Trace"] == "on"


def test_graphdb_password_is_read_by_the_bolt_backend(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GRAPHDB_PASSWORD", "graph-" + "password")

    client = MemoryClient()

    assert client.backend == "bolt"
    assert client.bolt is not None
    assert client.bolt.graphdb_password is not None
    assert client.bolt.graphdb_password.get_secret_value() == "graph-" + "password"
    assert "graph-" + "password" not in repr(client.bolt)


def test_graphdb_password_is_not_read_by_the_svc_backend(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GRAPHDB_PASSWORD", "graph-" + "password")
    monkeypatch.setenv("MEMORY_API_KEY", ADMIN_KEY)

    client = MemoryClient()

    assert client.backend == "svc"
    assert client.bolt is None
    assert "graphdb" not in client.settings.model_dump()


@pytest.mark.parametrize("variable", ["MEMORY_API_KEY", "MEMORY_ENDPOINT", "NAM_BACKEND"])
def test_an_empty_variable_counts_as_unset(monkeypatch: pytest.MonkeyPatch, variable: str) -> None:
    monkeypatch.setenv(variable, "")

    settings = load_settings()

    assert settings.backend == "bolt"
    assert settings.endpoint == DEFAULT_ENDPOINT


# -- precedence: explicit arguments win --------------------------------------------------------


@pytest.mark.parametrize(
    ("variable", "env_value", "argument", "arg_value", "read"),
    [
        ("MEMORY_API_KEY", ADMIN_KEY, "api_key", OTHER_KEY, lambda s: s.api_key.get_secret_value()),
        (
            "MEMORY_ENDPOINT",
            "https://env.example",
            "endpoint",
            "https://arg.example",
            lambda s: s.endpoint,
        ),
        ("MEMORY_WORKSPACE_ID", "ws_env", "workspace_id", "ws_arg", lambda s: s.workspace_id),
        ("NAM_BACKEND", "bolt", "backend", "svc", lambda s: s.backend),
        ("NAM_SVC__TIMEOUT", "9", "svc", {"timeout": 1.5}, lambda s: s.svc.timeout),
    ],
)
def test_explicit_arguments_win_over_the_environment(
    monkeypatch: pytest.MonkeyPatch,
    variable: str,
    env_value: str,
    argument: str,
    arg_value: Any,
    read: Any,
) -> None:
    monkeypatch.setenv(variable, env_value)

    settings = load_settings(**{argument: arg_value})

    expected = arg_value["timeout"] if argument == "svc" else arg_value
    assert read(settings) == expected


def test_explicit_svc_options_merge_with_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NAM_SVC__RETRIES", "5")
    monkeypatch.setenv("NAM_SVC__TIMEOUT", "9")

    settings = load_settings(svc=SvcOptions(timeout=1.5))

    assert settings.svc.timeout == 1.5
    assert settings.svc.retries == 5


def test_explicit_graphdb_password_wins(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GRAPHDB_PASSWORD", "from-" + "env")

    client = MemoryClient(graphdb_password="from-" + "argument")

    assert client.bolt is not None
    assert client.bolt.graphdb_password is not None
    assert client.bolt.graphdb_password.get_secret_value() == "from-" + "argument"


def test_an_explicit_key_selects_svc_like_the_variable() -> None:
    client = MemoryClient(api_key=ADMIN_KEY)

    assert client.backend == "svc"


def test_a_user_token_selects_svc_unless_the_backend_is_forced(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    token = "eyJ" + "hbGciOiJSUzI1NiJ9.e30.c2ln"

    defaulted = MemoryClient(access_token=token)
    monkeypatch.setenv("NAM_BACKEND", "bolt")
    forced = MemoryClient(access_token=token)

    assert defaulted.backend == "svc"
    assert forced.backend == "bolt"


# -- invalid values --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("variable", "value"),
    [
        ("MEMORY_API_KEY", "sk-live-" + "notAMemoryKey1234"),
        ("MEMORY_API_KEY", "sv" + "c_has a space inside"),
        ("MEMORY_ENDPOINT", "not a url"),
        ("MEMORY_ENDPOINT", "ftp://memory.example.org"),
        ("MEMORY_ENDPOINT", "http://memory.example.org"),
        ("MEMORY_ENDPOINT", "https://user:pw@memory.example.org"),
        ("MEMORY_WORKSPACE_ID", "ws bad/id"),
        ("NAM_BACKEND", "neo4j"),
        ("NAM_SVC__TIMEOUT", "soon"),
        ("NAM_SVC__TIMEOUT", "0"),
        ("NAM_SVC__RETRIES", "-1"),
        ("NAM_SVC__RETRIES", "99"),
        ("NAM_SVC__BACKOFF", "fast"),
        ("NAM_SVC__BACKOFF_MAX", "-2"),
        ("NAM_SVC__RETRY_AFTER_MAX", "x"),
        ("NAM_SVC__HEADERS", '{"Authorization": "Bearer x"}'),
        ("NAM_SVC__TIMEOT", "3"),
    ],
)
def test_an_invalid_variable_is_a_configuration_error_naming_it(
    monkeypatch: pytest.MonkeyPatch, variable: str, value: str
) -> None:
    monkeypatch.setenv(variable, value)

    with pytest.raises(ConfigurationError) as raised:
        MemoryClient()

    error = raised.value
    assert error.variable == variable
    assert variable in str(error)
    assert error.__context__ is None and error.__cause__ is None
    assert isinstance(error, ValueError)


@pytest.mark.parametrize(
    ("endpoint", "host"),
    [
        ("http://memory.example.org", "memory.example.org"),
        ("http://10.0.0.8:8000/stage", "10.0.0.8"),
        ("http://192.168.1.1", "192.168.1.1"),
        ("http://localhost.example.org", "localhost.example.org"),
        ("http://127.0.0.1.example.org", "127.0.0.1.example.org"),
        ("http://[::ffff:127.0.0.1]", "::ffff:127.0.0.1"),
        ("http://[::2]", "::2"),
        ("http://0.0.0.0:8000", "0.0.0.0"),
    ],
)
def test_plain_http_is_refused_outside_loopback_naming_scheme_and_host(
    endpoint: str, host: str
) -> None:
    with pytest.raises(ConfigurationError) as raised:
        MemoryClient(api_key=ADMIN_KEY, endpoint=endpoint)

    message = str(raised.value)
    assert raised.value.variable == "argument endpoint"
    assert f"uses scheme http with host {host}:" in message
    assert "use https" in message
    assert ADMIN_KEY not in message and ADMIN_KEY not in repr(raised.value)


def test_plain_http_from_the_environment_is_refused_before_any_request(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("MEMORY_API_KEY", ADMIN_KEY)
    monkeypatch.setenv("MEMORY_ENDPOINT", "http://memory.example.org")
    fake = FakeService()

    with pytest.raises(ConfigurationError) as raised:
        MemoryClient(http_transport=fake.transport())

    assert raised.value.variable == "MEMORY_ENDPOINT"
    assert "scheme http with host memory.example.org" in str(raised.value)
    assert fake.requests == []


def test_an_invalid_key_is_never_echoed(monkeypatch: pytest.MonkeyPatch) -> None:
    almost_a_key = "sk_" + "live0123456789abcdefghijklmnop"
    monkeypatch.setenv("MEMORY_API_KEY", almost_a_key)

    with pytest.raises(ConfigurationError) as raised:
        MemoryClient()

    assert almost_a_key not in str(raised.value)
    assert almost_a_key not in repr(raised.value)


@pytest.mark.parametrize("variable", ["NAM_SVC", "NAM_SVC__HEADERS"])
def test_unparsable_json_is_a_configuration_error(
    monkeypatch: pytest.MonkeyPatch, variable: str
) -> None:
    monkeypatch.setenv(variable, "{not json")

    with pytest.raises(ConfigurationError) as raised:
        load_settings()

    assert variable in str(raised.value)
    assert raised.value.__context__ is None


def test_an_invalid_argument_is_named_as_the_argument(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMORY_ENDPOINT", "https://fine.example")

    with pytest.raises(ConfigurationError) as raised:
        MemoryClient(endpoint="ftp://nope")

    assert raised.value.variable == "argument endpoint"


def test_an_invalid_svc_argument_is_named_by_its_field() -> None:
    with pytest.raises(ConfigurationError) as raised:
        load_settings(svc={"retries": -1})

    assert raised.value.variable == "argument svc.retries"
