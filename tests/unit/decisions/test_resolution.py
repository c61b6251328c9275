from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from chalicelib import ids, items
from chalicelib.access.principal import Refusal
from chalicelib.clock import FrozenClock
from chalicelib.decisions.resolution import (
    EXPIRED,
    INVALID,
    INVALID_WORKSPACE_ID,
    MISSING,
    REVOKED,
    SIGNED_IN_BEFORE_SESSIONS,
    Resolver,
    bearer_token,
)
from chalicelib.keys.store import KeyStore
from chalicelib.sessions.access_tokens import TokenRejected
from chalicelib.workspaces.store import WorkspaceStore

TOKEN = "e" + "yJhbGciOiJSUzI1NiJ9.e" + "yJzdWIiOiJ1c3JfYSJ9.c2ln"  # JWT-shaped, never verified


@pytest.mark.parametrize("header", [None, "", "   "])
def test_missing_authorization_is_missing_credentials(header: str | None) -> None:
    assert bearer_token(header) is MISSING


@pytest.mark.parametrize("header", ["Basic abc", "Bearer", "Bearer a b", "token", "Bearer  "])
def test_malformed_authorization_is_invalid_credentials(header: str) -> None:
    assert bearer_token(header) is INVALID


def test_bearer_scheme_is_case_insensitive() -> None:
    assert bearer_token("bearer abc") == "abc"


SIGN_IN = "01JD7Q2X9V3K5M8N1P4R6T0W2Y"
CLAIMS = {"sub": "usr_a", "sid": SIGN_IN}
LIVE = {"userId": "usr_a", "ttl": 2**40}


class Members(WorkspaceStore):
    """A store in which usr_a's sign-in is live (or `family`) and every membership is there;
    it counts what it was asked."""

    def __init__(self, family: dict[str, Any] | None = LIVE) -> None:
        self.asked: list[tuple[str, str]] = []
        self.read_items: list[Any] = []
        self.family = family

    def is_member(self, workspace_id: str, user_id: str) -> bool:
        self.asked.append((workspace_id, user_id))
        return True

    def read(self, item: Any) -> dict[str, Any] | None:
        self.read_items.append(item)
        return self.family

    def read_with_membership(
        self, item: Any, workspace_id: str, user_id: str
    ) -> tuple[dict[str, Any] | None, bool]:
        self.read_items.append(item)
        return self.family, self.is_member(workspace_id, user_id)


def resolver(verify: Any, members: WorkspaceStore | None = None) -> Resolver:
    # No key is read here: every credential below is a JWT.
    keys = KeyStore(client=None, table_name="unused")
    return Resolver(keys, members or Members(), FrozenClock(), verify)


def test_a_user_token_goes_to_the_injected_verifier_a_plain_function_will_do() -> None:
    seen = []

    def verify(token: str) -> dict[str, Any]:
        seen.append(token)
        return CLAIMS

    principal = resolver(verify).resolve(f"Bearer {TOKEN}", None)
    assert seen == [TOKEN]
    assert not isinstance(principal, Refusal)
    assert (principal.user_id, principal.credential) == ("usr_a", "user_token")


@pytest.mark.parametrize(("expired", "refusal"), [(True, EXPIRED), (False, INVALID)])
def test_a_rejected_user_token_is_a_refusal(expired: bool, refusal: Refusal) -> None:
    def verify(token: str) -> dict[str, Any]:
        raise TokenRejected("no", expired=expired)

    assert resolver(verify).resolve(f"Bearer {TOKEN}", None) is refusal


@pytest.mark.parametrize("workspace", ["team", "ws_team", "ws_" + "0" * 25, "WS#x", "a" * 64])
def test_a_workspace_id_we_could_not_have_issued_is_400_without_a_read(
    workspace: str,
) -> None:
    members = Members()
    answer = resolver(lambda token: {"sub": "usr_a"}, members).resolve(f"Bearer {TOKEN}", workspace)
    assert answer is INVALID_WORKSPACE_ID
    assert (answer.status, answer.code) == (400, "invalid_workspace_id")
    assert members.asked == []


def test_a_workspace_id_of_our_shape_is_checked_for_membership() -> None:
    members = Members()
    workspace = ids.new_workspace_id(datetime(2026, 1, 1, tzinfo=UTC))
    answer = resolver(lambda token: CLAIMS, members).resolve(f"Bearer {TOKEN}", workspace)
    assert not isinstance(answer, Refusal)
    assert members.asked == [(workspace, "usr_a")]
    assert members.read_items == [items.refresh_family(SIGN_IN)]  # with it, in one read


@pytest.mark.parametrize(
    "claims",
    [{"sub": "usr_a"}, {"sub": "usr_a", "sid": 7}, {"sub": "usr_a", "sid": "RFAMILY#x"}],
    ids=["no sid", "a number", "not an id"],
)
def test_a_user_token_that_names_no_sign_in_is_invalid_credentials_without_a_read(
    claims: dict[str, Any],
) -> None:
    members = Members()
    answer = resolver(lambda token: claims, members).resolve(f"Bearer {TOKEN}", None)
    assert answer is SIGNED_IN_BEFORE_SESSIONS
    assert (answer.status, answer.code) == (401, "invalid_credentials")
    assert members.read_items == []


@pytest.mark.parametrize(
    "family",
    [
        {"userId": "usr_a", "ttl": 2**40, "revokedAt": "2026-01-01T00:00:00Z"},
        {"userId": "usr_b", "ttl": 2**40},
        {"userId": "usr_a", "ttl": 1},
        {"userId": "usr_a", "ttl": 2**40, "clientId": "https://app.example/client.json"},
        None,
    ],
    ids=["revoked", "someone else's", "past its ttl", "an MCP grant", "gone"],
)
def test_a_user_token_whose_sign_in_is_not_live_is_revoked_credentials(
    family: dict[str, Any] | None,
) -> None:
    members = Members(family)
    answer = resolver(lambda token: CLAIMS, members).resolve(f"Bearer {TOKEN}", None)
    assert answer is REVOKED


@pytest.mark.parametrize(
    "header", ["sv" + "c_" + "A" * 50, "leg" + "acy_abc", "  " + "sv" + "c_x  "]
)
def test_a_key_without_its_scheme_is_told_to_send_bearer(header: str) -> None:
    refusal = bearer_token(header)

    assert isinstance(refusal, Refusal)
    assert (refusal.status, refusal.code) == (401, "invalid_credentials")
    assert "Bearer <key>" in refusal.detail
