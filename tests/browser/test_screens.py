"""This phase's screens, in a real browser at 1280 and 390 px: sign-out that revokes, Connected
apps (MCP grants, disconnect), Trust policies (owner only, a live preview of the subject
pattern, delete) and a key's usage and daily quota; hostile text that never overflows; the
page's CSP holds; and axe-core with zero findings of any impact on every new screen and
dialog at both widths."""

from __future__ import annotations

import base64
import hashlib
import json
import re
import secrets
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import httpx
import pytest
from playwright.sync_api import expect

from tests.browser.conftest import Person, Stack
from tests.browser.test_keys import create_workspace, key_row
from tests.browser.test_page import axe_violations
from tests.browser.test_people import (
    JOINED_EMOJI,
    LONG_WORD,
    PERSIAN,
    WIDTHS,
    a_member_of,
    no_sideways_scroll,
    unique,
)

REDIRECT_URI = "http://127.0.0.1:9/callback"
# An app's own name, as hostile as a registration allows (100 printable characters: no
# joiners): an emoji, Persian without its non-joiner, and a long word with nowhere to break.
HOSTILE_APP = f"\U0001f916 {PERSIAN.replace(chr(0x200C), '')} {LONG_WORD}"


def connect_app(person: Person, subject: str, client_name: str) -> dict[str, Any]:
    """An MCP client registered, allowed by `subject` on the consent page (in a tab of its
    own), and its code redeemed: a grant of that person. Returns the token answer."""
    stack = person.stack
    registered = httpx.post(
        f"{stack.endpoint}/v1/oauth/register",
        json={
            "redirect_uris": [REDIRECT_URI],
            "client_name": client_name,
            "grant_types": ["authorization_code", "refresh_token"],
        },
    )
    assert registered.status_code == 201, registered.text
    client_id = registered.json()["client_id"]
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest())
    parameters = {
        "response_type": "code",
        "client_id": client_id,
        "redirect_uri": REDIRECT_URI,
        "code_challenge": challenge.rstrip(b"=").decode(),
        "code_challenge_method": "S256",
        "state": "screens",
        "resource": stack.info["mcpResource"],
    }
    tab = person.context.new_page()
    # Nothing listens at the redirect URI: the tab stops there, with the code in its address.
    tab.route("http://127.0.0.1:9/**", lambda route: route.fulfill(body="back"))
    tab.goto(f"{stack.endpoint}/v1/oauth/authorize?{urlencode(parameters)}")
    tab.get_by_label("Subject (user name)").fill(subject)
    tab.get_by_label("Email").fill(f"{subject}@example.test")
    tab.get_by_role("button", name="Sign in").click()
    tab.wait_for_url(re.compile(r"/v1/oauth/consent\?"))
    tab.get_by_role("button", name="Allow").click()
    tab.wait_for_url(re.compile(r"^http://127\.0\.0\.1:9/callback\?"))
    code = parse_qs(urlsplit(tab.url).query)["code"][0]
    tab.close()
    tokens = httpx.post(
        f"{stack.endpoint}/v1/oauth/token",
        data={
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": REDIRECT_URI,
            "client_id": client_id,
            "code_verifier": verifier,
            "resource": stack.info["mcpResource"],
        },
    )
    assert tokens.status_code == 200, tokens.text
    return {**tokens.json(), "client_id": client_id}


# -- Sign-out -------------------------------------------------------------------------------


def test_sign_out_revokes_the_refresh_token_before_clearing_the_tab(people, stack: Stack) -> None:
    person: Person = people("screens-sign-out")
    person.sign_in(unique("leaving"))
    page = person.page
    refresh_token = json.loads(person.storage("sessionStorage")["memory-dashboard.tokens"])[
        "refreshToken"
    ]

    page.get_by_role("button", name="Sign out").click()

    expect(page.get_by_text("You are signed out.")).to_be_visible()
    assert person.storage("sessionStorage") == {}
    refreshed = stack.call("POST", "/v1/auth/refresh", body={"refresh_token": refresh_token})
    assert refreshed.status_code == 400, refreshed.text
    assert refreshed.json()["error"] == "invalid_grant"
    assert person.csp_violations() == []


# -- Connected apps -------------------------------------------------------------------------


