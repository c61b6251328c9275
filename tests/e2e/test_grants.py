"""The token endpoint's assertion grants over real HTTP against the local stack: workload
tokens by jwt-bearer (the development provider's workload tokens, a trust policy naming it)
and ID-JAGs of the development provider, which the local stack trusts in ENTERPRISE_IDPS,
with each refusal."""

from __future__ import annotations

import time
from typing import Any

import httpx
import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import rsa

from tests.e2e.conftest import Stack

AUDIENCE = "memory-service-jwt-bearer"
SUBJECT = "repo:acme/bearer:ref:refs/heads/main"
JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"
NOT_ACCEPTED = {
    "error": "invalid_grant",
    "error_description": "no trust policy of this workspace accepts this token",
}


def token(stack: Stack, form: dict[str, str]) -> httpx.Response:
    return stack.http.post("/v1/oauth/token", data=form)


def workload_token(stack: Stack, audience: str = AUDIENCE, **more: Any) -> str:
    answer = httpx.post(
        stack.info["idpEndpoint"] + "/workload-token",
        json={"sub": SUBJECT, "aud": audience, "claims": {}, **more},
        timeout=10,
    )
    assert answer.status_code == 200, answer.text
    return str(answer.json()["token"])


def bearer(stack: Stack, assertion: str, workspace: str | None = None) -> httpx.Response:
    form = {"grant_type": JWT_BEARER, "assertion": assertion}
    return token(stack, {**form, "workspace_id": workspace or stack.workspace_id})


