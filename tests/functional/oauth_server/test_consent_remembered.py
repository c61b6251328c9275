"""Consent remembered per person, client, workspace and scopes: a later authorization the
remembered consent covers goes straight back to the client after sign-in; anything more,
another client or workspace, a redirect that is not https, and any revocation of the grant,
asks again. The clients here redirect to an https page (WEB_CALLBACK) unless said."""

from __future__ import annotations

from urllib.parse import urlencode

import jwt

from tests.functional.conftest import Answer
from tests.functional.oauth_server.conftest import (
    CALLBACK,
    CIMD_URL,
    FORM,
    Browser,
    Mcp,
    code_grant,
    pkce,
    query_of,
)

WEB_CALLBACK = "https://app.test.example/oauth/callback"


def web_client(mcp: Mcp, url: str = CIMD_URL) -> str:
    """A client by metadata document whose redirect URIs are its https page and a loopback."""
    return mcp.serve_document(url, redirect_uris=[WEB_CALLBACK, CALLBACK])


def allowed(
    mcp: Mcp, client_id: str, subject: str, workspace: str, scope: str | None = None
) -> dict:
    """A person allows `client_id` on the consent page; the tokens the client gets."""
    verifier, challenge = pkce()
    browser = Browser(mcp)
    at_provider = browser.authorize(client_id, challenge, scope=scope, redirect_uri=WEB_CALLBACK)
    _, form = browser.consent_form(browser.sign_in(at_provider, subject))
    code = query_of(browser.decide(form, workspace=workspace).headers["Location"])["code"]
    answer = mcp.token(code_grant(client_id, code, verifier, redirect_uri=WEB_CALLBACK))
    assert answer.status == 200, answer.body
    return dict(answer.json)


def signed_in_again(
    mcp: Mcp, client_id: str, subject: str, scope: str | None = None, **overrides: str
) -> tuple[Answer, str]:
    """A later authorization of the same person, up to the answer after sign-in."""
    verifier, challenge = pkce()
    browser = Browser(mcp)
    at_provider = browser.authorize(
        client_id, challenge, scope=scope, **{"redirect_uri": WEB_CALLBACK, **overrides}
    )
    return browser.sign_in(at_provider, subject), verifier


def went_straight_back(answer: Answer) -> bool:
    assert answer.status == 303, answer.body
    return answer.headers["Location"].startswith((WEB_CALLBACK + "?", CALLBACK + "?"))


def claims_of(tokens: dict) -> dict:
    return dict(jwt.decode(tokens["access_token"], options={"verify_signature": False}))


def revoke(mcp: Mcp, token: str) -> Answer:
    raw = urlencode({"token": token}).encode()
    return mcp.api.call("POST", "/v1/oauth/revoke", headers=FORM, raw=raw)


def test_the_same_scopes_again_skip_the_consent_page_and_keep_the_workspace(mcp: Mcp) -> None:
    _, workspace = mcp.person("ann")
    client_id = web_client(mcp)
    allowed(mcp, client_id, "ann", workspace)

    answer, verifier = signed_in_again(mcp, client_id, "ann")

    assert went_straight_back(answer)
    query = query_of(answer.headers["Location"])
    assert query["state"] == "state-1"
    tokens = mcp.token(code_grant(client_id, query["code"], verifier, redirect_uri=WEB_CALLBACK))
    assert tokens.status == 200, tokens.body
    assert claims_of(tokens.json)["workspace_id"] == workspace


def test_fewer_scopes_skip_the_consent_page_and_more_scopes_ask_again(mcp: Mcp) -> None:
    _, workspace = mcp.person("ben")
    client_id = web_client(mcp)
    allowed(mcp, client_id, "ben", workspace, scope="memory entities")

    fewer, _ = signed_in_again(mcp, client_id, "ben", scope="memory")
    wider, _ = signed_in_again(mcp, client_id, "ben", scope="memory entities skills")

    assert went_straight_back(fewer)
    assert not went_straight_back(wider)
    assert "/v1/oauth/consent?" in wider.headers["Location"]


def test_another_client_asks_again(mcp: Mcp) -> None:
    _, workspace = mcp.person("cleo")
    client_id = web_client(mcp)
    other = web_client(mcp, "https://other-app.test.example/client.json")
    allowed(mcp, client_id, "cleo", workspace)

    answer, _ = signed_in_again(mcp, other, "cleo")

    assert not went_straight_back(answer)


def test_another_person_is_asked_for_the_same_client(mcp: Mcp) -> None:
    _, workspace = mcp.person("dora")
    mcp.person("eli")
    client_id = web_client(mcp)
    allowed(mcp, client_id, "dora", workspace)

    answer, _ = signed_in_again(mcp, client_id, "eli")

    assert not went_straight_back(answer)


def test_another_workspace_is_chosen_on_the_page_and_then_remembered_instead(
    mcp: Mcp,
) -> None:
    token, first = mcp.person("fay")
    second = mcp.api.workspace(token, "Second")
    client_id = web_client(mcp)
    allowed(mcp, client_id, "fay", first)

    _, challenge = pkce()
    browser = Browser(mcp)
    asked = browser.sign_in(browser.authorize(client_id, challenge, prompt="consent"), "fay")
    page, form = browser.consent_form(asked)
    browser.decide(form, workspace=second)
    later, verifier = signed_in_again(mcp, client_id, "fay")

    assert f'<option value="{first}" selected>'.encode() in page.body
    assert went_straight_back(later)
    code = query_of(later.headers["Location"])["code"]
    tokens = mcp.token(code_grant(client_id, code, verifier, redirect_uri=WEB_CALLBACK))
    assert tokens.status == 200, tokens.body
    assert claims_of(tokens.json)["workspace_id"] == second


