"""Enterprise-managed authorization: an enterprise IdP's ID-JAG for an MCP access token by the
JWT bearer grant, every refusal, and the token at the MCP resource (the authorizer)."""

from __future__ import annotations

import secrets
import time
from copy import replace
from typing import Any
from urllib.parse import urlencode

import jwt
import pytest

from chalicelib.config import EnterpriseIdp
from chalicelib.decisions.authorizer import Unauthorized
from chalicelib.sessions.openid import Identity
from chalicelib.workloads.issuers import IssuerKeys
from tests.fixtures.events import bearer, request_event
from tests.functional.conftest import ISSUER, Answer
from tests.functional.oauth_server.conftest import FORM, OTHER_RESOURCE, RESOURCE, Invoke, Mcp
from tests.workload_issuer import FakeFetcher, WorkloadIssuer

JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"
ENTERPRISE = "https://idp.enterprise.example"


@pytest.fixture
def idp(mcp: Mcp) -> WorkloadIssuer:
    """A trusted enterprise IdP (ENTERPRISE_IDPS), its keys served by a fake fetcher."""
    enterprise = WorkloadIssuer(ENTERPRISE)
    fetcher = FakeFetcher(enterprise, WorkloadIssuer("https://untrusted.example"))
    vars(mcp.services)["workload_issuer_keys"] = IssuerKeys(
        fetcher,  # type: ignore[arg-type]
        now=lambda: fetcher.now,
    )
    settings = replace(
        mcp.services.settings,
        enterprise_idps=(EnterpriseIdp(ENTERPRISE, ENTERPRISE + "/.well-known/jwks"),),
    )
    vars(mcp.services)["settings"] = settings
    return enterprise


def id_jag(
    idp: WorkloadIssuer, client_id: str, typ: str = "oauth-id-jag+jwt", **overrides: Any
) -> str:
    now = int(time.time())
    claims: dict[str, Any] = {
        "iss": idp.issuer,
        "sub": "ent-alice",
        "aud": ISSUER,
        "client_id": client_id,
        "resource": RESOURCE,
        "scope": "memory entities",
        "jti": secrets.token_hex(8),
        "iat": now,
        "exp": now + 120,
        "email": "alice@enterprise.example",
        "email_verified": True,
    }
    claims.update(overrides)
    return jwt.encode(
        {k: v for k, v in claims.items() if v is not None},
        idp.rsa,
        algorithm="RS256",
        headers={"kid": idp.rsa_jwk["kid"], "typ": typ},
    )


def grant(mcp: Mcp, assertion: str, **more: str) -> Answer:
    form = {"grant_type": JWT_BEARER, "assertion": assertion, **more}
    return mcp.api.call("POST", "/v1/oauth/token", raw=urlencode(form).encode(), headers=FORM)


def member(mcp: Mcp, subject: str = "ent-alice", workspaces: int = 1) -> tuple[str, list[str]]:
    """The enterprise person, signed up as at sign-in, with `workspaces` of their own."""
    user_id = mcp.services.users.sign_in(Identity(ENTERPRISE, subject), mcp.services.clock.now())
    token = mcp.api.token(user_id)
    return user_id, [mcp.api.workspace(token, f"Team {n}") for n in range(workspaces)]


def refused(answer: Answer, error: str, words: str) -> bool:
    return (
        answer.status == 400
        and answer.json["error"] == error
        and words in answer.json["error_description"]
    )


