"""Connected apps lists a consent remembered on the consent page before the app redeemed any
code (no token yet: "No token in force"), and disconnecting it forgets the consent, so the
next authorization asks again; at both widths, with axe-core's zero findings."""

from __future__ import annotations

import re
import secrets
from typing import Any

import httpx
import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import DESKTOP, PHONE, Person, Stack
from tests.browser.test_keys import create_workspace
from tests.browser.test_oauth_pages import authorize_url
from tests.browser.test_page import axe_violations

WIDTHS = {"desktop": DESKTOP, "phone": PHONE}
# An https client (only an https redirect is let through on a remembered consent): nothing
# listens there, the tab's requests to it are answered by the test.
APP_CALLBACK = "https://remembering-agent.example.test/callback"


def register_app(stack: Stack) -> str:
    registered = httpx.post(
        f"{stack.endpoint}/v1/oauth/register",
        json={"redirect_uris": [APP_CALLBACK], "client_name": "Remembering Agent"},
    )
    assert registered.status_code == 201, registered.text
    return str(registered.json()["client_id"])


def authorization_tab(person: Person, client_id: str, subject: str) -> Page:
    """A tab of the person's browser where the app asks for access and they sign in."""
    tab = person.context.new_page()
    tab.route(
        re.compile(r"^https://remembering-agent\.example\.test/"),
        lambda route: route.fulfill(status=200, content_type="text/html", body="Back."),
    )
    tab.goto(authorize_url(person.stack, client_id, APP_CALLBACK))
    tab.get_by_label("Subject (user name)").fill(subject)
    tab.get_by_label("Email").fill(f"{subject}@example.test")
    tab.get_by_role("button", name="Sign in").click()
    return tab


@pytest.mark.parametrize("width", ["desktop", "phone"])
def test_a_remembered_consent_is_listed_before_any_token_and_disconnecting_forgets_it(
    people, stack: Stack, width: str
) -> None:
    subject = f"rememberer-{secrets.token_hex(3)}"
    person: Person = people(f"consent-listed-{width}", viewport=WIDTHS[width], bypass_csp=True)
    person.sign_in(subject)
    create_workspace(person, "Remembered")
    client_id = register_app(stack)
    tab = authorization_tab(person, client_id, subject)
    tab.wait_for_url(re.compile(r"/v1/oauth/consent\?"))
    tab.get_by_role("button", name="Allow").click()
    expect(tab).to_have_url(re.compile(r"^https://remembering-agent\.example\.test/callback\?code="))
    tab.close()  # the app never redeems its code: no token is issued

    page = person.page
    page.get_by_role("link", name="Connected apps").click()
    rows = page.locator("tr[data-grant-id]")
    expect(rows).to_have_count(1)
    row: Any = rows.first
    expect(row).to_have_attribute("data-kind", "consent")
    expect(row).to_contain_text("Remembering Agent")
    expect(row).to_contain_text("No token in force")
    assert axe_violations(person) == []
    person.screenshot(f"consent-listed-{width}")

    row.get_by_role("button", name="Disconnect").click()
    confirm = page.get_by_role("alertdialog")
    expect(confirm).to_contain_text("the app must ask you again")
    assert axe_violations(person) == []
    confirm.get_by_role("button", name="Disconnect").click()
    expect(page.get_by_role("heading", name="No connected apps")).to_be_visible()

    again = authorization_tab(person, client_id, subject)
    again.wait_for_url(re.compile(r"/v1/oauth/consent\?"))  # asked again, not sent back
    expect(again.get_by_role("button", name="Allow")).to_be_visible()
    again.close()
