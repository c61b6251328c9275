"""Delegation: POST /v1/auth/exchange with subject_token_type access_token (RFC 8693).

A key, a user token or a delegated token in; a short-lived token bound to one workspace, with
at most the subject's data-plane scopes, out. Each rule of the delegated token, then each
refusal, then the token at the routes, then the cascade (a revoked root refuses its tokens on
the next request).
"""

from __future__ import annotations

import io
import json
import logging
from typing import Any

import jwt
import pytest

from chalicelib.clock import FrozenClock
from chalicelib.logs import logger
from tests.functional.conftest import ISSUER, Api
from tests.functional.oauth import (
    ACCESS_TOKEN_TYPE,
    EXCHANGE,
    assert_oauth_error,
    delegate,
    delegated,
)

KEYS = "/v1/auth/api-keys"
WHOAMI = "/v1/auth/whoami"
DATA_PLANE = "memory entities reasoning ontology skills"


def claims(api: Api, token: str) -> dict[str, Any]:
    return api.services.verifier.verify(token)


@pytest.fixture
def ws(api: Api, alice: str) -> str:
    return api.workspace(alice)


@pytest.fixture
def key(api: Api, alice: str, ws: str) -> dict[str, Any]:
    """Alice's workspace key in her workspace."""
    return api.create_key(alice, category="workspace", workspaceId=ws)


# -- the answer and the token ---------------------------------------------------------------


def test_delegation_answers_an_uncached_bearer_token_without_refresh_token(
    api: Api, key: dict[str, Any]
) -> None:
    answer = delegate(api, key["key"], scope="memory", expires_in=600)

    assert answer.status == 200, answer.body
    assert set(answer.json) == {
        "access_token",
        "issued_token_type",
        "token_type",
        "expires_in",
        "scope",
    }
    assert answer.json["issued_token_type"] == ACCESS_TOKEN_TYPE
    assert (answer.json["token_type"], answer.json["expires_in"]) == ("Bearer", 600)
    assert answer.json["scope"] == "memory"
    assert answer.headers["Cache-Control"] == "no-store"


def test_delegated_token_claims_name_owner_workspace_scope_act_and_root_key(
    api: Api, key: dict[str, Any], ws: str
) -> None:
    token = delegated(api, key["key"], scope="memory entities", expires_in=300, actor="browser")

    header = jwt.get_unverified_header(token)
    found = claims(api, token)
    assert (header["alg"], header["typ"]) == ("RS256", "at+jwt")
    assert header["kid"] == api.services.signing_keys.current_kid()
    assert (found["iss"], found["aud"], found["sub"]) == (ISSUER, ISSUER, "usr_alice")
    assert (found["scope"], found["workspace_id"]) == ("memory entities", ws)
    assert found["act"] == {"sub": "browser"}
    assert found["root"] == key["id"]
    assert found["exp"] - found["iat"] == 300
    assert found["jti"]


def test_delegation_defaults_to_900_seconds_every_data_plane_scope_and_actor_delegate(
    api: Api, key: dict[str, Any]
) -> None:
    answer = delegate(api, key["key"])

    found = claims(api, answer.json["access_token"])
    assert answer.json["expires_in"] == 900
    assert answer.json["scope"] == DATA_PLANE
    assert found["act"] == {"sub": "delegate"}


def test_delegation_takes_the_same_fields_as_json(api: Api, key: dict[str, Any]) -> None:
    body = {
        "subject_token": key["key"],
        "subject_token_type": ACCESS_TOKEN_TYPE,
        "scope": "memory",
        "expires_in": 120,
        "actor": "agent",
    }

    answer = api.call("POST", EXCHANGE, body=body)

    assert answer.status == 200, answer.body
    assert (answer.json["expires_in"], answer.json["scope"]) == (120, "memory")
    assert claims(api, answer.json["access_token"])["act"] == {"sub": "agent"}