def test_an_id_jag_gets_an_mcp_token_for_its_resource_and_client_200(
    mcp: Mcp, idp: WorkloadIssuer, authorize: Invoke
) -> None:
    user_id, (workspace,) = member(mcp)
    client_id = mcp.register()["client_id"]

    answer = grant(mcp, id_jag(idp, client_id), scope="memory reasoning")

    assert answer.status == 200, answer.body
    assert answer.headers["Cache-Control"] == "no-store"
    assert set(answer.json) == {"access_token", "token_type", "expires_in", "scope"}
    assert answer.json["scope"] == "memory"  # requested ∩ the ID-JAG's ∩ supported
    claims = jwt.decode(answer.json["access_token"], options={"verify_signature": False})
    assert (claims["aud"], claims["client_id"]) == (RESOURCE, client_id)
    assert (claims["sub"], claims["workspace_id"]) == (user_id, workspace)
    decided = authorize(request_event("/mcp", bearer(answer.json["access_token"])))
    assert decided["policyDocument"]["Statement"][0]["Effect"] == "Allow"
    assert decided["context"]["credential"] == "mcp_token"


def test_a_metadata_document_client_and_a_new_person_are_accepted_200(
    mcp: Mcp, idp: WorkloadIssuer
) -> None:
    client_id = mcp.serve_document()
    first = grant(mcp, id_jag(idp, client_id, sub="ent-new"))
    assert refused(first, "invalid_grant", "member of no workspace")  # created on first use
    user_id, (workspace,) = member(mcp, "ent-new")  # the same person, found again

    answer = grant(mcp, id_jag(idp, client_id, sub="ent-new"))

    assert answer.status == 200, answer.body
    claims = jwt.decode(answer.json["access_token"], options={"verify_signature": False})
    assert (claims["sub"], claims["workspace_id"]) == (user_id, workspace)
    assert answer.json["scope"] == "memory entities"


def test_a_replayed_id_jag_is_400_invalid_grant(mcp: Mcp, idp: WorkloadIssuer) -> None:
    member(mcp)
    assertion = id_jag(idp, mcp.register()["client_id"])

    assert grant(mcp, assertion).status == 200
    assert refused(grant(mcp, assertion), "invalid_grant", "already used")


def test_an_untrusted_issuer_is_400_invalid_grant(mcp: Mcp, idp: WorkloadIssuer) -> None:
    member(mcp)
    other = WorkloadIssuer("https://untrusted.example")

    answer = grant(mcp, id_jag(other, mcp.register()["client_id"]))

    assert refused(answer, "invalid_grant", "not a trusted enterprise identity provider")


def test_another_audience_is_400_invalid_grant(mcp: Mcp, idp: WorkloadIssuer) -> None:
    member(mcp)

    answer = grant(mcp, id_jag(idp, mcp.register()["client_id"], aud="https://other.example"))

    assert refused(answer, "invalid_grant", "audience (aud)")


def test_a_bad_signature_is_400_invalid_grant(mcp: Mcp, idp: WorkloadIssuer) -> None:
    member(mcp)
    good = id_jag(idp, mcp.register()["client_id"])
    forger = WorkloadIssuer(ENTERPRISE)  # same issuer and kid, another key
    forger.rsa_jwk = idp.rsa_jwk
    forged = id_jag(forger, mcp.register()["client_id"])

    assert refused(grant(mcp, forged), "invalid_grant", "signature is not valid")
    assert grant(mcp, good).status == 200


@pytest.mark.parametrize(
    ("resource", "error"),
    [("https://elsewhere.example/mcp", "not served here"), (OTHER_RESOURCE, "differs")],
)
def test_a_resource_not_served_or_not_the_requested_is_400_invalid_target(
    mcp: Mcp, idp: WorkloadIssuer, resource: str, error: str
) -> None:
    member(mcp)

    answer = grant(mcp, id_jag(idp, mcp.register()["client_id"], resource=resource),
                   **({"resource": RESOURCE} if resource == OTHER_RESOURCE else {}))

    assert refused(answer, "invalid_target", error)


def test_a_typ_other_than_id_jag_is_400_invalid_grant(mcp: Mcp, idp: WorkloadIssuer) -> None:
    """Without its typ, the assertion is a workload's: no trust policy accepts it."""
    _, (workspace,) = member(mcp)

    answer = grant(
        mcp, id_jag(idp, mcp.register()["client_id"], typ="JWT"), workspace_id=workspace
    )

    assert refused(answer, "invalid_grant", "no trust policy of this workspace accepts")


