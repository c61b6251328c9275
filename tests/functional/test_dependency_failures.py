"""Fail closed: when DynamoDB or KMS fails, the answer is 503, never an authorization."""

from __future__ import annotations

from typing import Any

import pytest
from botocore.exceptions import ParamValidationError, ReadTimeoutError

from tests.functional.conftest import Api
from tests.functional.failures import broken, failing_with, throttled

KEYS = "/v1/auth/api-keys"


@pytest.mark.parametrize("failure", [broken, throttled], ids=["unreachable", "throttled"])
def test_dynamodb_failure_on_key_lookup_is_503_never_allow(
    api: Api, alice: str, monkeypatch: pytest.MonkeyPatch, failure: Any
) -> None:
    key = api.create_key(alice)
    monkeypatch.setattr(api.services.dynamodb, "get_item", failure)
    answer = api.call("GET", "/v1/auth/whoami", key["key"])
    assert answer.status == 503
    assert answer.code == "dependency_unavailable"
    assert key["key"].encode() not in answer.body


def test_dynamodb_failure_on_membership_check_is_503(
    api: Api, alice: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = api.workspace(alice)
    monkeypatch.setattr(api.services.dynamodb, "get_item", broken)
    answer = api.call("GET", "/v1/auth/whoami", alice, workspace=ws)
    assert answer.status == 503


def test_kms_failure_on_create_is_503_and_writes_nothing(
    api: Api, alice: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(api.services.kms, "encrypt", broken)
    answer = api.call("POST", KEYS, alice, body={"label": "x"})
    assert answer.status == 503
    assert answer.code == "dependency_unavailable"
    monkeypatch.undo()
    assert api.call("GET", KEYS, alice).json["keys"] == []


def test_kms_failure_on_reveal_is_503(
    api: Api, alice: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    key = api.create_key(alice)
    monkeypatch.setattr(api.services.kms, "decrypt", broken)
    answer = api.call("GET", f"{KEYS}/{key['id']}/reveal", alice)
    assert answer.status == 503
    assert key["key"].encode() not in answer.body


def test_dynamodb_failure_during_rotation_is_503_and_the_old_key_keeps_working(
    api: Api, alice: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    key = api.create_key(alice)
    monkeypatch.setattr(api.services.dynamodb, "update_item", broken)
    assert api.call("POST", f"{KEYS}/{key['id']}/rotate", alice).status == 503
    monkeypatch.undo()
    assert api.call("GET", "/v1/auth/whoami", key["key"]).status == 200
    assert len(api.call("GET", KEYS, alice).json["keys"]) == 1


def test_signing_key_unavailable_means_user_tokens_are_refused_with_503(
    api: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    token = api.token("usr_alice")
    from chalicelib.sessions.access_tokens import SigningKeys

    cold = SigningKeys(api.services.kms, api.services.settings.signing_key_ids)
    monkeypatch.setattr(api.services.kms, "get_public_key", broken)
    api.services.__dict__["signing_keys"] = cold
    api.services.__dict__.pop("verifier", None)
    answer = api.call("GET", "/v1/auth/whoami", token)
    assert answer.status == 503


def test_a_dynamodb_validation_error_is_a_500_not_a_retryable_503(
    api: Api, alice: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    key = api.create_key(alice)
    monkeypatch.setattr(api.services.dynamodb, "get_item", failing_with("ValidationException"))
    answer = api.call("GET", "/v1/auth/whoami", key["key"])
    assert answer.status == 500
    assert answer.code == "internal_error"


def test_an_unexpected_error_is_a_problem_500_without_details(
    api: Api, alice: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    def bug(*_: Any, **__: Any) -> Any:
        raise RuntimeError("internal detail that must not leak")

    monkeypatch.setattr(api.services.key_service, "list", bug)
    answer = api.call("GET", KEYS, alice)
    assert answer.status == 500
    assert answer.code == "internal_error"
    assert b"internal detail" not in answer.body


def test_a_dependency_failure_no_store_named_is_still_503_never_500(
    api: Api, alice: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    def stalls(*_: Any, **__: Any) -> Any:
        raise ReadTimeoutError(endpoint_url="https://kms.invalid")

    monkeypatch.setattr(api.services.key_service, "list", stalls)
    answer = api.call("GET", KEYS, alice)
    assert answer.status == 503
    assert answer.code == "dependency_unavailable"


def test_a_request_we_built_wrongly_is_a_bug_500_not_a_503(
    api: Api, alice: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    def invalid(*_: Any, **__: Any) -> Any:
        raise ParamValidationError(report="Invalid type for parameter Key")

    monkeypatch.setattr(api.services.key_service, "list", invalid)
    answer = api.call("GET", KEYS, alice)
    assert answer.status == 500
    assert answer.code == "internal_error"


def test_a_dependency_failure_on_a_token_endpoint_is_temporarily_unavailable(
    api: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(api.services.session_service, "refresh", broken)
    answer = api.call("POST", "/v1/auth/refresh", body={"refresh_token": "r" + "t_" + "A" * 43})
    assert answer.status == 503
    assert answer.json["error"] == "temporarily_unavailable"
    assert answer.headers["Cache-Control"] == "no-store"
