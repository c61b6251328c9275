"""POST /v1/auth/refresh: single-use, rotated, hashed refresh tokens with reuse detection."""

from __future__ import annotations

import hashlib
import json
from typing import Any

import pytest

from chalicelib.clock import FrozenClock, epoch
from chalicelib.runtime import Services
from chalicelib.sessions.refresh import RETRY_WINDOW, REUSED, RefreshRejected
from tests.functional.conftest import Api
from tests.functional.failures import broken
from tests.functional.oauth import REFRESH, assert_oauth_error, exchange, form, refresh, trust
from tests.oidc_issuer import FakeIssuer


@pytest.fixture
def idp(services: Services) -> FakeIssuer:
    issuer = FakeIssuer()
    trust(services, issuer)
    return issuer


@pytest.fixture
def signed_in(api: Api, idp: FakeIssuer) -> dict[str, Any]:
    """The token pair of a fresh sign-in."""
    answer = exchange(api, idp.id_token("alice"))
    assert answer.status == 200, answer.body
    return dict(answer.json)


def test_refresh_answers_a_new_pair_for_the_same_user(api: Api, signed_in: dict[str, Any]) -> None:
    answer = refresh(api, signed_in["refresh_token"])
    assert answer.status == 200, answer.body
    assert set(answer.json) == {"access_token", "token_type", "expires_in", "refresh_token"}
    assert answer.headers["Cache-Control"] == "no-store"
    assert answer.json["refresh_token"] != signed_in["refresh_token"]
    whoami = api.call("GET", "/v1/auth/whoami", answer.json["access_token"]).json
    assert whoami["userId"] == api.services.verifier.verify(signed_in["access_token"])["sub"]


def test_each_refresh_token_in_the_chain_works_once(api: Api, signed_in: dict[str, Any]) -> None:
    current = signed_in["refresh_token"]
    for _ in range(3):
        answer = refresh(api, current)
        assert answer.status == 200, answer.body
        current = answer.json["refresh_token"]


def test_reusing_a_refresh_token_after_its_successor_was_used_revokes_the_whole_family(
    api: Api, signed_in: dict[str, Any]
) -> None:
    first = signed_in["refresh_token"]
    second = refresh(api, first).json["refresh_token"]
    third = refresh(api, second).json["refresh_token"]
    reused = refresh(api, first)  # a copy of the first token, presented again
    after = refresh(api, third)  # the legitimate holder's newest token
    assert_oauth_error(reused, 400, "invalid_grant")
    assert "already used" in reused.json["error_description"]
    assert_oauth_error(after, 400, "invalid_grant")
    assert "revoked" in after.json["error_description"]


def test_reusing_a_refresh_token_after_the_retry_window_revokes_the_whole_family(
    api: Api, clock: FrozenClock, signed_in: dict[str, Any]
) -> None:
    first = signed_in["refresh_token"]
    second = refresh(api, first).json["refresh_token"]
    clock.advance(seconds=RETRY_WINDOW.total_seconds() + 1)
    reused = refresh(api, first)
    after = refresh(api, second)
    assert_oauth_error(reused, 400, "invalid_grant")
    assert "already used" in reused.json["error_description"]
    assert_oauth_error(after, 400, "invalid_grant")


def test_a_refresh_retried_within_the_window_answers_the_same_successor(
    api: Api, clock: FrozenClock, signed_in: dict[str, Any]
) -> None:
    first = signed_in["refresh_token"]
    answered = refresh(api, first).json  # the answer the client never received
    clock.advance(seconds=RETRY_WINDOW.total_seconds())
    retried = refresh(api, first)
    assert retried.status == 200, retried.body
    assert retried.json["refresh_token"] == answered["refresh_token"]
    assert api.call("GET", "/v1/auth/whoami", retried.json["access_token"]).status == 200
    # The family is intact: the successor refreshes, and its own successor does too.
    onward = refresh(api, retried.json["refresh_token"])
    assert onward.status == 200, onward.body
    assert refresh(api, onward.json["refresh_token"]).status == 200


def test_a_retried_refresh_stores_nothing_new(api: Api, signed_in: dict[str, Any]) -> None:
    first = signed_in["refresh_token"]
    refresh(api, first)
    before = api.services.dynamodb.scan(TableName=api.services.settings.table_name)["Items"]
    refresh(api, first)
    after = api.services.dynamodb.scan(TableName=api.services.settings.table_name)["Items"]
    assert sorted(map(str, after)) == sorted(map(str, before))


def test_reuse_in_one_sign_in_leaves_other_sign_ins_alone(
    api: Api, clock: FrozenClock, idp: FakeIssuer
) -> None:
    laptop = exchange(api, idp.id_token("alice")).json["refresh_token"]
    phone = exchange(api, idp.id_token("alice")).json["refresh_token"]
    refresh(api, laptop)
    clock.advance(minutes=2)
    assert refresh(api, laptop).status == 400  # reuse: the laptop's family is revoked
    assert refresh(api, phone).status == 200