def test_an_unknown_client_is_400_invalid_grant(mcp: Mcp, idp: WorkloadIssuer) -> None:
    member(mcp)

    answer = grant(mcp, id_jag(idp, "cli_01UNKNOWN00000000000000000"))

    assert refused(answer, "invalid_grant", "not a client registered here")


def test_an_exp_more_than_5_minutes_ahead_is_400_invalid_grant(
    mcp: Mcp, idp: WorkloadIssuer
) -> None:
    member(mcp)

    answer = grant(mcp, id_jag(idp, mcp.register()["client_id"], exp=int(time.time()) + 600))

    assert refused(answer, "invalid_grant", "more than 5 minutes ahead")


def test_an_expired_id_jag_is_400_invalid_grant(mcp: Mcp, idp: WorkloadIssuer) -> None:
    member(mcp)
    past = int(time.time()) - 600

    answer = grant(mcp, id_jag(idp, mcp.register()["client_id"], iat=past - 60, exp=past))

    assert refused(answer, "invalid_grant", "expired")


def test_a_workspace_the_person_is_not_a_member_of_is_400_invalid_grant(
    mcp: Mcp, idp: WorkloadIssuer
) -> None:
    member(mcp)
    _, other = mcp.person("bob")

    answer = grant(mcp, id_jag(idp, mcp.register()["client_id"]), workspace_id=other)

    assert refused(answer, "invalid_grant", "not a member of this workspace")


def test_several_workspaces_without_workspace_id_is_400_invalid_request_naming_it(
    mcp: Mcp, idp: WorkloadIssuer
) -> None:
    _, (_, second) = member(mcp, workspaces=2)
    client_id = mcp.register()["client_id"]
    assertion = id_jag(idp, client_id)

    unnamed = grant(mcp, assertion)
    named = grant(mcp, assertion, workspace_id=second)

    assert refused(unnamed, "invalid_request", "workspace_id is required")
    assert named.status == 200, named.body  # the refusal did not spend the jti
    claims = jwt.decode(named.json["access_token"], options={"verify_signature": False})
    assert claims["workspace_id"] == second


def test_no_scope_the_id_jag_allows_is_400_invalid_scope(mcp: Mcp, idp: WorkloadIssuer) -> None:
    member(mcp)

    answer = grant(mcp, id_jag(idp, mcp.register()["client_id"]), scope="skills")

    assert refused(answer, "invalid_scope", "allowed by the ID-JAG")


def test_the_metadata_lists_every_grant_and_the_id_jag_profile(mcp: Mcp) -> None:
    body = mcp.api.call("GET", "/.well-known/oauth-authorization-server").json

    assert set(body["grant_types_supported"]) >= {
        "authorization_code",
        "refresh_token",
        "urn:ietf:params:oauth:grant-type:token-exchange",
        JWT_BEARER,
    }
    assert body["authorization_grant_profiles_supported"] == [
        "urn:ietf:params:oauth:grant-profile:id-jag"
    ]


def test_revoking_an_id_jag_token_refuses_it_on_the_next_request(
    mcp: Mcp, idp: WorkloadIssuer, authorize: Invoke
) -> None:
    member(mcp)
    access = grant(mcp, id_jag(idp, mcp.register()["client_id"])).json["access_token"]
    allowed = authorize(request_event("/mcp", bearer(access)))

    revoked = mcp.api.call(
        "POST", "/v1/oauth/revoke", raw=urlencode({"token": access}).encode(), headers=FORM
    )

    assert allowed["policyDocument"]["Statement"][0]["Effect"] == "Allow"
    assert revoked.status == 200
    with pytest.raises(Unauthorized):
        authorize(request_event("/mcp", bearer(access)))
