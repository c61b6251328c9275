"""Regression tests for issues found in review: each would have been a bug in production."""

from __future__ import annotations

from typing import Any

import pytest

from tests.functional.conftest import Api
from tests.functional.failures import failing_with, transaction_conflict

KEYS = "/v1/auth/api-keys"


def test_a_narrower_admin_key_cannot_reveal_a_broader_key(api: Api, alice: str) -> None:
    narrow = api.create_key(alice, scopes=["workspace:admin"])
    broad = api.create_key(alice)
    answer = api.call("GET", f"{KEYS}/{broad['id']}/reveal", narrow["key"])
    assert answer.status == 403
    assert answer.code == "insufficient_scope"
    assert broad["key"].encode() not in answer.body


def test_a_narrower_admin_key_may_reveal_a_key_within_its_scopes(api: Api, alice: str) -> None:
    narrow = api.create_key(alice, scopes=["memory", "workspace:admin"])
    ws = api.workspace(alice)
    inside = api.create_key(alice, category="workspace", workspaceId=ws, scopes=["memory"])
    answer = api.call("GET", f"{KEYS}/{inside['id']}/reveal", narrow["key"])
    assert answer.status == 200


def test_rotation_losing_a_transaction_conflict_is_409_not_503(
    api: Api, alice: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    key = api.create_key(alice)
    monkeypatch.setattr(api.services.dynamodb, "transact_write_items", transaction_conflict)
    answer = api.call("POST", f"{KEYS}/{key['id']}/rotate", alice)
    assert answer.status == 409
    assert answer.code == "key_not_active"


def test_revocation_after_a_transaction_conflict_retries_until_the_key_is_revoked(
    api: Api, alice: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    key = api.create_key(alice)
    real = api.services.dynamodb.transact_write_items
    calls = []

    def conflict_once(**request: Any) -> Any:
        calls.append(1)
        if len(calls) == 1:
            transaction_conflict()
        return real(**request)

    monkeypatch.setattr(api.services.dynamodb, "transact_write_items", conflict_once)
    assert api.call("DELETE", f"{KEYS}/{key['id']}", alice).status == 204
    monkeypatch.undo()
    assert len(calls) == 2
    assert api.call("GET", "/v1/auth/whoami", key["key"]).code == "revoked_credentials"


def test_revocation_never_reports_success_while_conflicts_persist(
    api: Api, alice: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    key = api.create_key(alice)
    monkeypatch.setattr(api.services.dynamodb, "transact_write_items", transaction_conflict)
    answer = api.call("DELETE", f"{KEYS}/{key['id']}", alice)
    assert answer.status == 503
    monkeypatch.undo()
    assert api.call("GET", "/v1/auth/whoami", key["key"]).status == 200


@pytest.mark.parametrize("limit", ["²", "٣", "1" * 5000, "+5", " 5"])
def test_odd_limits_are_400_not_500(api: Api, alice: str, limit: str) -> None:
    from urllib.parse import quote

    answer = api.call("GET", f"{KEYS}?limit={quote(limit)}", alice)
    assert answer.status == 400
    assert answer.code == "invalid_parameter"


def test_deeply_nested_json_is_400_not_500(api: Api, alice: str) -> None:
    raw = b"[" * 5000 + b"]" * 5000
    answer = api.call("POST", KEYS, alice, raw=raw)
    assert answer.status == 400
    assert answer.code == "invalid_json"


def test_deeply_nested_json_on_exchange_is_an_oauth_400(api: Api) -> None:
    raw = b'{"id_token": ' + b"[" * 5000 + b"]" * 5000 + b"}"
    answer = api.call("POST", "/v1/auth/exchange", raw=raw)
    assert answer.status == 400
    assert answer.json["error"] == "invalid_request"


def test_deeply_nested_cursor_is_400(api: Api, alice: str) -> None:
    import base64

    cursor = base64.urlsafe_b64encode(b"[" * 5000 + b"]" * 5000).decode().rstrip("=")
    answer = api.call("GET", f"{KEYS}?cursor={cursor}", alice)
    assert answer.status == 400


def test_a_label_with_a_lone_surrogate_is_400_not_503(api: Api, alice: str) -> None:
    answer = api.call("POST", KEYS, alice, raw=b'{"label": "a\\ud800"}')
    assert answer.status == 400
    assert answer.code == "invalid_label"


def test_a_dynamodb_validation_error_is_a_500_not_a_retryable_503(
    api: Api, alice: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    key = api.create_key(alice)
    monkeypatch.setattr(api.services.dynamodb, "get_item", failing_with("ValidationException"))
    answer = api.call("GET", "/v1/auth/whoami", key["key"])
    assert answer.status == 500
    assert answer.code == "internal_error"