def forged(assertion: str, iss: str | None = None, **headers: str) -> str:
    """The assertion's claims (and kid) signed by a key nobody published (another `iss`)."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    claims = jwt.decode(assertion, options={"verify_signature": False})
    claims["iss"] = iss or claims["iss"]
    header = {**jwt.get_unverified_header(assertion), **headers}
    return jwt.encode(claims, key, algorithm="RS256", headers=header)


@pytest.fixture(scope="module")
def policy(stack: Stack) -> dict[str, Any]:
    answer = stack.call(
        "POST",
        f"/v1/workspaces/{stack.workspace_id}/trust-policies",
        stack.token,
        body={
            "name": "jwt-bearer CI",
            "issuer": stack.info["idpEndpoint"],
            "audience": AUDIENCE,
            "subject": SUBJECT,
            "scopes": ["memory"],
        },
    )
    assert answer.status_code == 201, answer.text
    return dict(answer.json())


def test_metadata_lists_every_grant_and_the_id_jag_profile(stack: Stack) -> None:
    body = stack.http.get("/.well-known/oauth-authorization-server").json()

    assert set(body["grant_types_supported"]) >= {
        "authorization_code",
        "refresh_token",
        "urn:ietf:params:oauth:grant-type:token-exchange",
        JWT_BEARER,
    }
    assert body["authorization_grant_profiles_supported"] == [
        "urn:ietf:params:oauth:grant-profile:id-jag"
    ]


def test_a_workload_jwt_bearer_assertion_is_200_once_then_400_replayed(
    stack: Stack, policy: dict[str, Any]
) -> None:
    assertion = workload_token(stack)

    first = bearer(stack, assertion)
    replayed = bearer(stack, assertion)

    assert first.status_code == 200, first.text
    assert first.json()["scope"] == "memory"
    whoami = stack.call("GET", "/v1/auth/whoami", first.json()["access_token"])
    assert whoami.json()["credential"] == "workload"
    assert (replayed.status_code, replayed.json()) == (400, NOT_ACCEPTED)


@pytest.mark.parametrize("refusal", ["signature", "audience", "expiry"])
def test_a_refused_workload_assertion_is_400_invalid_grant_with_the_one_refusal(
    stack: Stack, policy: dict[str, Any], refusal: str
) -> None:
    assertion = {
        "signature": lambda: forged(workload_token(stack)),
        "audience": lambda: workload_token(stack, audience="another-service"),
        "expiry": lambda: workload_token(stack, lifetime=-3600),
    }[refusal]()

    answer = bearer(stack, assertion)

    assert (answer.status_code, answer.json()) == (400, NOT_ACCEPTED)


# -- ID-JAG -------------------------------------------------------------------------------


def id_token(stack: Stack, subject: str) -> str:
    answer = httpx.post(stack.info["idpEndpoint"] + "/token", json={"sub": subject}, timeout=10)
    return str(answer.json()["id_token"])


def client_id(stack: Stack) -> str:
    answer = stack.call(
        "POST",
        "/v1/oauth/register",
        body={"client_name": "e2e agent", "redirect_uris": ["http://127.0.0.1:47215/cb"]},
    )
    return str(answer.json()["client_id"])


def id_jag(stack: Stack, subject: str = "developer", **overrides: str) -> str:
    form = {
        "grant_type": "urn:ietf:params:oauth:grant-type:token-exchange",
        "requested_token_type": "urn:ietf:params:oauth:token-type:id-jag",
        "subject_token": id_token(stack, subject),
        "subject_token_type": "urn:ietf:params:oauth:token-type:id_token",
        "audience": stack.endpoint,
        "resource": stack.info["mcpResource"],
        "client_id": overrides.pop("client_id", None) or client_id(stack),
        "scope": "memory entities",
        **overrides,
    }
    answer = httpx.post(stack.info["idpEndpoint"] + "/id-jag", data=form, timeout=10)
    assert answer.status_code == 200, answer.text
    assert answer.json()["issued_token_type"] == "urn:ietf:params:oauth:token-type:id-jag"
    return str(answer.json()["access_token"])


def grant(stack: Stack, assertion: str, **more: str) -> httpx.Response:
    return token(stack, {"grant_type": JWT_BEARER, "assertion": assertion, **more})


def refused(answer: httpx.Response, error: str, words: str) -> bool:
    body = answer.json()
    return answer.status_code == 400 and body["error"] == error and words in str(
        body["error_description"]
    )


def test_an_id_jag_gets_an_mcp_token_200_without_refresh_and_once_only(stack: Stack) -> None:
    assertion = id_jag(stack)

    answer = grant(stack, assertion, scope="memory")
    again = grant(stack, assertion, scope="memory")

    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert "refresh_token" not in body and body["scope"] == "memory"
    claims = jwt.decode(body["access_token"], options={"verify_signature": False})
    assert claims["aud"] == stack.info["mcpResource"]
    assert (claims["sub"], claims["workspace_id"]) == (stack.user_id, stack.workspace_id)
    assert refused(again, "invalid_grant", "already used")


def test_an_id_jag_of_an_untrusted_issuer_is_400_invalid_grant(stack: Stack) -> None:
    answer = grant(stack, forged(id_jag(stack), iss="https://idp.untrusted.example"))

    assert refused(answer, "invalid_grant", "not a trusted enterprise identity provider")


def test_an_id_jag_for_another_audience_is_400_invalid_grant(stack: Stack) -> None:
    answer = grant(stack, id_jag(stack, audience="https://other-as.example"))

    assert refused(answer, "invalid_grant", "audience (aud)")


def test_an_id_jag_for_another_resource_is_400_invalid_target(stack: Stack) -> None:
    answer = grant(stack, id_jag(stack, resource="https://elsewhere.example/mcp"))

    assert refused(answer, "invalid_target", "not served here")


def test_an_assertion_whose_typ_is_not_id_jag_is_400_invalid_grant(stack: Stack) -> None:
    """Forged with typ JWT, it is taken as a workload's: no trust policy accepts it."""
    answer = grant(
        stack, forged(id_jag(stack), typ="JWT"), workspace_id=stack.workspace_id
    )

    assert (answer.status_code, answer.json()) == (400, NOT_ACCEPTED)


def test_an_id_jag_with_a_bad_signature_is_400_invalid_grant(stack: Stack) -> None:
    answer = grant(stack, forged(id_jag(stack)))

    assert refused(answer, "invalid_grant", "signature is not valid")