@pytest.mark.parametrize("width", ["desktop", "phone"])
def test_connected_apps_lists_grants_and_disconnects_after_a_confirmation(
    people, stack: Stack, width: str
) -> None:
    subject = unique("connector")
    person: Person = people(f"screens-apps-{width}", viewport=WIDTHS[width])
    person.sign_in(subject, name="Ada Lovelace")
    page = person.page
    page.get_by_role("link", name="Connected apps").click()
    expect(page.get_by_role("heading", name="No connected apps")).to_be_visible()
    expect(page.locator("main")).to_contain_text("consent page")
    person.screenshot(f"apps-empty-{width}")

    workspace_name = f"{JOINED_EMOJI} {LONG_WORD[:60]}"
    create_workspace(person, workspace_name)
    tokens = connect_app(person, subject, HOSTILE_APP)
    connect_app(person, subject, "Plain Agent")
    page.get_by_role("link", name="Connected apps").click()

    rows = page.locator("tr[data-grant-id]")
    expect(rows).to_have_count(2)
    hostile = rows.filter(has_text=LONG_WORD)
    expect(hostile).to_contain_text(workspace_name)
    expect(hostile).to_contain_text("memory")
    expect(hostile).to_contain_text("no refresh yet")
    no_sideways_scroll(person)
    person.screenshot(f"apps-list-{width}")

    hostile.get_by_role("button", name="Disconnect").click()
    confirm = page.get_by_role("alertdialog")
    expect(confirm).to_contain_text("its tokens are refused")
    expect(confirm.get_by_role("button", name="Cancel")).to_be_focused()
    no_sideways_scroll(person)
    person.screenshot(f"apps-disconnect-confirmation-{width}")
    confirm.get_by_role("button", name="Disconnect").click()

    expect(rows).to_have_count(1)
    expect(rows).to_contain_text("Plain Agent")
    refreshed = httpx.post(
        f"{stack.endpoint}/v1/oauth/token",
        data={
            "grant_type": "refresh_token",
            "refresh_token": tokens["refresh_token"],
            "client_id": tokens["client_id"],
        },
    )
    assert refreshed.status_code == 400 and refreshed.json()["error"] == "invalid_grant"
    assert person.csp_violations() == []


# -- Trust policies -------------------------------------------------------------------------


def open_create_policy(person: Person) -> Any:
    person.page.get_by_role("button", name="Create trust policy").click()
    return person.dialog(re.compile("^Create a trust policy"))


@pytest.mark.parametrize("width", ["desktop", "phone"])
def test_trust_policies_are_created_with_a_live_preview_and_deleted_by_the_owner(
    people, stack: Stack, width: str
) -> None:
    person: Person = people(f"screens-trust-{width}", viewport=WIDTHS[width])
    person.sign_in(unique("owner"))
    page = person.page
    page.get_by_role("link", name="Trust policies").click()
    expect(page.get_by_role("heading", name="No workspace of yours")).to_be_visible()
    workspace_name = f"{PERSIAN} {LONG_WORD[:50]}"
    create_workspace(person, workspace_name)
    page.get_by_role("link", name="Trust policies").click()
    expect(page.get_by_role("heading", name="No trust policies yet")).to_be_visible()
    person.screenshot(f"trust-empty-{width}")

    dialog = open_create_policy(person)
    subject = dialog.get_by_label("Subject (sub)")
    subject.fill("*")
    expect(dialog.locator(".preview")).to_contain_text("would trust every workload of the issuer")
    person.screenshot(f"trust-create-star-refused-{width}")
    subject.fill("repo:acme/agents:*")
    expect(dialog.locator(".preview")).to_have_text(
        "Matches every subject that starts with repo:acme/agents:…, not repo:acme/other:…."
    )
    dialog.get_by_label("Try a subject").fill("repo:acme/other:ref:refs/heads/main")
    expect(dialog.locator(".verdict")).to_have_text("✗ This subject does not match.")
    dialog.get_by_label("Try a subject").fill("repo:acme/agents:ref:refs/heads/main")
    expect(dialog.locator(".verdict")).to_have_text("✓ This subject matches.")
    dialog.get_by_label("Name").fill(f"{JOINED_EMOJI} {LONG_WORD[:80]}")
    dialog.get_by_label("Issuer").fill(stack.info["idpEndpoint"])
    dialog.get_by_label("Audience (aud)").fill("memory-service")
    dialog.get_by_label("Other claims (optional)").fill("repository_owner=acme")
    dialog.get_by_label("Token lifetime in minutes (optional)").fill("30")
    no_sideways_scroll(person)
    person.screenshot(f"trust-create-preview-{width}")
    dialog.get_by_role("button", name="Create policy").click()

    rows = page.locator("tr[data-policy-id]")
    expect(rows).to_have_count(1)
    expect(rows).to_contain_text("repo:acme/agents:*")
    expect(rows).to_contain_text("repository_owner = acme")
    expect(rows).to_contain_text("30 min")
    workspace_id = page.get_by_label("Workspace", exact=True).input_value()
    listed = stack.call(
        "GET", f"/v1/workspaces/{workspace_id}/trust-policies", person.access_token()
    ).json()["trustPolicies"]
    assert [p["subject"] for p in listed] == ["repo:acme/agents:*"]
    assert listed[0]["claims"] == {"repository_owner": "acme"}
    assert listed[0]["maxLifetimeSeconds"] == 1800
    no_sideways_scroll(person)
    person.screenshot(f"trust-list-{width}")

    rows.get_by_role("button", name="Delete").click()
    confirm = page.get_by_role("alertdialog")
    expect(confirm).to_contain_text("refused from their next request")
    person.screenshot(f"trust-delete-confirmation-{width}")
    confirm.get_by_role("button", name="Delete policy").click()

    expect(page.get_by_role("heading", name="No trust policies yet")).to_be_visible()
    assert (
        stack.call(
            "GET", f"/v1/workspaces/{workspace_id}/trust-policies", person.access_token()
        ).json()["trustPolicies"]
        == []
    )
    assert person.csp_violations() == []


