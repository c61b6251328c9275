"""The key service over real HTTP against the local stack (moto in its own process)."""

from __future__ import annotations

import threading

import httpx
import pytest

from tests.e2e.conftest import Stack

KEYS = "/v1/auth/api-keys"


def create(stack: Stack, credential: str, **body: object) -> dict:
    body.setdefault("label", "e2e")
    answer = stack.call("POST", KEYS, credential, body=body)
    assert answer.status_code == 201, answer.text
    return dict(answer.json())


def test_first_call_from_the_readme_works(stack: Stack) -> None:
    key = create(stack, stack.token, label="my first key")
    answer = stack.call("GET", "/v1/auth/whoami", key["key"])
    assert answer.status_code == 200
    assert answer.json()["keyId"] == key["id"]


def rotate_concurrently(stack: Stack, key_id: str) -> list[int]:
    """Two rotations of one key, released at the same instant from two threads."""
    barrier = threading.Barrier(2)
    statuses: list[int] = []

    def rotate() -> None:
        with httpx.Client(base_url=stack.endpoint, timeout=30) as http:
            barrier.wait()
            answer = http.post(
                f"{KEYS}/{key_id}/rotate", headers={"Authorization": f"Bearer {stack.token}"}
            )
            statuses.append(answer.status_code)

    threads = [threading.Thread(target=rotate) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return statuses


def test_two_concurrent_rotations_of_one_key_give_one_201_and_one_409(stack: Stack) -> None:
    for _ in range(5):  # a race can hide; run it several times
        key = create(stack, stack.token)
        statuses = rotate_concurrently(stack, key["id"])
        assert sorted(statuses) == [201, 409]
        old = stack.call("GET", f"{KEYS}/{key['id']}", stack.token).json()
        assert old["status"] == "revoked"
        successors = [
            k
            for k in stack.call("GET", KEYS + "?limit=100", stack.token).json()["keys"]
            if k["id"] == old["replacedBy"]
        ]
        assert len(successors) == 1


def test_a_revoked_key_is_refused_on_the_very_next_request(stack: Stack) -> None:
    key = create(stack, stack.token, category="workspace", workspaceId=stack.workspace_id)
    assert stack.call("GET", "/v1/auth/whoami", key["key"]).status_code == 200
    assert stack.call("DELETE", f"{KEYS}/{key['id']}", stack.token).status_code == 204
    answer = stack.call("GET", "/v1/auth/whoami", key["key"])
    assert answer.status_code == 401
    assert answer.json()["code"] == "revoked_credentials"
    assert answer.headers["WWW-Authenticate"] == 'Bearer realm="svc", error="invalid_token"'


def sign_in(stack: Stack, subject: str) -> tuple[str, str]:
    """(user id, user token) of a person signing in at the development issuer."""
    id_token = httpx.post(
        stack.info["idpEndpoint"] + "/token", json={"sub": subject}, timeout=30
    ).json()["id_token"]
    token = stack.call("POST", "/v1/auth/exchange", body={"id_token": id_token}).json()
    user_id = stack.call("GET", "/v1/auth/whoami", token["access_token"]).json()["userId"]
    return user_id, token["access_token"]


def test_a_removed_members_key_is_refused_on_the_next_request(stack: Stack) -> None:
    member_id, member = sign_in(stack, "e2e-member")
    path = f"/v1/workspaces/{stack.workspace_id}/members/{member_id}"
    assert stack.call("PUT", path, stack.token).status_code == 201
    key = create(stack, member, category="workspace", workspaceId=stack.workspace_id)
    assert stack.call("GET", "/v1/auth/whoami", key["key"]).status_code == 200
    assert stack.call("DELETE", path, stack.token).status_code == 204
    answer = stack.call("GET", "/v1/auth/whoami", key["key"])
    assert answer.status_code == 403
    assert answer.json()["code"] == "not_a_member"


@pytest.mark.parametrize("path", ["/", "/v1", "/v1/auth/api-keys/x/y/z", "/v2/auth/whoami"])
def test_unknown_routes_are_problem_404_and_never_echo_the_credential(
    stack: Stack, path: str
) -> None:
    answer = stack.call("GET", path, stack.token)
    assert answer.status_code == 404
    assert answer.headers["Content-Type"] == "application/problem+json"
    assert answer.json()["code"] == "not_found"
    assert stack.token not in answer.text


def test_wrong_method_is_problem_405(stack: Stack) -> None:
    answer = stack.call("PUT", "/v1/auth/whoami", stack.token)
    assert answer.status_code == 405
    assert answer.json()["code"] == "method_not_allowed"


def test_oversized_body_is_problem_413(stack: Stack) -> None:
    answer = stack.http.post(
        KEYS,
        content=b'{"label": "' + b"x" * 20_000 + b'"}',
        headers={"Authorization": f"Bearer {stack.token}", "Content-Type": "application/json"},
    )
    assert answer.status_code == 413
    assert answer.json()["code"] == "payload_too_large"


def test_malformed_json_is_problem_400(stack: Stack) -> None:
    answer = stack.http.post(
        KEYS,
        content=b"{not json",
        headers={"Authorization": f"Bearer {stack.token}", "Content-Type": "application/json"},
    )
    assert answer.status_code == 400
    assert answer.json()["code"] == "invalid_json"


def test_jwks_serves_the_signing_key_with_caching(stack: Stack) -> None:
    answer = stack.call("GET", "/.well-known/jwks.json")
    assert answer.status_code == 200
    assert answer.headers["Cache-Control"] == "public, max-age=300"
    (key,) = answer.json()["keys"][:1]
    assert (key["kty"], key["alg"], key["use"]) == ("RSA", "RS256", "sig")
