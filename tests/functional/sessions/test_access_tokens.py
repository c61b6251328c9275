"""User tokens verify locally: the signing keys' public halves are fetched once per process."""

from __future__ import annotations

import json
from typing import Any

import pytest

from chalicelib import runtime
from chalicelib.sessions import access_tokens
from chalicelib.sessions.access_tokens import b64url
from tests.functional.conftest import Api, another_container

WHOAMI = "/v1/auth/whoami"


def with_kid(kid: str) -> str:
    """A token of our shape whose `kid` names no key of ours (its signature never matters)."""
    header = {"alg": "RS256", "typ": "at+jwt", "kid": kid}
    return ".".join(
        (b64url(json.dumps(header).encode()), b64url(b'{"sub":"usr_a"}'), b64url(b"sig"))
    )


@pytest.fixture
def public_key_fetches(api: Api, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """A fresh container (nothing fetched yet); the GetPublicKey calls it makes."""
    runtime.use(another_container(api.services))
    real = api.services.kms.get_public_key
    calls: list[str] = []

    def counted(**request: Any) -> Any:
        calls.append(request["KeyId"])
        return real(**request)

    monkeypatch.setattr(api.services.kms, "get_public_key", counted)
    return calls


def test_many_verifications_fetch_each_public_key_once(
    api: Api, alice: str, public_key_fetches: list[str]
) -> None:
    for _ in range(5):
        assert api.call("GET", WHOAMI, alice).status == 200
    assert public_key_fetches == [api.services.settings.signing_key_id]


def test_an_unknown_kid_refreshes_the_keys_at_most_once_a_minute(
    api: Api, alice: str, public_key_fetches: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    now = [1_000.0]
    monkeypatch.setattr(access_tokens, "monotonic", lambda: now[0])
    assert api.call("GET", WHOAMI, alice).status == 200
    for kid in ("made-up-1", "made-up-2"):
        assert api.call("GET", WHOAMI, with_kid(kid)).code == "invalid_credentials"
    assert len(public_key_fetches) == 1
    now[0] += access_tokens.SigningKeys.REFRESH_INTERVAL + 1
    assert api.call("GET", WHOAMI, with_kid("made-up-3")).code == "invalid_credentials"
    assert api.call("GET", WHOAMI, with_kid("made-up-4")).code == "invalid_credentials"
    assert len(public_key_fetches) == 2
    assert api.call("GET", WHOAMI, alice).status == 200
