"""People, not ids: the email and name of a sign-in, shown by whoami, members lists and events,
and members added by their verified email."""

from __future__ import annotations

import pytest

from chalicelib.runtime import Services
from tests.functional.conftest import Api
from tests.functional.oauth import exchange, trust
from tests.oidc_issuer import FakeIssuer

WS = "/v1/workspaces"
WHOAMI = "/v1/auth/whoami"


@pytest.fixture
def idp(services: Services) -> FakeIssuer:
    issuer = FakeIssuer()
    trust(services, issuer)
    return issuer


def sign_in(api: Api, idp: FakeIssuer, subject: str, **claims: object) -> str:
    """A user token from the login exchange of this subject's ID token."""
    answer = exchange(api, idp.id_token(subject, **claims))
    assert answer.status == 200, answer.body
    return str(answer.json["access_token"])


def person(answer_json: dict[str, object]) -> tuple[object, object]:
    return answer_json["email"], answer_json["name"]


def test_whoami_for_a_user_token_shows_the_verified_email_and_name(
    api: Api, idp: FakeIssuer
) -> None:
    token = sign_in(api, idp, "ada", email="ada@example.test", name="Ada Lovelace")

    answer = api.call("GET", WHOAMI, token)

    assert person(answer.json) == ("ada@example.test", "Ada Lovelace")


def test_an_unverified_email_is_not_kept(api: Api, idp: FakeIssuer) -> None:
    token = sign_in(api, idp, "ada", email="ada@example.test", email_verified=False, name="Ada")

    answer = api.call("GET", WHOAMI, token)

    assert person(answer.json) == (None, "Ada")


def test_each_sign_in_updates_the_email_and_name(api: Api, idp: FakeIssuer) -> None:
    sign_in(api, idp, "ada", email="old@example.test", name="Ada")
    token = sign_in(api, idp, "ada", email="new@example.test", name="Ada King")

    answer = api.call("GET", WHOAMI, token)

    assert person(answer.json) == ("new@example.test", "Ada King")


def test_a_later_unverified_email_forgets_the_verified_one(api: Api, idp: FakeIssuer) -> None:
    sign_in(api, idp, "ada", email="ada@example.test")
    token = sign_in(api, idp, "ada", email="other@example.test", email_verified=False)

    answer = api.call("GET", WHOAMI, token)

    assert answer.json["email"] is None


def test_whoami_shows_null_email_and_name_when_unknown(api: Api, alice: str) -> None:
    answer = api.call("GET", WHOAMI, alice)

    assert answer.status == 200
    assert person(answer.json) == (None, None)


def test_whoami_for_an_api_key_names_no_person(api: Api, idp: FakeIssuer) -> None:
    token = sign_in(api, idp, "ada", email="ada@example.test", name="Ada")
    admin = api.create_key(token)["key"]

    answer = api.call("GET", WHOAMI, admin)

    assert answer.json["credential"] == "api_key"
    assert person(answer.json) == (None, None)


def test_members_list_shows_each_members_email_and_name_null_when_unknown(
    api: Api, idp: FakeIssuer, bob: str
) -> None:
    ada = sign_in(api, idp, "ada", email="ada@example.test", name="Ada")
    ws = api.workspace(ada)
    api.add_member(ada, ws, "usr_bob")

    answer = api.call("GET", f"{WS}/{ws}/members", ada)

    shown = {(m["role"], m["email"], m["name"]) for m in answer.json["members"]}
    assert shown == {("owner", "ada@example.test", "Ada"), ("member", None, None)}


def test_owner_adds_a_member_by_the_email_they_signed_in_with(
    api: Api, idp: FakeIssuer
) -> None:
    ada = sign_in(api, idp, "ada", email="ada@example.test", name="Ada")
    grace = sign_in(api, idp, "grace", email="Grace@Example.test", name="Grace Hopper")
    grace_id = api.call("GET", WHOAMI, grace).json["userId"]
    ws = api.workspace(ada)

    added = api.call("PUT", f"{WS}/{ws}/members/grace@example.test", ada)

    assert added.status == 201
    assert (added.json["userId"], added.json["email"], added.json["name"]) == (
        grace_id, "Grace@Example.test", "Grace Hopper"
    )
    assert api.call("GET", WS, grace).json["workspaces"][0]["id"] == ws