def test_id_token_json_exchange_still_answers_without_issued_token_type(api: Api) -> None:
    answer = api.call("POST", EXCHANGE, body={"id_token": "not-a-token"})

    assert_oauth_error(answer, 400, "invalid_grant")


def test_user_token_delegates_in_a_workspace_it_is_a_member_of_with_a_user_root(
    api: Api, alice: str, ws: str
) -> None:
    token = delegated(api, alice, workspace_id=ws, scope="memory")

    found = claims(api, token)
    assert (found["root"], found["sub"], found["workspace_id"]) == ("usr_alice", "usr_alice", ws)


def test_admin_key_delegates_in_the_workspace_it_names_without_workspace_admin(
    api: Api, alice: str, ws: str
) -> None:
    admin = api.create_key(alice)

    answer = delegate(api, admin["key"], workspace_id=ws)

    assert answer.status == 200, answer.body
    assert answer.json["scope"] == DATA_PLANE  # never workspace:admin
    assert claims(api, answer.json["access_token"])["root"] == admin["id"]


def test_redelegation_nests_act_keeps_root_and_narrows(
    api: Api, key: dict[str, Any]
) -> None:
    parent = delegated(api, key["key"], scope="memory entities", actor="agent")

    child = delegated(api, parent, scope="memory", actor="sub-agent")

    found = claims(api, child)
    assert found["act"] == {"sub": "sub-agent", "act": {"sub": "agent"}}
    assert found["root"] == key["id"]
    assert found["scope"] == "memory"


def test_redelegation_never_outlives_its_parent(api: Api, key: dict[str, Any]) -> None:
    parent = delegate(api, key["key"], expires_in=120).json["access_token"]

    answer = delegate(api, parent, expires_in=3600)

    assert answer.status == 200, answer.body
    assert answer.json["expires_in"] <= 120
    assert claims(api, answer.json["access_token"])["exp"] <= claims(api, parent)["exp"]


def test_delegation_never_outlives_the_key(
    api: Api, key: dict[str, Any], clock: FrozenClock
) -> None:
    clock.advance(days=90, seconds=-100)  # the key has 100 seconds left

    answer = delegate(api, key["key"], expires_in=3600)

    assert answer.status == 200, answer.body
    assert answer.json["expires_in"] == 100


def test_four_handovers_are_allowed_and_a_fifth_is_invalid_request(
    api: Api, key: dict[str, Any]
) -> None:
    token = key["key"]
    for _ in range(4):
        token = delegated(api, token)
    assert json.dumps(claims(api, token)["act"]).count('"sub"') == 4

    answer = delegate(api, token)

    assert_oauth_error(answer, 400, "invalid_request")


# -- refusals -------------------------------------------------------------------------------


@pytest.mark.parametrize("expires_in", ["59", "3601", "0", "soon"])
def test_expires_in_outside_60_to_3600_is_invalid_request(
    api: Api, key: dict[str, Any], expires_in: str
) -> None:
    answer = delegate(api, key["key"], expires_in=expires_in)

    assert_oauth_error(answer, 400, "invalid_request")


@pytest.mark.parametrize("actor", ["a\u0007b", "x" * 101, "\u202eevil"])
def test_actor_breaking_the_label_rule_is_invalid_request(
    api: Api, key: dict[str, Any], actor: str
) -> None:
    answer = delegate(api, key["key"], actor=actor)

    assert_oauth_error(answer, 400, "invalid_request")


@pytest.mark.parametrize("scope", ["workspace:admin", "memory bogus", "memory workspace:admin"])
def test_scope_the_subject_does_not_hold_on_the_data_plane_is_invalid_scope(
    api: Api, alice: str, ws: str, scope: str
) -> None:
    admin = api.create_key(alice)

    answer = delegate(api, admin["key"], workspace_id=ws, scope=scope)

    assert_oauth_error(answer, 400, "invalid_scope")


def test_redelegation_cannot_widen_scopes(api: Api, key: dict[str, Any]) -> None:
    parent = delegated(api, key["key"], scope="memory")

    answer = delegate(api, parent, scope="memory entities")

    assert_oauth_error(answer, 400, "invalid_scope")


