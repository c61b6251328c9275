"""Sign-in through the development provider's form, the session's storage, and sign-out."""

from __future__ import annotations

import re

from playwright.sync_api import expect

from tests.browser.conftest import Person, Stack


def test_sign_in_at_the_provider_then_out_forgets_everything(people, stack: Stack) -> None:
    alice: Person = people("browser-alice")

    user_id = alice.sign_in()

    page = alice.page
    # Back from the provider, the code and state have left the address bar and the history.
    assert page.url == alice.dashboard + "#keys" or page.url == alice.dashboard
    assert "code=" not in page.url and "state=" not in page.url
    expect(page.get_by_role("heading", name="API keys", level=1)).to_be_visible()
    expect(page.get_by_role("heading", name="No API keys yet")).to_be_visible()
    tokens = alice.storage("sessionStorage")
    assert set(tokens) == {"memory-dashboard.tokens"}
    assert alice.storage("localStorage") == {}
    assert page.evaluate("() => document.cookie") == ""
    # The stored access token is this user's, as the service sees it.
    access = re.search(r'"accessToken":"([^"]+)"', tokens["memory-dashboard.tokens"])
    assert access is not None
    whoami = stack.call("GET", "/v1/auth/whoami", access.group(1))
    assert (whoami.status_code, whoami.json()["userId"]) == (200, user_id)
    alice.screenshot("sign-in-keys-empty")

    page.get_by_role("button", name="Sign out").click()

    expect(page.get_by_role("button", name="Sign in")).to_be_visible()
    expect(page.get_by_text("You are signed out.")).to_be_visible()
    assert alice.storage("sessionStorage") == {}
    assert alice.storage("localStorage") == {}
    page.reload()
    expect(page.get_by_role("button", name="Sign in")).to_be_visible()
    assert alice.csp_violations() == []
    alice.screenshot("signed-out")
