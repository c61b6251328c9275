"""Every line logged while serving a request carries the request's id and the caller's ids."""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator
from typing import Any

import pytest

from chalicelib.logs import logger
from chalicelib.runtime import Services
from tests.functional.conftest import Api

KEYS = "/v1/auth/api-keys"


@pytest.fixture
def log_lines() -> Iterator[io.StringIO]:
    """The service's JSON lines, formatted as Lambda prints them."""
    lines = io.StringIO()
    handler = logging.StreamHandler(lines)
    handler.setFormatter(logger.registered_formatter)
    logging.getLogger("memory-auth").addHandler(handler)
    try:
        yield lines
    finally:
        logging.getLogger("memory-auth").removeHandler(handler)


def records(lines: io.StringIO) -> list[dict[str, Any]]:
    return [json.loads(line) for line in lines.getvalue().splitlines()]


def gateway_event(
    method: str, resource: str, request_id: str, authorization: str, body: Any = None
) -> dict[str, Any]:
    """A REST API proxy event (payload 1.0) as API Gateway sends it to the API function."""
    headers = {"Authorization": f"Bearer {authorization}", "Content-Type": "application/json"}
    return {
        "resource": resource,
        "path": resource,
        "httpMethod": method,
        "headers": headers,
        "multiValueHeaders": {name: [value] for name, value in headers.items()},
        "queryStringParameters": None,
        "multiValueQueryStringParameters": None,
        "pathParameters": None,
        "stageVariables": None,
        "requestContext": {
            "resourcePath": resource,
            "httpMethod": method,
            "requestId": request_id,
            "path": f"/dev{resource}",
            "identity": {"sourceIp": "203.0.113.7"},
        },
        "body": json.dumps(body) if body is not None else None,
        "isBase64Encoded": False,
    }


def test_every_line_of_a_request_carries_api_gateways_request_id_and_the_actor(
    api: Api, services: Services, alice: str, log_lines: io.StringIO
) -> None:
    from app import app

    admin = api.create_key(alice)
    log_lines.truncate(0)
    log_lines.seek(0)
    request_id = "c6af9ac6-7b61-11e6-9a41-93e8deadbeef"
    answer = app(gateway_event("POST", KEYS, request_id, admin["key"], {"label": "x"}), None)

    assert answer["statusCode"] == 201
    # The admin key's first use in its 5-minute window is recorded (lastUsedAt), too.
    used, created, request = records(log_lines)
    assert [line["message"] for line in (used, created, request)] == [
        "api key use recorded", "api key created", "request"
    ]
    for line in (used, created, request):
        assert line["correlation_id"] == request_id
        assert line["actor"] == {"user_id": "usr_alice", "key_id": admin["id"]}
    assert created["key_id"] == json.loads(answer["body"])["id"]  # what the line is about
    assert admin["key"] not in log_lines.getvalue()
    assert json.loads(answer["body"])["key"] not in log_lines.getvalue()


def test_each_request_has_its_own_id_and_a_refused_caller_is_not_named(
    api: Api, alice: str, log_lines: io.StringIO
) -> None:
    assert api.call("GET", KEYS, alice).status == 200
    assert api.call("GET", KEYS, "sv" + "c_" + "A" * 50).status == 401

    known, refused = records(log_lines)
    assert known["actor"] == {"user_id": "usr_alice"}
    assert "actor" not in refused and refused["code"] == "invalid_credentials"
    # Locally there is no API Gateway: the id is the Lambda invocation's.
    assert known["correlation_id"] and refused["correlation_id"]
    assert known["correlation_id"] != refused["correlation_id"]


def test_a_sign_in_and_a_refresh_name_the_user(api: Api, log_lines: io.StringIO) -> None:
    from tests.functional.oauth import exchange, refresh, trust
    from tests.oidc_issuer import FakeIssuer

    idp = FakeIssuer()
    trust(api.services, idp)
    signed_in = exchange(api, idp.id_token("alice")).json
    user_id = api.services.verifier.verify(signed_in["access_token"])["sub"]
    assert refresh(api, signed_in["refresh_token"]).status == 200

    requests = [line for line in records(log_lines) if line["message"] == "request"]
    assert [(line["route"], line["actor"]) for line in requests] == [
        ("/v1/auth/exchange", {"user_id": user_id}),
        ("/v1/auth/refresh", {"user_id": user_id}),
    ]
    assert signed_in["refresh_token"] not in log_lines.getvalue()


def test_each_line_is_printed_once_as_json_never_again_as_text() -> None:
    import app  # noqa: F401 - Chalice's app, as the Lambda handler loads it

    service = logging.getLogger("memory-auth")
    ours = [h for h in service.handlers if not type(h).__module__.startswith("_pytest")]

    assert [type(h.formatter).__name__ for h in ours] == ["LambdaPowertoolsFormatter"]
    assert service.propagate is False  # not once more through the root logger's handlers
