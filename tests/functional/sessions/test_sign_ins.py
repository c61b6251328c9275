"""A person's sign-ins: every access token names its sign-in (`sid`) and ends with it, on the
very next request; GET /v1/auth/sessions lists them, DELETE ends one or all of them."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from chalicelib.clock import FrozenClock, parse_rfc3339, rfc3339
from chalicelib.runtime import Services
from tests.functional.conftest import Answer, Api
from tests.functional.oauth import (
    assert_oauth_error,
    delegate,
    delegated,
    refresh,
    trust,
)
from tests.oidc_issuer import FakeIssuer

SESSIONS = "/v1/auth/sessions"
WHOAMI = "/v1/auth/whoami"
KEYS = "/v1/auth/api-keys"
REVOKE = "/v1/auth/revoke"
FIELDS = {"id", "createdAt", "lastRefreshedAt", "expiresAt", "userAgent", "ipAddress", "current"}


@pytest.fixture
def idp(services: Services) -> FakeIssuer:
    issuer = FakeIssuer()
    trust(services, issuer)
    return issuer


def sign_in(api: Api, idp: FakeIssuer, subject: str = "alice", **headers: str) -> dict[str, Any]:
    """The token pair of a new sign-in of `subject` at the exchange."""
    answer = api.call(
        "POST", "/v1/auth/exchange", body={"id_token": idp.id_token(subject)}, headers=headers
    )
    assert answer.status == 200, answer.body
    return dict(answer.json)


def session_id(api: Api, pair: dict[str, Any]) -> str:
    return str(api.services.verifier.verify(pair["access_token"])["sid"])


def assert_revoked(answer: Answer) -> None:
    assert answer.status == 401, answer.body
    assert answer.code == "revoked_credentials"


def sign_out(api: Api, pair: dict[str, Any]) -> None:
    assert api.call("POST", REVOKE, body={"token": pair["refresh_token"]}).status == 200


def sessions_of(api: Api, token: str) -> list[dict[str, Any]]:
    answer = api.call("GET", SESSIONS, token)
    assert answer.status == 200, answer.body
    return list(answer.json["sessions"])


# -- sign-out ends the access token on the very next request -----------------------------


def test_after_sign_out_the_access_token_is_401_revoked_credentials_at_whoami(
    api: Api, idp: FakeIssuer
) -> None:
    pair = sign_in(api, idp)
    assert api.call("GET", WHOAMI, pair["access_token"]).status == 200

    sign_out(api, pair)

    assert_revoked(api.call("GET", WHOAMI, pair["access_token"]))


def test_after_sign_out_the_access_token_cannot_create_an_admin_key_401_revoked_credentials(
    api: Api, idp: FakeIssuer
) -> None:
    pair = sign_in(api, idp)

    sign_out(api, pair)
    answer = api.call("POST", KEYS, pair["access_token"], body={"category": "admin"})

    assert_revoked(answer)
    again = sign_in(api, idp)
    assert api.call("GET", KEYS, again["access_token"]).json["keys"] == []


def session_owner(api: Api, pair: dict[str, Any]) -> str:
    return str(api.services.verifier.verify(pair["access_token"])["sub"])


def test_after_sign_out_every_access_token_of_the_sign_in_is_refused(
    api: Api, idp: FakeIssuer
) -> None:
    pair = sign_in(api, idp)
    refreshed = refresh(api, pair["refresh_token"]).json

    sign_out(api, refreshed)

    for token in (pair["access_token"], refreshed["access_token"]):
        assert_revoked(api.call("GET", WHOAMI, token))


def test_sign_out_leaves_the_persons_other_sign_ins_working(api: Api, idp: FakeIssuer) -> None:
    laptop, phone = sign_in(api, idp), sign_in(api, idp)

    sign_out(api, laptop)

    assert api.call("GET", WHOAMI, phone["access_token"]).status == 200


def test_refreshed_access_tokens_name_the_same_sign_in(api: Api, idp: FakeIssuer) -> None:
    pair = sign_in(api, idp)

    refreshed = refresh(api, pair["refresh_token"]).json

    assert session_id(api, refreshed) == session_id(api, pair)


def test_reuse_detection_ends_the_access_token_401_revoked_credentials(
    api: Api, idp: FakeIssuer, clock: FrozenClock
) -> None:
    pair = sign_in(api, idp)
    successor = refresh(api, pair["refresh_token"]).json
    clock.advance(minutes=2)  # past the retry window: presenting the first token is reuse

    assert_oauth_error(refresh(api, pair["refresh_token"]), 400, "invalid_grant")

    for token in (pair["access_token"], successor["access_token"]):
        assert_revoked(api.call("GET", WHOAMI, token))


def test_a_token_delegated_from_a_user_token_ends_with_its_sign_in(
    api: Api, idp: FakeIssuer
) -> None:
    pair = sign_in(api, idp)
    workspace = api.workspace(pair["access_token"])
    token = delegated(api, pair["access_token"], workspace_id=workspace)
    handed_on = delegated(api, token, workspace_id=workspace)
    assert api.call("GET", WHOAMI, token).status == 200

    sign_out(api, pair)

    for credential in (token, handed_on):
        assert_revoked(api.call("GET", WHOAMI, credential))
    refused = delegate(api, token, workspace_id=workspace)
    assert_oauth_error(refused, 401, "invalid_token")
    assert refused.json["error_description"].startswith("revoked_credentials")


def test_a_token_delegated_from_a_user_token_carries_its_sign_in(
    api: Api, idp: FakeIssuer
) -> None:
    pair = sign_in(api, idp)
    workspace = api.workspace(pair["access_token"])

    token = delegated(api, pair["access_token"], workspace_id=workspace)

    assert api.services.verifier.verify(token)["sid"] == session_id(api, pair)


def test_a_user_token_without_a_sign_in_is_401_invalid_credentials(
    api: Api, services: Services
) -> None:
    from chalicelib.clock import Clock
    from chalicelib.sessions.access_tokens import TokenSigner

    signer = TokenSigner(services.kms, services.signing_keys, services.settings.issuer, Clock())
    before_sessions = signer.mint("usr_alice").token  # as minted before tokens named one

    answer = api.call("GET", WHOAMI, before_sessions)

    assert answer.status == 401
    assert answer.code == "invalid_credentials"
    assert "sign in again" in answer.json["detail"]


def test_a_user_token_naming_a_sign_in_of_someone_else_is_401_revoked_credentials(
    api: Api, idp: FakeIssuer, services: Services
) -> None:
    from chalicelib.clock import Clock
    from chalicelib.sessions.access_tokens import TokenSigner

    bobs = session_id(api, sign_in(api, idp, "bob"))
    signer = TokenSigner(services.kms, services.signing_keys, services.settings.issuer, Clock())
    token = signer.mint("usr_alice", extra={"sid": bobs}).token

    assert_revoked(api.call("GET", WHOAMI, token))


# -- GET /v1/auth/sessions ----------------------------------------------------------------


def test_sessions_lists_the_callers_live_sign_ins_newest_first_with_the_current_marked(
    api: Api, idp: FakeIssuer, clock: FrozenClock
) -> None:
    first = sign_in(api, idp)
    clock.advance(seconds=10)
    second = sign_in(api, idp)
    clock.advance(seconds=10)
    sign_in(api, idp, "bob")  # someone else's: never listed

    found = sessions_of(api, first["access_token"])

    assert [s["id"] for s in found] == [session_id(api, second), session_id(api, first)]
    assert [s["current"] for s in found] == [False, True]
    assert all(set(s) == FIELDS for s in found)


def test_a_listed_sign_in_says_when_and_where_it_began_and_when_it_ends(
    api: Api, idp: FakeIssuer, clock: FrozenClock
) -> None:
    began = clock.now()
    pair = sign_in(api, idp, **{"User-Agent": "memory-cli/2.0 " + "x" * 300})

    (listed,) = sessions_of(api, pair["access_token"])

    assert listed["createdAt"] == rfc3339(began)
    assert listed["lastRefreshedAt"] is None
    assert listed["expiresAt"] == rfc3339(began + timedelta(days=30))
    assert listed["userAgent"] == ("memory-cli/2.0 " + "x" * 300)[:200]
    assert listed["ipAddress"] == "127.0.0.1"


def test_a_refresh_shows_in_the_list_and_moves_the_end(
    api: Api, idp: FakeIssuer, clock: FrozenClock
) -> None:
    pair = sign_in(api, idp)
    clock.advance(seconds=30)  # the tokens minted then are valid by the wall clock: not more
    refreshed = refresh(api, pair["refresh_token"]).json

    (listed,) = sessions_of(api, refreshed["access_token"])

    assert listed["lastRefreshedAt"] == rfc3339(clock.now())
    assert parse_rfc3339(listed["expiresAt"]) == clock.now() + timedelta(days=30)
    assert listed["current"] is True


def test_an_ended_sign_in_is_not_listed(api: Api, idp: FakeIssuer) -> None:
    ended, kept = sign_in(api, idp), sign_in(api, idp)

    sign_out(api, ended)

    assert [s["id"] for s in sessions_of(api, kept["access_token"])] == [session_id(api, kept)]


def test_sessions_need_a_user_token_403_insufficient_scope(api: Api, idp: FakeIssuer) -> None:
    pair = sign_in(api, idp)
    workspace = api.workspace(pair["access_token"])
    key = api.create_key(pair["access_token"])["key"]
    token = delegated(api, pair["access_token"], workspace_id=workspace)

    for credential in (key, token):
        for method in ("GET", "DELETE"):
            answer = api.call(method, SESSIONS, credential)
            assert (answer.status, answer.code) == (403, "insufficient_scope")
    assert api.call("GET", WHOAMI, pair["access_token"]).status == 200


# -- DELETE /v1/auth/sessions/{id} and DELETE /v1/auth/sessions -------------------------


def test_ending_one_sign_in_is_204_and_refuses_its_tokens_only(api: Api, idp: FakeIssuer) -> None:
    laptop, phone = sign_in(api, idp), sign_in(api, idp)

    answer = api.call("DELETE", f"{SESSIONS}/{session_id(api, phone)}", laptop["access_token"])

    assert answer.status == 204
    assert_revoked(api.call("GET", WHOAMI, phone["access_token"]))
    assert_oauth_error(refresh(api, phone["refresh_token"]), 400, "invalid_grant")
    assert api.call("GET", WHOAMI, laptop["access_token"]).status == 200


def test_ending_the_current_sign_in_refuses_the_token_that_ended_it(
    api: Api, idp: FakeIssuer
) -> None:
    pair = sign_in(api, idp)

    answer = api.call("DELETE", f"{SESSIONS}/{session_id(api, pair)}", pair["access_token"])

    assert answer.status == 204
    assert_revoked(api.call("GET", WHOAMI, pair["access_token"]))


@pytest.mark.parametrize("which", ["another person's", "unknown", "malformed", "ended"])
def test_ending_a_sign_in_that_is_not_the_callers_live_one_is_404(
    api: Api, idp: FakeIssuer, which: str
) -> None:
    alice = sign_in(api, idp)
    bob = sign_in(api, idp, "bob")
    ended = sign_in(api, idp)
    sign_out(api, ended)
    target = {
        "another person's": session_id(api, bob),
        "unknown": "01JD7Q2X9V3K5M8N1P4R6T0W2Y",
        "malformed": "not-a-session",
        "ended": session_id(api, ended),
    }[which]

    answer = api.call("DELETE", f"{SESSIONS}/{target}", alice["access_token"])

    assert (answer.status, answer.code) == (404, "not_found")
    assert api.call("GET", WHOAMI, bob["access_token"]).status == 200


def test_signing_out_everywhere_ends_every_sign_in_of_the_caller_and_no_one_elses(
    api: Api, idp: FakeIssuer
) -> None:
    laptop, phone = sign_in(api, idp), sign_in(api, idp)
    bob = sign_in(api, idp, "bob")

    answer = api.call("DELETE", SESSIONS, laptop["access_token"])

    assert answer.status == 204
    for pair in (laptop, phone):
        assert_revoked(api.call("GET", WHOAMI, pair["access_token"]))
        assert_oauth_error(refresh(api, pair["refresh_token"]), 400, "invalid_grant")
    assert api.call("GET", WHOAMI, bob["access_token"]).status == 200
    assert [s["id"] for s in sessions_of(api, bob["access_token"])] == [session_id(api, bob)]


# -- session.revoked ------------------------------------------------------------------------


def revocations(api: Api, token: str) -> list[dict[str, Any]]:
    answer = api.call("GET", "/v1/auth/events?type=session.revoked", token)
    assert answer.status == 200, answer.body
    return list(answer.json["events"])


def test_each_way_a_sign_in_ends_records_one_session_revoked_event_with_its_reason(
    api: Api, idp: FakeIssuer, clock: FrozenClock
) -> None:
    signed_out, ended, everywhere, reused, viewer = (sign_in(api, idp) for _ in range(5))
    sign_out(api, signed_out)
    sign_out(api, signed_out)  # twice: one end, one event
    api.call("DELETE", f"{SESSIONS}/{session_id(api, ended)}", viewer["access_token"])
    refresh(api, reused["refresh_token"])
    clock.advance(minutes=2)
    refresh(api, reused["refresh_token"])  # reuse
    clock.advance(minutes=-2)  # tokens minted from here on are valid by the wall clock
    api.call("DELETE", SESSIONS, everywhere["access_token"])  # ends everywhere and viewer too
    bob = sign_in(api, idp, "bob")

    found = revocations(api, sign_in(api, idp)["access_token"])

    reasons = {e["data"]["sessionId"]: e["data"]["reason"] for e in found}
    assert reasons == {
        session_id(api, signed_out): "sign_out",
        session_id(api, ended): "ended",
        session_id(api, reused): "reuse_detected",
        session_id(api, everywhere): "everywhere",
        session_id(api, viewer): "everywhere",
    }
    assert all(set(e["data"]) == {"sessionId", "reason"} for e in found)
    actors = {e["data"]["reason"]: e["actor"] for e in found}
    owner = session_owner(api, viewer)
    assert (actors["sign_out"]["userId"], actors["sign_out"]["credential"]) == (
        owner,
        "user_token",
    )
    assert (actors["ended"]["userId"], actors["ended"]["credential"]) == (owner, "user_token")
    assert actors["reuse_detected"] == {"system": "refresh-token-reuse"}
    assert revocations(api, bob["access_token"]) == []


@pytest.mark.parametrize("operation", ["dynamodb.UpdateItem", "dynamodb.PutItem"])
def test_a_sign_out_whose_write_botocore_retried_records_its_event_once(
    api: Api, idp: FakeIssuer, services: Services, operation: str
) -> None:
    """The revocation (UpdateItem) or the event (PutItem) applied, its answer lost, and
    botocore's retry meeting the write already made: still one end, one event."""
    from local.faults import Fault, FaultInjector

    pair = sign_in(api, idp)
    injector = FaultInjector()
    injector.attach(services.dynamodb)
    injector.arm(Fault(0, "retried", operation))

    answer = api.call("POST", REVOKE, body={"token": pair["refresh_token"]})

    fired, operations = injector.fired, injector.operations
    injector.arm(None)
    assert fired, operations
    assert answer.status == 200, answer.body
    assert_revoked(api.call("GET", WHOAMI, pair["access_token"]))
    found = revocations(api, sign_in(api, idp)["access_token"])
    expected = {"sessionId": session_id(api, pair), "reason": "sign_out"}
    assert [e["data"] for e in found] == [expected]