def test_a_member_sees_why_they_cannot_manage_trust_policies(people, stack: Stack) -> None:
    member, _ = a_member_of(people, "Shared with Grace", "screens-trust")
    page = member.page
    page.get_by_role("link", name="Trust policies").click()

    expect(
        page.get_by_role(
            "heading", name="Only the owner of Shared with Grace manages its trust policies"
        )
    ).to_be_visible()
    expect(page.get_by_role("button", name="Create trust policy")).to_have_count(0)
    member.screenshot("trust-member-not-owner")


# -- Usage and quota ------------------------------------------------------------------------


@pytest.mark.parametrize("width", ["desktop", "phone"])
def test_a_keys_usage_is_charted_and_its_quota_set_on_create_and_edit(
    people, stack: Stack, width: str
) -> None:
    person: Person = people(f"screens-usage-{width}", viewport=WIDTHS[width])
    person.sign_in(unique("counter"))
    page = person.page
    label = f"{JOINED_EMOJI} {LONG_WORD[:70]}"
    page.get_by_role("button", name="Create key").click()
    create = person.dialog("Create an API key")
    create.get_by_label("Label").fill(label)
    create.get_by_label("Admin key").check()
    create.get_by_label("Daily quota (optional)").fill("0")
    create.get_by_role("button", name="Create key").click()
    expect(create.get_by_role("alert")).to_contain_text("from 1 to 10,000,000")
    create.get_by_label("Daily quota (optional)").fill("1000")
    create.get_by_role("button", name="Create key").click()
    secret = person.dialog("Your new API key")
    key = secret.get_by_label("API key").input_value()
    secret.get_by_role("button", name="Done").click()
    page.get_by_role("alertdialog").get_by_role("button", name="Yes, close").click()
    row = key_row(person, label)
    expect(row).to_contain_text("quota 1,000 a day")

    # Five requests, then one a window later, which writes them (and itself; `flush_usage`).
    for _ in range(5):
        assert stack.call("GET", "/v1/auth/whoami", key).status_code == 200
    key_id = row.get_attribute("data-key-id")
    assert key_id is not None
    assert set(stack.flush_usage(key, key_id)) == {200}

    row.get_by_role("button", name="Edit").click()
    edit = person.dialog(re.compile("^Edit"))
    expect(edit.get_by_label("Daily quota (optional)")).to_have_value("1000")
    edit.get_by_label("Daily quota (optional)").fill("5")
    person.screenshot(f"usage-edit-quota-{width}")
    edit.get_by_role("button", name="Save").click()
    expect(row).to_contain_text("quota 5 a day")
    refused = stack.call("GET", "/v1/auth/whoami", key)
    assert refused.status_code == 429 and refused.json()["code"] == "quota_exceeded"

    row.get_by_role("button", name="Usage").click()
    usage = person.dialog(re.compile("^Usage of"))
    expect(usage.get_by_text("Quota: 5 requests a day.")).to_be_visible()
    expect(usage.locator('[data-quota="used-up"]')).to_contain_text("refused until midnight UTC")
    by_day = usage.get_by_role("table", name=re.compile("^Requests by day"))
    expect(by_day.locator("tbody tr")).to_have_count(7)
    expect(by_day.locator("caption")).to_contain_text(re.compile(r": [1-9]\d* in all"))
    by_hour = usage.get_by_role("table", name=re.compile("^Requests by hour"))
    expect(by_hour.locator("tbody tr")).not_to_have_count(0)
    no_sideways_scroll(person)
    person.screenshot(f"usage-dialog-{width}")
    usage.get_by_role("button", name="Close").click()
    expect(row.get_by_role("button", name="Usage")).to_be_focused()
    assert person.csp_violations() == []


