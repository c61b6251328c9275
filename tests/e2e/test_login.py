"""Login over real HTTP against the local stack: the development IdP, exchange, refresh, and an
independent verifier (jose) checking our access tokens against our served JWKS."""

from __future__ import annotations

import base64
import json
import secrets
import subprocess

import httpx
import pytest

from local.stack import banner
from tests.e2e.conftest import Stack
from tests.e2e.node import verify_with_jose


def id_token(stack: Stack, subject: str, email: str | None = None) -> str:
    body = {"sub": subject, "email": email or f"{subject}@example.test"}
    answer = httpx.post(stack.info["idpEndpoint"] + "/token", json=body, timeout=10)
    assert answer.status_code == 200, answer.text
    return str(answer.json()["id_token"])


def sign_in(stack: Stack, subject: str) -> dict[str, str]:
    answer = stack.call("POST", "/v1/auth/exchange", body={"id_token": id_token(stack, subject)})
    assert answer.status_code == 200, answer.text
    return dict(answer.json())


def refresh(stack: Stack, refresh_token: str) -> httpx.Response:
    return stack.call("POST", "/v1/auth/refresh", body={"refresh_token": refresh_token})


def test_development_issuer_publishes_discovery_and_keys(stack: Stack) -> None:
    idp = stack.info["idpEndpoint"]
    discovery = httpx.get(idp + "/.well-known/openid-configuration", timeout=10).json()
    jwks = httpx.get(discovery["jwks_uri"], timeout=10).json()
    assert idp.startswith("http://127.0.0.1:")
    assert discovery["issuer"] == idp
    assert discovery["id_token_signing_alg_values_supported"] == ["RS256"]
    assert [key["kty"] for key in jwks["keys"]] == ["RSA"]


def test_three_step_login_id_token_exchange_call(stack: Stack) -> None:
    pair = sign_in(stack, "e2e-alice")
    whoami = stack.call("GET", "/v1/auth/whoami", pair["access_token"])
    assert whoami.status_code == 200
    assert whoami.json()["userId"].startswith("usr_")
    assert whoami.json()["credential"] == "user_token"
    assert sign_in(stack, "e2e-alice")["access_token"] != pair["access_token"]


def test_banner_login_commands_work_as_printed(stack: Stack) -> None:
    text = banner(stack.info)
    commands = text.split("(ID token -> exchange -> call):\n\n", 1)[1].split("\n\n", 1)[0]
    result = subprocess.run(
        ["bash", "-c", "set -eo pipefail\n" + commands], capture_output=True, text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["credential"] == "user_token"


def test_refresh_rotates_and_reuse_revokes_the_sign_in_over_http(stack: Stack) -> None:
    pair = sign_in(stack, "e2e-refresh")
    rotated = refresh(stack, pair["refresh_token"])
    before_reuse = stack.call("GET", "/v1/auth/whoami", rotated.json()["access_token"])
    retried = refresh(stack, pair["refresh_token"])  # its answer lost: the same successor
    onward = refresh(stack, rotated.json()["refresh_token"])
    reused = refresh(stack, pair["refresh_token"])  # its successor is used now: reuse
    after_reuse = refresh(stack, onward.json()["refresh_token"])
    whoami = stack.call("GET", "/v1/auth/whoami", onward.json()["access_token"])
    assert rotated.status_code == 200
    assert rotated.headers["cache-control"] == "no-store"
    assert before_reuse.status_code == 200
    # The reuse ended the sign-in: its access tokens too, on the very next request.
    assert (whoami.status_code, whoami.json()["code"]) == (401, "revoked_credentials")
    assert retried.json()["refresh_token"] == rotated.json()["refresh_token"]
    assert onward.status_code == 200
    assert (reused.status_code, reused.json()["error"]) == (400, "invalid_grant")
    assert (after_reuse.status_code, after_reuse.json()["error"]) == (400, "invalid_grant")


@pytest.mark.parametrize(
    "forged_header",
    [{"alg": "none", "typ": "JWT"}, {"alg": "HS256", "typ": "JWT"}],
    ids=["alg none", "HS256"],
)
def test_forged_id_token_is_invalid_grant_over_http(stack: Stack, forged_header: dict) -> None:
    genuine = id_token(stack, "e2e-mallory")
    claims = genuine.split(".")[1]
    header = base64.urlsafe_b64encode(json.dumps(forged_header).encode()).rstrip(b"=").decode()
    answer = stack.call("POST", "/v1/auth/exchange", body={"id_token": f"{header}.{claims}.x"})
    assert answer.status_code == 400
    assert answer.json()["error"] == "invalid_grant"


def test_jose_verifies_our_access_tokens_against_our_served_jwks(stack: Stack) -> None:
    pair = sign_in(stack, "e2e-jose")
    refreshed = refresh(stack, pair["refresh_token"]).json()["access_token"]
    head, body, signature = pair["access_token"].split(".")
    tampered = f"{head}.{body}.{signature[:-4]}AAAA"
    results = verify_with_jose(
        stack.endpoint + "/.well-known/jwks.json",
        stack.endpoint,
        [pair["access_token"], refreshed, stack.token, tampered],
    )
    whoami = stack.call("GET", "/v1/auth/whoami", pair["access_token"]).json()
    assert [r["ok"] for r in results] == [True, True, True, False]
    assert results[0]["sub"] == whoami["userId"]
    assert results[3]["code"] == "ERR_JWS_SIGNATURE_VERIFICATION_FAILED"


def test_people_are_named_by_the_email_and_name_of_their_sign_in_over_http(
    stack: Stack,
) -> None:
    run = secrets.token_hex(4)
    ada, grace = (f"e2e-{who}-{run}" for who in ("ada", "grace"))

    def person(subject: str, name: str) -> str:
        body = {"sub": subject, "email": f"{subject}@example.test", "name": name}
        token = httpx.post(stack.info["idpEndpoint"] + "/token", json=body, timeout=10)
        pair = stack.call("POST", "/v1/auth/exchange", body={"id_token": token.json()["id_token"]})
        return str(pair.json()["access_token"])

    owner = person(ada, "Ada Lovelace")
    person(grace, "Grace Hopper")
    ws = stack.call("POST", "/v1/workspaces", owner, body={"name": "People"}).json()["id"]

    added = stack.call("PUT", f"/v1/workspaces/{ws}/members/{grace}@example.test", owner)

    assert added.status_code == 201, added.text
    members = stack.call("GET", f"/v1/workspaces/{ws}/members", owner).json()["members"]
    assert {(m["email"], m["name"]) for m in members} == {
        (f"{ada}@example.test", "Ada Lovelace"), (f"{grace}@example.test", "Grace Hopper"),
    }
    whoami = stack.call("GET", "/v1/auth/whoami", owner).json()
    assert (whoami["email"], whoami["name"]) == (f"{ada}@example.test", "Ada Lovelace")
    event = stack.call("GET", "/v1/auth/events", owner).json()["events"][0]
    assert (event["type"], event["actor"]["name"], event["data"]["name"]) == (
        "member.added", "Ada Lovelace", "Grace Hopper"
    )