def test_two_concurrent_refreshes_with_one_token_get_the_same_successor(
    services: Services, signed_in: dict[str, Any]
) -> None:
    store, now = services.refresh_tokens, services.clock.now()
    token = signed_in["refresh_token"]
    successor = services.refresh_successors.successor_of(token)
    # Both requests read the token before either consumed it: a client retrying at once.
    first = store.find(token, now)
    second = store.find(token, now)
    store.rotate(first, successor, now)
    store.rotate(second, successor, now)
    assert store.find(successor, now).used_at is None


def test_a_used_token_rotated_to_another_successor_is_reuse(
    services: Services, signed_in: dict[str, Any]
) -> None:
    store, now = services.refresh_tokens, services.clock.now()
    token = signed_in["refresh_token"]
    successor = services.refresh_successors.successor_of(token)
    first = store.find(token, now)
    second = store.find(token, now)
    store.rotate(first, successor, now)
    forged = "r" + "t_" + "B" * 43  # not the token's successor: someone else consumed it
    with pytest.raises(RefreshRejected) as rejected:
        store.rotate(second, forged, now)
    assert rejected.value.description == REUSED
    with pytest.raises(RefreshRejected):
        store.find(successor, now)


def test_refresh_token_lives_thirty_days(
    api: Api, clock: FrozenClock, signed_in: dict[str, Any]
) -> None:
    clock.advance(days=29, hours=23)
    alive = refresh(api, signed_in["refresh_token"])
    clock.advance(days=30)
    expired = refresh(api, alive.json["refresh_token"])
    assert alive.status == 200
    assert_oauth_error(expired, 400, "invalid_grant")
    assert "expired" in expired.json["error_description"]


def test_refresh_tokens_are_stored_only_as_sha256_with_a_ttl(
    api: Api, clock: FrozenClock, signed_in: dict[str, Any]
) -> None:
    plaintext = signed_in["refresh_token"]
    digest = hashlib.sha256(plaintext.encode()).hexdigest()
    items = api.services.dynamodb.scan(TableName=api.services.settings.table_name)["Items"]
    assert plaintext not in json.dumps(items)
    stored = next(i for i in items if i["pk"]["S"] == f"REFRESH#{digest}")
    assert int(stored["ttl"]["N"]) == epoch(clock.now()) + 30 * 24 * 3600


def test_form_refresh_grant_works(api: Api, signed_in: dict[str, Any]) -> None:
    fields = {"grant_type": "refresh_token", "refresh_token": signed_in["refresh_token"]}
    assert form(api, REFRESH, fields).status == 200


@pytest.mark.parametrize(
    "candidate",
    ["r" + "t_" + "A" * 43, "r" + "t_short", "sv" + "c_" + "x" * 40, "e" + "yJ.x.y"],
    ids=["unknown", "malformed", "an api key", "a jwt"],
)
def test_unknown_refresh_token_is_invalid_grant(
    api: Api, signed_in: dict[str, Any], candidate: str
) -> None:
    assert_oauth_error(refresh(api, candidate), 400, "invalid_grant")


def test_access_token_is_not_a_refresh_token(api: Api, signed_in: dict[str, Any]) -> None:
    assert_oauth_error(refresh(api, signed_in["access_token"]), 400, "invalid_grant")


def test_refresh_token_is_not_a_bearer_credential(api: Api, signed_in: dict[str, Any]) -> None:
    answer = api.call("GET", "/v1/auth/whoami", signed_in["refresh_token"])
    assert answer.status == 401


@pytest.mark.parametrize(
    ("body", "error"),
    [
        ({"refresh_token": 5}, "invalid_request"),
        ({}, "invalid_request"),
        ({"refresh_token": "x", "scope": "memory"}, "invalid_request"),
        ({"refresh_token": "x", "grant_type": "password"}, "unsupported_grant_type"),
    ],
    ids=["not a string", "missing", "unknown field", "another grant"],
)
def test_malformed_refresh_request_gets_its_rfc_error(api: Api, body: Any, error: str) -> None:
    assert_oauth_error(api.call("POST", REFRESH, body=body), 400, error)


def test_form_without_grant_type_is_invalid_request(api: Api) -> None:
    assert_oauth_error(form(api, REFRESH, {"refresh_token": "x"}), 400, "invalid_request")


def test_kms_failure_is_503_and_the_refresh_token_stays_usable(
    api: Api, signed_in: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(api.services.kms, "sign", broken)
    failed = refresh(api, signed_in["refresh_token"])
    monkeypatch.undo()
    retried = refresh(api, signed_in["refresh_token"])
    assert_oauth_error(failed, 503, "temporarily_unavailable")
    assert retried.status == 200


def test_dynamodb_failure_is_503(
    api: Api, signed_in: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(api.services.dynamodb, "get_item", broken)
    assert_oauth_error(refresh(api, signed_in["refresh_token"]), 503, "temporarily_unavailable")