# -- Accessibility --------------------------------------------------------------------------


@pytest.mark.parametrize("width", ["desktop", "phone"])
def test_no_accessibility_findings_on_the_new_screens_and_dialogs(
    people, stack: Stack, width: str
) -> None:
    subject = unique("axe-screens")
    person: Person = people(f"screens-axe-{width}", viewport=WIDTHS[width], bypass_csp=True)
    person.sign_in(subject, name="Ada Lovelace")
    page = person.page
    found: dict[str, list[dict[str, Any]]] = {}

    page.get_by_role("link", name="Connected apps").click()
    expect(page.get_by_role("heading", name="No connected apps")).to_be_visible()
    found["connected apps, empty"] = axe_violations(person)
    page.get_by_role("link", name="Trust policies").click()
    expect(page.get_by_role("heading", name="No workspace of yours")).to_be_visible()
    found["trust policies, no workspace"] = axe_violations(person)

    workspace_id = create_workspace(person, f"{JOINED_EMOJI} {LONG_WORD[:40]}")
    connect_app(person, subject, HOSTILE_APP)
    page.get_by_role("link", name="Connected apps").click()
    expect(page.locator("tr[data-grant-id]")).to_have_count(1)
    found["connected apps"] = axe_violations(person)
    person.screenshot(f"axe-{width}-connected-apps")
    page.locator("tr[data-grant-id]").get_by_role("button", name="Disconnect").click()
    found["disconnect confirmation"] = axe_violations(person)
    page.get_by_role("alertdialog").get_by_role("button", name="Cancel").click()

    page.get_by_role("link", name="Trust policies").click()
    expect(page.get_by_role("heading", name="No trust policies yet")).to_be_visible()
    found["trust policies, empty"] = axe_violations(person)
    dialog = open_create_policy(person)
    dialog.get_by_label("Subject (sub)").fill("*")
    found["create policy, * refused"] = axe_violations(person)
    dialog.get_by_label("Subject (sub)").fill("repo:acme/agents:*")
    dialog.get_by_label("Try a subject").fill("repo:acme/agents:ref:refs/heads/main")
    dialog.get_by_label("Name").fill(LONG_WORD)
    dialog.get_by_label("Issuer").fill(stack.info["idpEndpoint"])
    dialog.get_by_label("Audience (aud)").fill("memory-service")
    found["create policy, preview"] = axe_violations(person)
    person.screenshot(f"axe-{width}-create-policy")
    dialog.get_by_role("button", name="Create policy").click()
    expect(page.locator("tr[data-policy-id]")).to_have_count(1)
    found["trust policies"] = axe_violations(person)
    person.screenshot(f"axe-{width}-trust-policies")
    page.locator("tr[data-policy-id]").get_by_role("button", name="Delete").click()
    found["delete policy confirmation"] = axe_violations(person)
    page.get_by_role("alertdialog").get_by_role("button", name="Cancel").click()

    token = person.access_token()
    made = stack.call(
        "POST",
        "/v1/auth/api-keys",
        token,
        body={
            "label": LONG_WORD,
            "category": "workspace",
            "workspaceId": workspace_id,
            "requestsPerDay": 10,
        },
    )
    assert made.status_code == 201
    page.get_by_role("link", name="API keys").click()
    row = page.locator("tr[data-key-id]")
    expect(row).to_contain_text("quota 10 a day")
    row.get_by_role("button", name="Usage").click()
    expect(person.dialog(re.compile("^Usage of")).locator("table.usage")).to_have_count(2)
    found["usage dialog"] = axe_violations(person)
    person.screenshot(f"axe-{width}-usage")
    person.dialog(re.compile("^Usage of")).get_by_role("button", name="Close").click()
    row.get_by_role("button", name="Edit").click()
    found["edit dialog with quota"] = axe_violations(person)
    page.get_by_role("dialog").get_by_role("button", name="Cancel").click()
    page.get_by_role("button", name="Create key").click()
    found["create dialog with quota"] = axe_violations(person)
    print(f"axe-core, {width}: {len(found)} screens and dialogs, findings: {found}")

    assert {screen: v for screen, v in found.items() if v} == {}
