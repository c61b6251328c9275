"""What REST clients that are not ours send (docs/guides/sdks.md, "Other clients"): each field
of a JSON body in snake_case or camelCase, an optional `grant_type` in a JSON token request,
`error` beside `code` in every problem document."""

from __future__ import annotations

from typing import Any

import pytest

from chalicelib.runtime import Services
from tests.functional.conftest import Api
from tests.functional.oauth import (
    ACCESS_TOKEN_TYPE,
    EXCHANGE,
    REFRESH,
    TOKEN_EXCHANGE,
    assert_oauth_error,
    exchange,
    trust,
)
from tests.oidc_issuer import FakeIssuer

KEYS = "/v1/auth/api-keys"


@pytest.fixture
def idp(services: Services) -> FakeIssuer:
    issuer = FakeIssuer()
    trust(services, issuer)
    return issuer


@pytest.fixture
def refresh_token(api: Api, idp: FakeIssuer) -> str:
    answer = exchange(api, idp.id_token("alice"))
    assert answer.status == 200, answer.body
    return str(answer.json["refresh_token"])


# -- token bodies ----------------------------------------------------------------------------


def test_a_camel_case_refresh_token_is_refreshed_200(api: Api, refresh_token: str) -> None:
    answer = api.call("POST", REFRESH, body={"refreshToken": refresh_token})

    assert answer.status == 200, answer.body
    assert answer.json["refresh_token"] != refresh_token


def test_a_camel_case_grant_type_beside_the_refresh_token_is_refreshed_200(
    api: Api, refresh_token: str
) -> None:
    body = {"grantType": "refresh_token", "refreshToken": refresh_token}

    assert api.call("POST", REFRESH, body=body).status == 200


def test_both_spellings_alike_count_once_200(api: Api, refresh_token: str) -> None:
    body = {"refreshToken": refresh_token, "refresh_token": refresh_token}

    assert api.call("POST", REFRESH, body=body).status == 200


def test_both_spellings_disagreeing_are_invalid_request_400(
    api: Api, refresh_token: str
) -> None:
    body = {"refresh_token": refresh_token, "refreshToken": "r" + "t_other"}

    answer = api.call("POST", REFRESH, body=body)

    assert_oauth_error(answer, 400, "invalid_request")
    assert answer.json["error_description"] == "refresh_token and refreshToken disagree."


def test_an_unknown_field_stays_refused_in_either_spelling_400(
    api: Api, refresh_token: str
) -> None:
    answer = api.call("POST", REFRESH, body={"refreshToken": refresh_token, "deviceId": "x"})

    assert_oauth_error(answer, 400, "invalid_request")
    assert answer.json["error_description"] == "Unknown field: 'deviceId'."


def test_a_camel_case_id_token_is_exchanged_200(api: Api, idp: FakeIssuer) -> None:
    answer = api.call("POST", EXCHANGE, body={"idToken": idp.id_token("alice")})

    assert answer.status == 200, answer.body
    assert {"access_token", "refresh_token"} <= set(answer.json)


def test_a_json_exchange_may_carry_its_grant_type_200(api: Api, idp: FakeIssuer) -> None:
    body = {"grant_type": TOKEN_EXCHANGE, "id_token": idp.id_token("alice")}

    assert api.call("POST", EXCHANGE, body=body).status == 200


@pytest.mark.parametrize("grant_type", ["refresh_token", "authorization_code", "password"])
def test_a_json_exchange_with_another_grant_type_is_unsupported_grant_type_400(
    api: Api, idp: FakeIssuer, grant_type: str
) -> None:
    body = {"grant_type": grant_type, "id_token": idp.id_token("alice")}

    assert_oauth_error(api.call("POST", EXCHANGE, body=body), 400, "unsupported_grant_type")


def test_a_camel_case_delegation_names_its_workspace_200(api: Api, alice: str) -> None:
    workspace = api.workspace(alice)
    body = {
        "grantType": TOKEN_EXCHANGE,
        "subjectToken": alice,
        "subjectTokenType": ACCESS_TOKEN_TYPE,
        "workspaceId": workspace,
        "expiresIn": 120,
    }

    answer = api.call("POST", EXCHANGE, body=body)

    assert answer.status == 200, answer.body
    assert answer.json["expires_in"] == 120
    whoami = api.call("GET", "/v1/auth/whoami", answer.json["access_token"])
    assert whoami.json["workspaceId"] == workspace


def test_an_empty_workspace_id_in_a_json_exchange_is_absent_200(
    api: Api, idp: FakeIssuer
) -> None:
    body = {"idToken": idp.id_token("alice"), "workspaceId": ""}

    assert api.call("POST", EXCHANGE, body=body).status == 200


# -- key bodies ------------------------------------------------------------------------------


def test_a_snake_case_key_body_creates_the_key_it_names_201(api: Api, alice: str) -> None:
    workspace = api.workspace(alice)
    body = {
        "label": "from a snake_case client",
        "category": "workspace",
        "workspace_id": workspace,
        "expires_in_days": 7,
        "requests_per_day": 3,
        "allowed_cidrs": ["10.0.0.0/8"],
    }

    answer = api.call("POST", KEYS, alice, body=body)

    assert answer.status == 201, answer.body
    created = answer.json
    assert (created["workspaceId"], created["requestsPerDay"]) == (workspace, 3)
    assert created["allowedCidrs"] == ["10.0.0.0/8"]


def test_key_fields_in_both_spellings_disagreeing_are_invalid_request_400(
    api: Api, alice: str
) -> None:
    body = {"label": "k", "requestsPerDay": 3, "requests_per_day": 4}

    answer = api.call("POST", KEYS, alice, body=body)

    assert answer.status == 400
    assert (answer.code, answer.json["error"]) == ("invalid_request", "invalid_request")
    assert answer.json["detail"] == "requestsPerDay and requests_per_day disagree."


def test_a_snake_case_rotation_keeps_its_grace_period_201(api: Api, alice: str) -> None:
    key = api.create_key(alice)

    answer = api.call(
        "POST", f"{KEYS}/{key['id']}/rotate", alice, body={"grace_period_seconds": 60}
    )

    assert answer.status == 201, answer.body
    old = api.call("GET", f"{KEYS}/{key['id']}", alice).json
    assert old["status"] == "active" and old["replacedBy"] == answer.json["id"]


def test_a_key_body_with_an_unknown_field_is_still_unknown_field_400(
    api: Api, alice: str
) -> None:
    answer = api.call("POST", KEYS, alice, body={"label": "k", "readOnly": True})

    assert answer.status == 400
    assert answer.code == "unknown_field"


# -- problem documents -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("request_args", "code"),
    [
        (("GET", "/v1/auth/whoami"), "missing_credentials"),
        (("GET", "/v1/auth/whoami", "not-a-key"), "invalid_credentials"),
        (("GET", "/v1/auth/api-keys/key_01NOSUCHKEY00000000000000"), "not_found"),
    ],
)
def test_every_problem_document_carries_error_with_its_code(
    api: Api, alice: str, request_args: tuple[Any, ...], code: str
) -> None:
    method, path, *credential = request_args
    answer = api.call(method, path, *(credential or ([alice] if code == "not_found" else [])))

    assert answer.headers["Content-Type"] == "application/problem+json"
    assert (answer.json["code"], answer.json["error"]) == (code, code)
