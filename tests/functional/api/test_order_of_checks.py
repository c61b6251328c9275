"""Authenticate (401), then authorize (403), then find the caller's own resource (404), then
validate the request (400/413/415): a caller without the right never learns a request's shape."""

from __future__ import annotations

import pytest

from tests.functional.conftest import Api

KEYS = "/v1/auth/api-keys"
TEXT = {"Content-Type": "text/plain"}
BIG = b'{"label": "' + b"x" * 20_000 + b'"}'


def test_a_workspace_key_sending_a_body_to_rotate_gets_403_not_400(api: Api, alice: str) -> None:
    ws = api.workspace(alice)
    key = api.create_key(alice, category="workspace", workspaceId=ws)

    answers = [
        api.call("POST", f"{KEYS}/{key['id']}/rotate", key["key"], body={"grace": "soon"}),
        api.call("POST", f"{KEYS}/{key['id']}/rotate", key["key"], raw=b"{not json"),
        api.call("POST", f"{KEYS}/{key['id']}/rotate", key["key"], raw=b"x", headers=TEXT),
        api.call("POST", f"{KEYS}/{key['id']}/rotate?x=1", key["key"]),
    ]

    assert [(a.status, a.code) for a in answers] == [(403, "insufficient_scope")] * 4


@pytest.mark.parametrize(
    ("method", "path", "raw", "headers"),
    [
        ("POST", KEYS, b"{not json", None),
        ("POST", KEYS, b'{"unknown": 1}', None),
        ("POST", KEYS, b"label=x", TEXT),
        ("POST", KEYS, BIG, None),
        ("GET", KEYS + "?limit=1000", None, None),
        ("GET", "/v1/auth/whoami?x=1", None, None),
        ("POST", "/v1/workspaces", b"[]", None),
        ("GET", "/v1/auth/events?type=nonsense", None, None),
    ],
)
def test_without_a_credential_every_malformed_request_is_401(
    api: Api, method: str, path: str, raw: bytes | None, headers: dict | None
) -> None:
    answer = api.call(method, path, raw=raw, headers=headers)

    assert (answer.status, answer.code) == (401, "missing_credentials")


def test_a_workspace_key_creating_a_key_with_a_bad_body_gets_403(api: Api, alice: str) -> None:
    ws = api.workspace(alice)
    key = api.create_key(alice, category="workspace", workspaceId=ws)

    answers = [
        api.call("POST", KEYS, key["key"], raw=b"{not json"),
        api.call("POST", KEYS, key["key"], raw=BIG),
        api.call("POST", KEYS, key["key"], raw=b"label=x", headers=TEXT),
        api.call("POST", "/v1/workspaces", key["key"], raw=b"{}"),
    ]

    assert [(a.status, a.code) for a in answers] == [(403, "insufficient_scope")] * 4


def test_a_non_owner_gets_404_before_any_body_validation(api: Api, alice: str, bob: str) -> None:
    key = api.create_key(alice)

    answers = [
        api.call("POST", f"{KEYS}/{key['id']}/rotate", bob, body={"gracePeriodSeconds": -5}),
        api.call("POST", f"{KEYS}/{key['id']}/rotate", bob, raw=b"{not json"),
        api.call("POST", f"{KEYS}/{key['id']}/rotate", bob, raw=b"x", headers=TEXT),
        api.call("GET", f"{KEYS}/{key['id']}?unknown=1", bob),
        api.call("GET", f"{KEYS}/{key['id']}/reveal?unknown=1", bob),
        api.call("DELETE", f"{KEYS}/{key['id']}?unknown=1", bob),
    ]

    assert [(a.status, a.code) for a in answers] == [(404, "not_found")] * 6
    assert api.call("GET", "/v1/auth/whoami", key["key"]).status == 200


def test_an_owner_gets_the_validation_error_once_authorized(api: Api, alice: str) -> None:
    key = api.create_key(alice)

    malformed = api.call("POST", f"{KEYS}/{key['id']}/rotate", alice, raw=b"{not json")
    media = api.call("POST", f"{KEYS}/{key['id']}/rotate", alice, raw=b"x", headers=TEXT)
    large = api.call("POST", KEYS, alice, raw=BIG)

    assert (malformed.status, malformed.code) == (400, "invalid_json")
    assert (media.status, media.code) == (415, "unsupported_media_type")
    assert (large.status, large.code) == (413, "payload_too_large")


def test_a_non_member_gets_404_not_found_before_the_body_of_a_member_change(
    api: Api, alice: str, bob: str
) -> None:
    ws = api.workspace(alice)

    answer = api.call("PUT", f"{ws_path(ws)}/members/usr_carol", bob, raw=b"{not json")

    assert (answer.status, answer.code) == (404, "not_found")


def ws_path(ws: str) -> str:
    return f"/v1/workspaces/{ws}"


def test_two_different_workspaces_named_without_a_valid_credential_is_401(api: Api) -> None:
    answer = api.call(
        "GET", KEYS + "?workspace_id=ws_a", "sv" + "c_" + "x" * 50, workspace="ws_b"
    )

    assert (answer.status, answer.code) == (401, "invalid_credentials")


def test_two_different_workspaces_named_with_a_valid_credential_is_400(
    api: Api, alice: str
) -> None:
    answer = api.call("GET", KEYS + "?workspace_id=ws_a", alice, workspace="ws_b")

    assert (answer.status, answer.code) == (400, "conflicting_workspace_id")


@pytest.mark.parametrize("prefix", ["sv" + "c_", "leg" + "acy_"])
def test_a_key_sent_without_the_bearer_scheme_is_told_to_send_bearer(
    api: Api, alice: str, prefix: str
) -> None:
    key = api.create_key(alice)["key"]
    value = key if prefix.startswith("sv") else prefix + "abc"

    answer = api.call("GET", "/v1/auth/whoami", headers={"Authorization": value})

    assert (answer.status, answer.code) == (401, "invalid_credentials")
    assert "Bearer <key>" in answer.json["detail"]
    assert value not in answer.body.decode()