def test_an_email_may_be_sent_percent_encoded(api: Api, idp: FakeIssuer) -> None:
    ada = sign_in(api, idp, "ada", email="ada@example.test")
    sign_in(api, idp, "grace", email="grace@example.test")
    ws = api.workspace(ada)

    added = api.call("PUT", f"{WS}/{ws}/members/grace%40example.test", ada)

    assert (added.status, added.json["email"]) == (201, "grace@example.test")


def test_adding_an_email_nobody_signed_in_with_is_404_user_not_found(
    api: Api, idp: FakeIssuer
) -> None:
    ada = sign_in(api, idp, "ada", email="ada@example.test")
    ws = api.workspace(ada)

    answer = api.call("PUT", f"{WS}/{ws}/members/nobody@example.test", ada)

    assert answer.status == 404
    assert answer.code == "user_not_found"
    assert "sign in once" in answer.json["detail"]


def test_an_unverified_email_does_not_name_its_user(api: Api, idp: FakeIssuer) -> None:
    ada = sign_in(api, idp, "ada", email="ada@example.test")
    sign_in(api, idp, "mallory", email="boss@example.test", email_verified=False)
    ws = api.workspace(ada)

    answer = api.call("PUT", f"{WS}/{ws}/members/boss@example.test", ada)

    assert answer.code == "user_not_found"


def test_an_email_its_user_no_longer_signs_in_with_does_not_name_them(
    api: Api, idp: FakeIssuer
) -> None:
    ada = sign_in(api, idp, "ada", email="ada@example.test")
    sign_in(api, idp, "grace", email="old@example.test")
    sign_in(api, idp, "grace", email="new@example.test")
    ws = api.workspace(ada)

    old = api.call("PUT", f"{WS}/{ws}/members/old@example.test", ada)
    new = api.call("PUT", f"{WS}/{ws}/members/new@example.test", ada)

    assert (old.code, new.status) == ("user_not_found", 201)


def test_the_latest_sign_in_with_an_email_is_who_it_names(api: Api, idp: FakeIssuer) -> None:
    ada = sign_in(api, idp, "ada", email="ada@example.test")
    sign_in(api, idp, "first", email="shared@example.test")
    second = sign_in(api, idp, "second", email="shared@example.test")
    ws = api.workspace(ada)

    added = api.call("PUT", f"{WS}/{ws}/members/shared@example.test", ada)

    assert added.json["userId"] == api.call("GET", WHOAMI, second).json["userId"]


def test_owner_removes_a_member_by_email(api: Api, idp: FakeIssuer) -> None:
    ada = sign_in(api, idp, "ada", email="ada@example.test")
    grace = sign_in(api, idp, "grace", email="grace@example.test")
    ws = api.workspace(ada)
    api.call("PUT", f"{WS}/{ws}/members/grace@example.test", ada)

    answer = api.call("DELETE", f"{WS}/{ws}/members/grace@example.test", ada)

    assert answer.status == 204
    assert api.call("GET", WS, grace).json["workspaces"] == []


def test_events_name_the_actor_and_who_was_added_and_removed(
    api: Api, idp: FakeIssuer
) -> None:
    ada = sign_in(api, idp, "ada", email="ada@example.test", name="Ada")
    sign_in(api, idp, "grace", email="grace@example.test", name="Grace")
    ws = api.workspace(ada)
    api.call("PUT", f"{WS}/{ws}/members/grace@example.test", ada)
    api.call("DELETE", f"{WS}/{ws}/members/grace@example.test", ada)

    events = api.call("GET", "/v1/auth/events", ada).json["events"]

    removed, added, created = events
    assert (created["actor"]["email"], created["actor"]["name"]) == ("ada@example.test", "Ada")
    assert (added["type"], added["data"]["email"], added["data"]["name"]) == (
        "member.added", "grace@example.test", "Grace"
    )
    assert (removed["type"], removed["data"]["email"]) == ("member.removed", "grace@example.test")


def test_events_leave_out_what_is_not_known_of_an_actor(api: Api, alice: str) -> None:
    api.workspace(alice)

    events = api.call("GET", "/v1/auth/events", alice).json["events"]

    assert events[0]["actor"] == {"userId": "usr_alice", "credential": "user_token", "keyId": None}