def test_a_workspace_the_person_left_is_asked_again(mcp: Mcp) -> None:
    owner, shared = mcp.person("gus", workspace="Shared")
    member_token, _ = mcp.person("hana")
    hana = mcp.api.call("GET", "/v1/auth/whoami", member_token).json["userId"]
    mcp.api.add_member(owner, shared, hana)
    client_id = web_client(mcp)
    allowed(mcp, client_id, "hana", shared)
    removed = mcp.api.call("DELETE", f"/v1/workspaces/{shared}/members/{hana}", owner)
    assert removed.status == 204

    answer, _ = signed_in_again(mcp, client_id, "hana")

    assert not went_straight_back(answer)


def test_a_denial_is_not_remembered(mcp: Mcp) -> None:
    mcp.person("ida")
    client_id = web_client(mcp)
    _, challenge = pkce()
    browser = Browser(mcp)
    _, form = browser.consent_form(browser.sign_in(browser.authorize(client_id, challenge), "ida"))
    browser.decide(form, decision="deny")

    answer, _ = signed_in_again(mcp, client_id, "ida")

    assert not went_straight_back(answer)


def test_revoking_the_grant_forgets_the_consent(mcp: Mcp) -> None:
    _, workspace = mcp.person("jon")
    client_id = web_client(mcp)
    tokens = allowed(mcp, client_id, "jon", workspace)
    before, _ = signed_in_again(mcp, client_id, "jon")

    revoked = revoke(mcp, tokens["refresh_token"])
    after, _ = signed_in_again(mcp, client_id, "jon")

    assert went_straight_back(before)
    assert revoked.status == 200
    assert not went_straight_back(after)


def test_revoking_by_access_token_forgets_the_consent_too(mcp: Mcp) -> None:
    _, workspace = mcp.person("kim")
    client_id = web_client(mcp)
    tokens = allowed(mcp, client_id, "kim", workspace)

    revoked = revoke(mcp, tokens["access_token"])
    after, _ = signed_in_again(mcp, client_id, "kim")

    assert revoked.status == 200
    assert not went_straight_back(after)


def test_a_reused_refresh_token_revokes_the_grant_and_forgets_the_consent(mcp: Mcp) -> None:
    _, workspace = mcp.person("lea")
    client_id = web_client(mcp)
    first = allowed(mcp, client_id, "lea", workspace)["refresh_token"]
    refresh = {"grant_type": "refresh_token", "client_id": client_id}
    second = mcp.token({**refresh, "refresh_token": first}).json["refresh_token"]
    assert mcp.token({**refresh, "refresh_token": second}).status == 200

    replayed = mcp.token({**refresh, "refresh_token": first})
    after, _ = signed_in_again(mcp, client_id, "lea")

    assert replayed.status == 400
    assert not went_straight_back(after)


def test_a_reused_code_revokes_the_grant_and_forgets_the_consent(mcp: Mcp) -> None:
    _, workspace = mcp.person("max")
    client_id = web_client(mcp)
    verifier, challenge = pkce()
    browser = Browser(mcp)
    _, form = browser.consent_form(browser.sign_in(browser.authorize(client_id, challenge), "max"))
    code = query_of(browser.decide(form, workspace=workspace).headers["Location"])["code"]
    assert mcp.token(code_grant(client_id, code, verifier)).status == 200

    reused = mcp.token(code_grant(client_id, code, verifier))
    after, _ = signed_in_again(mcp, client_id, "max")

    assert reused.status == 400
    assert not went_straight_back(after)


def test_the_consent_page_warns_when_the_redirect_host_is_not_the_documents_host(
    mcp: Mcp,
) -> None:
    mcp.person("ned")
    same = mcp.serve_document(
        "https://web.test.example/client.json", redirect_uris=["https://web.test.example/cb"]
    )
    other = mcp.serve_document(
        "https://docs.test.example/client.json", redirect_uris=["https://elsewhere.test.example/cb"]
    )
    bodies = []
    for client_id, redirect_uri in (
        (same, "https://web.test.example/cb"), (other, "https://elsewhere.test.example/cb")
    ):
        _, challenge = pkce()
        browser = Browser(mcp)
        at_provider = browser.authorize(client_id, challenge, redirect_uri=redirect_uri)
        bodies.append(browser.consent_form(browser.sign_in(at_provider, "ned"))[0].body)

    assert b"Another address than the application" not in bodies[0]
    assert b"Another address than the application" in bodies[1]
    assert b"docs.test.example" in bodies[1] and b"elsewhere.test.example" in bodies[1]


def test_a_loopback_redirect_is_asked_again_with_the_remembered_workspace_selected(
    mcp: Mcp,
) -> None:
    token, first = mcp.person("olga")
    second = mcp.api.workspace(token, "Second")
    client_id = web_client(mcp)
    allowed(mcp, client_id, "olga", second)

    # Any program on the computer can listen on a loopback port (RFC 8252 §8.6).
    _, challenge = pkce()
    browser = Browser(mcp)
    answer = browser.sign_in(browser.authorize(client_id, challenge, redirect_uri=CALLBACK), "olga")
    page, _ = browser.consent_form(answer)
    over_https, _ = signed_in_again(mcp, client_id, "olga")

    assert not went_straight_back(answer)
    assert f'<option value="{second}" selected>'.encode() in page.body
    assert f'<option value="{first}">'.encode() in page.body
    assert went_straight_back(over_https)