def test_workspace_key_naming_another_workspace_is_403_workspace_mismatch(
    api: Api, alice: str, key: dict[str, Any]
) -> None:
    other = api.workspace(alice, "Other")

    answer = delegate(api, key["key"], workspace_id=other)

    assert_oauth_error(answer, 403, "access_denied")
    assert answer.json["error_description"].startswith("workspace_mismatch")


def test_redelegation_to_another_workspace_is_403_workspace_mismatch(
    api: Api, alice: str, key: dict[str, Any]
) -> None:
    parent = delegated(api, key["key"])
    other = api.workspace(alice, "Other")

    answer = delegate(api, parent, workspace_id=other)

    assert_oauth_error(answer, 403, "access_denied")
    assert answer.json["error_description"].startswith("workspace_mismatch")


def test_user_token_in_a_workspace_it_is_not_a_member_of_is_403_not_a_member(
    api: Api, bob: str, ws: str
) -> None:
    answer = delegate(api, bob, workspace_id=ws)

    assert_oauth_error(answer, 403, "access_denied")
    assert answer.json["error_description"].startswith("not_a_member")


@pytest.mark.parametrize("subject", ["alice", "admin key"])
def test_unbound_subject_without_workspace_id_is_invalid_request(
    api: Api, alice: str, subject: str
) -> None:
    credential = alice if subject == "alice" else api.create_key(alice)["key"]

    answer = delegate(api, credential)

    assert_oauth_error(answer, 400, "invalid_request")


def test_revoked_key_cannot_delegate(api: Api, alice: str, key: dict[str, Any]) -> None:
    api.call("DELETE", f"{KEYS}/{key['id']}", alice)

    answer = delegate(api, key["key"])

    assert_oauth_error(answer, 401, "invalid_token")
    assert answer.json["error_description"].startswith("revoked_credentials")


@pytest.mark.parametrize("subject", ["sv" "c_not-a-key", "eyJ.not.a-jwt", "garbage"])
def test_subject_that_is_no_credential_is_401_invalid_token(api: Api, subject: str) -> None:
    answer = delegate(api, subject)

    assert_oauth_error(answer, 401, "invalid_token")


# -- the delegated token at the routes -----------------------------------------------------


def test_whoami_reports_a_delegated_credential_its_scopes_workspace_and_act(
    api: Api, key: dict[str, Any], ws: str
) -> None:
    token = delegated(api, key["key"], scope="memory entities", actor="browser")

    answer = api.call("GET", WHOAMI, token)

    assert answer.status == 200, answer.body
    assert answer.json["credential"] == "delegated"
    assert answer.json["userId"] == "usr_alice"
    assert (answer.json["workspaceId"], answer.json["scopes"]) == (ws, ["memory", "entities"])
    assert answer.json["act"] == {"sub": "browser"}
    assert (answer.json["keyId"], answer.json["category"]) == (None, None)


def test_delegated_token_naming_another_workspace_is_403_workspace_mismatch(
    api: Api, alice: str, key: dict[str, Any]
) -> None:
    token = delegated(api, key["key"])
    other = api.workspace(alice, "Other")

    answer = api.call("GET", WHOAMI, token, workspace=other)

    assert answer.status == 403
    assert answer.code == "workspace_mismatch"


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("GET", KEYS, None),
        ("POST", KEYS, {"label": "more"}),
        ("GET", "/v1/workspaces", None),
        ("POST", "/v1/workspaces", {"name": "Mine"}),
        ("PUT", "/v1/workspaces/{ws}/members/usr_bob", None),
    ],
)
def test_delegated_token_manages_nothing(
    api: Api, alice: str, ws: str, method: str, path: str, body: Any
) -> None:
    admin = api.create_key(alice)
    token = delegated(api, admin["key"], workspace_id=ws)

    answer = api.call(method, path.format(ws=ws), token, body=body)

    assert answer.status == 403, answer.body
    assert answer.code == "insufficient_scope"


