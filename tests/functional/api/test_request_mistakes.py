"""What a new user trips over at the HTTP edge, each answered with what to do instead."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.functional.conftest import Api

WHOAMI = "/v1/auth/whoami"
KEYS = "/v1/auth/api-keys"


def test_a_key_sent_without_bearer_is_told_to_send_bearer(api: Api, alice: str) -> None:
    key = api.create_key(alice)["key"]

    answer = api.call("GET", WHOAMI, headers={"Authorization": key})

    assert answer.status == 401
    assert answer.code == "invalid_credentials"
    assert "Authorization: Bearer <key>" in answer.json["detail"]
    assert key not in answer.body.decode()


@pytest.mark.parametrize("parameter", ["api_key", "access_token", "key", "token"])
@pytest.mark.parametrize("path", [WHOAMI, KEYS, "/v1/workspaces"])
def test_a_credential_in_the_url_is_refused_with_the_header_to_use(
    api: Api, alice: str, parameter: str, path: str
) -> None:
    secret = api.create_key(alice)["key"]

    answer = api.call("GET", f"{path}?{parameter}={secret}")

    assert answer.status == 400
    assert answer.code == "credential_in_url"
    assert "Authorization header" in answer.json["detail"]
    assert secret not in answer.body.decode()


def test_a_credential_in_the_url_is_refused_even_beside_a_good_header(
    api: Api, alice: str
) -> None:
    answer = api.call("GET", f"{WHOAMI}?token=x", alice)

    assert answer.code == "credential_in_url"


def raw_event(
    method: str, resource: str, headers: list[tuple[str, str]], path: str | None = None
) -> dict[str, Any]:
    """An API Gateway (REST, payload 1.0) event: `headers` keeps one value per name (the
    last), `multiValueHeaders` every copy, as API Gateway hands a repeated header over."""
    multi: dict[str, list[str]] = {}
    for name, value in headers:
        multi.setdefault(name, []).append(value)
    return {
        "resource": resource,
        "path": path or resource,
        "httpMethod": method,
        "headers": {name: values[-1] for name, values in multi.items()},
        "multiValueHeaders": multi,
        "queryStringParameters": None,
        "multiValueQueryStringParameters": None,
        "pathParameters": None,
        "stageVariables": None,
        "requestContext": {
            "resourcePath": resource,
            "httpMethod": method,
            "path": path or resource,
            "identity": {"sourceIp": "203.0.113.7"},
        },
        "body": None,
        "isBase64Encoded": False,
    }


def invoke(event: dict[str, Any]) -> tuple[int, dict[str, Any], Any]:
    from app import app

    answer = app(event, None)
    headers = {**answer["headers"], **answer["multiValueHeaders"]}
    return answer["statusCode"], headers, json.loads(answer["body"]) if answer["body"] else None


@pytest.mark.parametrize("order", ["valid first", "valid last"])
def test_two_authorization_headers_are_refused_in_either_order(
    api: Api, alice: str, bob: str, order: str
) -> None:
    pair = [("Authorization", f"Bearer {alice}"), ("Authorization", f"Bearer {bob}")]
    if order == "valid last":
        pair = [("Authorization", "Bearer not-a-credential"), ("Authorization", f"Bearer {alice}")]

    status, headers, body = invoke(raw_event("GET", WHOAMI, pair))

    assert status == 401
    assert body["code"] == "invalid_credentials"
    assert body["detail"] == "Send one Authorization header."
    assert headers["WWW-Authenticate"] == 'Bearer realm="svc", error="invalid_token"'


def test_one_authorization_header_in_an_api_gateway_event_is_fine(api: Api, alice: str) -> None:
    status, _, body = invoke(raw_event("GET", WHOAMI, [("authorization", f"Bearer {alice}")]))

    assert status == 200
    assert body["userId"] == "usr_alice"


def test_two_workspace_headers_are_a_bad_request(api: Api, alice: str) -> None:
    ws = api.workspace(alice)
    headers = [
        ("Authorization", f"Bearer {alice}"),
        ("X-Workspace-Id", ws),
        ("x-workspace-id", ws),
    ]

    status, _, body = invoke(raw_event("GET", WHOAMI, headers))

    assert status == 400
    assert body["code"] == "conflicting_workspace_id"


def test_a_204_has_no_content_type_and_no_body(api: Api, alice: str) -> None:
    key = api.create_key(alice)

    answer = api.call("DELETE", f"{KEYS}/{key['id']}", alice)

    assert answer.status == 204
    assert answer.body == b""
    assert "Content-Type" not in answer.headers


def test_every_error_body_uses_the_same_json_spacing(api: Api, alice: str) -> None:
    problem = api.call("GET", WHOAMI)
    oauth = api.call("POST", "/v1/auth/refresh", body={"refresh_token": "rt_unknown"})
    framework = api.call("PUT", WHOAMI, alice)

    for answer in (problem, oauth, framework):
        text = answer.body.decode()
        assert text == json.dumps(json.loads(text), separators=(",", ":"))
