"""Redaction: no key or token reaches a message, whatever characters a legacy key holds."""

from __future__ import annotations

import httpx
import pytest

from memory_sdk import (
    ApiError,
    AuthenticationError,
    BadRequestError,
    ConfigurationError,
    MemoryClient,
    NetworkError,
    RequestValidationError,
    ServerError,
    ServiceError,
)
from memory_sdk.errors import redact
from tests.unit.fakes import ADMIN_KEY, ENDPOINT, FakeService, problem

pytestmark = pytest.mark.anyio

# Split so that secret scanners stay quiet; not real keys. A legacy key is `legacy_` and any
# printable, non-space ASCII: every one of those characters appears in one of these.
LEGACY = "leg" + "acy_"
LEGACY_KEYS = [
    LEGACY + "ab-cd.ef~gh+ij/kl=mn%op",
    LEGACY + "A1-B2.C3~D4+E5/F6==",
    LEGACY + "%2Fpath%3D~user.name+tag",
    LEGACY + "x!\"#$&'()*,:;<>?@[\\]^_`{|}y",
    LEGACY + "-.~+/=%",
]
ODD_SVC_KEY = "sv" + "c_" + "odd-chars.~+/=%0123456789"


@pytest.mark.parametrize("key", [*LEGACY_KEYS, ODD_SVC_KEY, ADMIN_KEY])
def test_a_key_is_redacted_whole_whatever_its_characters(key: str) -> None:
    prefix = key.split("_", 1)[0]

    clean = redact(f"the key {key} is unknown")

    assert clean == f"the key {prefix}_[redacted] is unknown"
    body = key.split("_", 1)[1]
    assert body not in clean


def test_a_key_at_the_end_of_a_sentence_takes_its_punctuation_with_it() -> None:
    # A legacy key may end in any printable character, so trailing punctuation cannot be told
    # apart from the key: it is redacted too, rather than risk leaving a character of the key.
    assert redact(f"unknown key {LEGACY_KEYS[0]}.") == "unknown key legacy_[redacted]"


def test_prose_hints_and_tokens() -> None:
    jwt = "eyJ" + "hbGciOiJSUzI1NiJ9.eyJzdWIiOiJ1c3JfMSJ9.c2lnbmF0dXJl"
    text = f"hint svc_…abcd, jwt {jwt}, prefix svc_ alone, header Bearer opaque-token-value"

    clean = redact(text)

    assert clean == "hint svc_…abcd, jwt [redacted], prefix svc_ alone, header Bearer [redacted]"


@pytest.mark.parametrize("key", LEGACY_KEYS)
async def test_a_legacy_key_echoed_by_the_service_never_reaches_the_error(key: str) -> None:
    fake = FakeService(problem(401, "invalid_credentials", f"Key {key} is unknown."))

    async with MemoryClient(
        api_key=key, endpoint=ENDPOINT, svc={"retries": 0}, http_transport=fake.transport()
    ) as client:
        with pytest.raises(AuthenticationError) as raised:
            await client.auth.whoami()
        shown = [str(raised.value), repr(raised.value), raised.value.detail, repr(client)]

    assert fake.requests[0].headers["Authorization"] == f"Bearer {key}"
    for text in shown:
        assert key not in text
        assert key[len(LEGACY) :] not in text
    assert raised.value.detail == "Key legacy_[redacted] is unknown."


@pytest.mark.parametrize("key", LEGACY_KEYS)
def test_network_and_configuration_messages_are_redacted(key: str) -> None:
    network = NetworkError(f"GET /x failed for {key}", may_have_reached=True)
    configuration = ConfigurationError([("MEMORY_API_KEY", f"bad value {key}")])

    for error in (network, configuration):
        assert key not in str(error)
        assert "legacy_[redacted]" in str(error)


def test_the_configuration_message_about_key_shapes_survives_redaction(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("MEMORY_API_KEY", "not-a-key-at-all")

    with pytest.raises(ConfigurationError) as raised:
        MemoryClient()

    assert "must be an API key (svc_… or legacy_…) without spaces" in str(raised.value)


def test_the_old_error_names_are_aliases_of_the_new_ones() -> None:
    assert RequestValidationError is BadRequestError
    assert ServiceError is ServerError
    error = BadRequestError(400, "invalid_label", "bad")
    assert isinstance(error, ApiError)
    assert repr(error) == "BadRequestError(status=400, code='invalid_label')"


async def test_a_legacy_key_in_a_token_detail_is_redacted() -> None:
    key = LEGACY_KEYS[1]
    body = {"error": "invalid_grant", "error_description": f"grant {key} refused"}
    fake = FakeService(httpx.Response(400, json=body))

    async with MemoryClient(
        api_key=ADMIN_KEY, endpoint=ENDPOINT, http_transport=fake.transport()
    ) as client:
        with pytest.raises(ApiError) as raised:
            await client.auth.refresh_access_token("rt_" + "unitTestRefresh")

    assert key not in str(raised.value)
    assert raised.value.detail == "grant legacy_[redacted] refused"