def test_request_log_names_root_jti_and_act_never_the_token(
    api: Api, key: dict[str, Any]
) -> None:
    token = delegated(api, key["key"], actor="browser")
    jti = claims(api, token)["jti"]
    lines = io.StringIO()
    handler = logging.StreamHandler(lines)
    handler.setFormatter(logger.registered_formatter)
    logging.getLogger("memory-auth").addHandler(handler)
    try:
        api.call("GET", WHOAMI, token)
    finally:
        logging.getLogger("memory-auth").removeHandler(handler)

    (request,) = [json.loads(line) for line in lines.getvalue().splitlines()]
    assert request["actor"]["root"] == key["id"]
    assert request["actor"]["jti"] == jti
    assert request["actor"]["act"] == {"sub": "browser"}
    assert token.split(".")[2] not in lines.getvalue()


# -- the cascade: a decision re-judges the root ----------------------------------------------


def test_revoking_the_root_key_refuses_its_delegated_tokens_on_the_next_request(
    api: Api, alice: str, key: dict[str, Any]
) -> None:
    child = delegated(api, key["key"])
    grandchild = delegated(api, child)
    assert api.call("GET", WHOAMI, grandchild).status == 200

    api.call("DELETE", f"{KEYS}/{key['id']}", alice)

    for token in (child, grandchild):
        answer = api.call("GET", WHOAMI, token)
        assert answer.status == 401
        assert answer.code == "revoked_credentials"


def test_root_key_out_of_its_grace_refuses_its_delegated_tokens(
    api: Api, alice: str, key: dict[str, Any], clock: FrozenClock
) -> None:
    token = delegated(api, key["key"])
    rotated = api.call(
        "POST", f"{KEYS}/{key['id']}/rotate", alice, body={"gracePeriodSeconds": 60}
    )
    assert rotated.status == 201
    assert api.call("GET", WHOAMI, token).status == 200  # within the grace

    clock.advance(seconds=61)

    answer = api.call("GET", WHOAMI, token)
    assert answer.status == 401
    assert answer.code == "revoked_credentials"


def test_expired_root_key_refuses_its_delegated_tokens(
    api: Api, key: dict[str, Any], clock: FrozenClock
) -> None:
    token = delegated(api, key["key"])
    clock.advance(days=90)

    answer = api.call("GET", WHOAMI, token)

    assert answer.status == 401
    assert answer.code == "expired_credentials"


@pytest.mark.parametrize("root", ["workspace key", "user token"])
def test_removing_the_member_refuses_their_delegated_tokens_on_the_next_request(
    api: Api, alice: str, bob: str, root: str
) -> None:
    ws = api.workspace(bob)
    api.add_member(bob, ws, "usr_alice")
    if root == "workspace key":
        token = delegated(api, api.create_key(alice, category="workspace", workspaceId=ws)["key"])
    else:
        token = delegated(api, alice, workspace_id=ws)
    assert api.call("GET", WHOAMI, token).status == 200

    api.call("DELETE", f"/v1/workspaces/{ws}/members/usr_alice", bob)

    answer = api.call("GET", WHOAMI, token)
    assert answer.status == 403
    assert answer.code == "not_a_member"


def test_token_claiming_a_root_key_of_someone_else_is_refused(
    api: Api, alice: str, bob: str, key: dict[str, Any], ws: str
) -> None:
    # Signed by us, so never forged in practice: the record decides all the same.
    from chalicelib.clock import Clock
    from chalicelib.sessions.access_tokens import TokenSigner

    services = api.services
    signer = TokenSigner(services.kms, services.signing_keys, services.settings.issuer, Clock())
    extra = {"scope": "memory", "workspace_id": ws, "act": {"sub": "x"}, "root": key["id"]}
    token = signer.mint("usr_bob", extra=extra, lifetime=300).token

    answer = api.call("GET", WHOAMI, token)

    assert answer.status == 401
