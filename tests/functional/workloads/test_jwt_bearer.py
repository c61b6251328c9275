"""Workload tokens by the JWT bearer grant (RFC 7523) at `POST /v1/oauth/token`: judged by
the trust policies exactly as RFC 8693's form (the same one refusal), the `jti` single use."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

import jwt
import pytest

from chalicelib.workloads.model import workload_subject
from tests.functional.conftest import Answer, Api
from tests.functional.workloads.conftest import LogLines, create_policy, exchange
from tests.functional.workloads.test_exchange import refused_as_no_match
from tests.oidc_issuer import signing_key
from tests.workload_issuer import REPO_SUBJECT, WorkloadIssuer

pytestmark = pytest.mark.usefixtures("fetcher")

JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"


def bearer(api: Api, assertion: str, workspace: str | None, **more: str) -> Answer:
    form = {
        "grant_type": JWT_BEARER,
        "assertion": assertion,
        **({"workspace_id": workspace} if workspace else {}),
        **more,
    }
    return api.call(
        "POST",
        "/v1/oauth/token",
        raw=urlencode(form).encode(),
        headers={"Content-Type": "application/x-www-form-urlencoded"},
    )


def reasons(log_lines: LogLines) -> list[str]:
    return [record["reason"] for record in log_lines.of("workload token refused")]


@pytest.fixture
def policy(api: Api, alice: str, workspace: str) -> dict[str, Any]:
    return dict(create_policy(api, alice, workspace).json)


def test_a_workload_jwt_bearer_assertion_gets_the_rfc_8693_forms_token_200(
    api: Api, issuer: WorkloadIssuer, workspace: str, policy: dict[str, Any]
) -> None:
    answer = bearer(api, issuer.token(jti="run-1"), workspace, scope="memory")

    assert answer.status == 200, answer.body
    assert answer.headers["Cache-Control"] == "no-store"
    body = answer.json
    assert set(body) == {"access_token", "issued_token_type", "token_type", "expires_in", "scope"}
    assert (body["token_type"], body["scope"]) == ("Bearer", "memory")
    claims = jwt.decode(body["access_token"], options={"verify_signature": False})
    assert claims["sub"] == workload_subject(policy["id"], REPO_SUBJECT)
    assert (claims["workspace_id"], claims["policy"]) == (workspace, policy["id"])
    whoami = api.call("GET", "/v1/auth/whoami", body["access_token"])
    assert whoami.status == 200, whoami.body


def test_a_replayed_jti_is_400_invalid_grant_with_the_one_refusal(
    api: Api, issuer: WorkloadIssuer, workspace: str, policy: dict[str, Any], log_lines: LogLines
) -> None:
    assertion = issuer.token(jti="run-2")
    first = bearer(api, assertion, workspace)
    again = bearer(api, assertion, workspace)

    assert first.status == 200, first.body
    assert refused_as_no_match(again)
    assert reasons(log_lines) == ["its jti was already used"]


def test_the_same_jwt_at_the_rfc_8693_form_is_not_spent_200_twice(
    api: Api, issuer: WorkloadIssuer, workspace: str, policy: dict[str, Any]
) -> None:
    """The token exchange form keeps its rule (no jti needed); only jwt-bearer spends it."""
    assertion = issuer.token(jti="run-3")

    assert exchange(api, assertion, workspace).status == 200
    assert exchange(api, assertion, workspace).status == 200


def test_an_assertion_without_jti_is_400_invalid_grant(
    api: Api, issuer: WorkloadIssuer, workspace: str, policy: dict[str, Any], log_lines: LogLines
) -> None:
    answer = bearer(api, issuer.token(), workspace)

    assert refused_as_no_match(answer)
    assert reasons(log_lines) == ["no jti claim (the jwt-bearer form needs one)"]


@pytest.mark.parametrize(
    ("overrides", "reason"),
    [
        ({"audience": "another-service"}, "no trust policy of the workspace names its audience"),
        ({"iat": 1_000_000, "exp": 1_000_600}, "expired"),
    ],
    ids=["audience", "expiry"],
)
def test_a_refused_assertion_is_400_invalid_grant_with_the_one_refusal(
    api: Api,
    issuer: WorkloadIssuer,
    workspace: str,
    policy: dict[str, Any],
    log_lines: LogLines,
    overrides: dict[str, Any],
    reason: str,
) -> None:
    answer = bearer(api, issuer.token(jti="run-4", **overrides), workspace)

    assert refused_as_no_match(answer)
    assert reasons(log_lines) == [reason]


def test_a_bad_signature_is_400_invalid_grant_and_spends_no_jti(
    api: Api, issuer: WorkloadIssuer, workspace: str, policy: dict[str, Any], log_lines: LogLines
) -> None:
    good = issuer.token(jti="run-5")
    forged = jwt.encode(  # the same claims and kid, signed by a key the issuer never published
        jwt.decode(good, options={"verify_signature": False}),
        signing_key(),
        algorithm="RS256",
        headers={"kid": issuer.rsa_jwk["kid"]},
    )

    assert refused_as_no_match(bearer(api, forged, workspace))
    assert reasons(log_lines) == ["signature not valid"]
    assert bearer(api, good, workspace).status == 200


def test_a_resource_other_than_the_issuer_is_400_invalid_target(
    api: Api, issuer: WorkloadIssuer, workspace: str, policy: dict[str, Any]
) -> None:
    answer = bearer(
        api, issuer.token(jti="run-6"), workspace, resource="https://elsewhere.example"
    )

    assert (answer.status, answer.json["error"]) == (400, "invalid_target")


def test_without_workspace_id_is_400_invalid_request(
    api: Api, issuer: WorkloadIssuer, policy: dict[str, Any]
) -> None:
    answer = bearer(api, issuer.token(jti="run-7"), None)

    assert (answer.status, answer.json["error"]) == (400, "invalid_request")
    assert answer.json["error_description"] == "workspace_id is required."


def test_without_assertion_is_400_invalid_request(api: Api, workspace: str) -> None:
    answer = api.call(
        "POST",
        "/v1/oauth/token",
        raw=urlencode({"grant_type": JWT_BEARER, "workspace_id": workspace}).encode(),
        headers={"Content-Type": "application/x-www-form-urlencoded"},
    )

    assert (answer.status, answer.json) == (
        400,
        {"error": "invalid_request", "error_description": "assertion is required."},
    )
