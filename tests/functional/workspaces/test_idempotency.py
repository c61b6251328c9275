"""Idempotency-Key on POST /v1/workspaces: a retry answers the first workspace."""

from __future__ import annotations

from tests.functional.conftest import Answer, Api

WORKSPACES = "/v1/workspaces"


def create(api: Api, token: str, idempotency_key: str, name: str = "Team") -> Answer:
    return api.call(
        "POST", WORKSPACES, token, body={"name": name}, headers={"Idempotency-Key": idempotency_key}
    )


def test_a_retried_create_answers_the_same_workspace_and_creates_one(api: Api, alice: str) -> None:
    first = create(api, alice, "ws-1")
    again = create(api, alice, "ws-1")
    assert (first.status, again.status) == (201, 201)
    assert again.json == first.json
    assert again.headers["Location"] == first.headers["Location"]
    assert again.headers["Idempotent-Replayed"] == "true"
    assert [w["id"] for w in api.call("GET", WORKSPACES, alice).json["workspaces"]] == [
        first.json["id"]
    ]


def test_another_name_under_the_same_key_is_422(api: Api, alice: str) -> None:
    create(api, alice, "ws-1", name="Team")
    answer = create(api, alice, "ws-1", name="Other")
    assert (answer.status, answer.code) == (422, "idempotency_key_reused")
    assert len(api.call("GET", WORKSPACES, alice).json["workspaces"]) == 1


def test_a_key_used_for_an_api_key_is_422_for_a_workspace(api: Api, alice: str) -> None:
    headers = {"Idempotency-Key": "k"}
    assert (
        api.call("POST", "/v1/auth/api-keys", alice, body={"label": "x"}, headers=headers).status
        == 201
    )
    answer = create(api, alice, "k")
    assert (answer.status, answer.code) == (422, "idempotency_key_reused")