def test_an_id_jag_for_an_unknown_client_is_400_invalid_grant(stack: Stack) -> None:
    answer = grant(stack, id_jag(stack, client_id="cli_01UNKNOWN00000000000000000"))

    assert refused(answer, "invalid_grant", "not a client registered here")


def test_an_id_jag_expiring_more_than_5_minutes_ahead_is_400_invalid_grant(
    stack: Stack,
) -> None:
    answer = grant(stack, id_jag(stack, lifetime="900"))

    assert refused(answer, "invalid_grant", "more than 5 minutes ahead")


def test_an_id_jag_of_a_person_in_no_workspace_or_not_a_member_is_400_invalid_grant(
    stack: Stack,
) -> None:
    nobody = grant(stack, id_jag(stack, subject=f"e2e-new-{time.time_ns()}"))
    outsider = id_jag(stack, subject="e2e-outsider")
    not_member = grant(stack, outsider, workspace_id=stack.workspace_id)

    assert refused(nobody, "invalid_grant", "member of no workspace")
    assert refused(not_member, "invalid_grant", "not a member of this workspace")


def test_an_id_jag_of_a_person_in_several_workspaces_needs_workspace_id_400_then_200(
    stack: Stack,
) -> None:
    subject = f"e2e-several-{time.time_ns()}"
    signed_in = stack.http.post("/v1/auth/exchange", json={"id_token": id_token(stack, subject)})
    user_token = signed_in.json()["access_token"]
    workspaces = [
        stack.call("POST", "/v1/workspaces", user_token, body={"name": name}).json()["id"]
        for name in ("One", "Two")
    ]
    assertion = id_jag(stack, subject=subject)

    unnamed = grant(stack, assertion)
    named = grant(stack, assertion, workspace_id=workspaces[1])

    assert refused(unnamed, "invalid_request", "workspace_id is required")
    assert named.status_code == 200, named.text
    claims = jwt.decode(named.json()["access_token"], options={"verify_signature": False})
    assert claims["workspace_id"] == workspaces[1]


# -- a real client: the Python MCP SDK's ID-JAG provider ----------------------------------


class Memory:
    """The SDK's TokenStorage, in memory."""

    tokens: Any = None
    client_info: Any = None

    async def get_tokens(self) -> Any:
        return self.tokens

    async def set_tokens(self, tokens: Any) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> Any:
        return self.client_info

    async def set_client_info(self, info: Any) -> None:
        self.client_info = info


def test_the_python_sdks_id_jag_provider_sends_a_client_secret_and_is_refused_401(
    stack: Stack,
) -> None:
    """`mcp` 2.3's IdentityAssertionOAuthProvider (SEP-990) is for confidential clients only:
    it sends a client secret with the ID-JAG, and clients here are public (401
    `invalid_client`). The day it serves public clients, this test fails: drive it then."""
    import asyncio

    import httpx2
    from mcp.client.auth import OAuthTokenError
    from mcp.client.auth.extensions.identity_assertion import IdentityAssertionOAuthProvider

    resource = stack.info["mcpResource"]
    registered = client_id(stack)
    asked: list[tuple[str, str]] = []

    async def fetch_id_jag(audience: str, for_resource: str) -> str:
        asked.append((audience, for_resource))
        return id_jag(stack, client_id=registered, audience=audience, resource=for_resource)

    provider = IdentityAssertionOAuthProvider(
        server_url=resource,
        storage=Memory(),
        client_id=registered,
        client_secret="none-" "issued",  # the provider refuses to start without one
        issuer=stack.endpoint,
        assertion_provider=fetch_id_jag,
    )

    async def call() -> None:
        async with httpx2.AsyncClient(auth=provider, timeout=30) as http:
            await http.post(resource, json={"jsonrpc": "2.0", "id": 1, "method": "ping"})

    with pytest.raises(OAuthTokenError, match=r"\(401\).*invalid_client"):
        asyncio.run(call())
    assert asked == [(stack.endpoint, resource)]  # it found us and asked the IdP correctly
