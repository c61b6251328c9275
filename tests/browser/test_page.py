"""The page itself: its headers as served by the local stack, its markup, the session's
refresh, the activity list, the keyboard, a phone's width, and an axe-core scan."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from typing import Any

import httpx
import pytest
from playwright.sync_api import expect

from chalicelib.dashboard import assets
from tests.browser.conftest import AXE, PHONE, Person, Stack
from tests.browser.test_keys import copy_secret, create_workspace


class Scripts(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.scripts: list[dict[str, str | None]] = []
        self.inline_handlers: list[str] = []
        self.text_in_script = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "script":
            self.scripts.append(dict(attrs))
        self.inline_handlers += [name for name, _ in attrs if name.startswith("on")]
        self.text_in_script = tag == "script"

    def handle_data(self, data: str) -> None:
        if self.text_in_script and data.strip():
            self.inline_handlers.append("inline script")

    def handle_endtag(self, tag: str) -> None:
        self.text_in_script = False


def test_every_built_file_is_served_with_the_page_headers(people, stack: Stack) -> None:
    idp = stack.info["idpEndpoint"]
    page = httpx.get(f"{stack.endpoint}/dashboard/")
    parser = Scripts()
    parser.feed(page.text)
    names = [str(s["src"]) for s in parser.scripts] + re.findall(r'href="([^"#]+)"', page.text)

    assert parser.inline_handlers == []
    assert [s.get("type") for s in parser.scripts] == ["module"]
    assert not any(name.startswith(("http:", "https:", "//")) for name in names), "no CDN"
    for name in ["", *names]:
        answer = httpx.get(f"{stack.endpoint}/dashboard/{name}")
        assert answer.status_code == 200, name
        policy = answer.headers["content-security-policy"]
        assert "default-src 'self'" in policy
        assert "script-src 'self';" in policy
        assert f"connect-src 'self' {idp};" in policy
        assert "frame-ancestors 'none'" in policy
        assert "unsafe" not in policy
        assert answer.headers["x-content-type-options"] == "nosniff"
        assert answer.headers["referrer-policy"] == "no-referrer"
    config = httpx.get(f"{stack.endpoint}/dashboard/config.json").json()
    assert config == {"login": {"issuer": idp, "clientId": "memory-auth-local"}}
    assert httpx.get(f"{stack.endpoint}/dashboard").headers["location"] == "dashboard/"
    assert sorted(p.name for p in assets.STATIC_DIR.iterdir()) == sorted(
        ["index.html", "favicon.svg", *[n for n in names if n != "favicon.svg"]]
    )
    # And in a browser, under that policy, the page runs without a single refusal.
    visitor: Person = people("browser-visitor")
    visitor.page.goto(visitor.dashboard)
    expect(visitor.page.get_by_role("button", name="Sign in")).to_be_visible()
    host = httpx.URL(idp).netloc.decode()
    expect(visitor.page.get_by_text(f"You sign in at {host}.")).to_be_visible()
    assert visitor.csp_violations() == []
    # Trusted types are enforced: a string never becomes markup, even if some code tried.
    sink = (
        "() => { try { document.body.innerHTML = '<b>x</b>'; return 'parsed'; }"
        " catch (error) { return error.name; } }"
    )
    assert visitor.page.evaluate(sink) == "TypeError"


def test_the_session_refreshes_before_its_access_token_expires(people, stack: Stack) -> None:
    person: Person = people("browser-refresh")
    person.sign_in()
    stored = json.loads(person.storage("sessionStorage")["memory-dashboard.tokens"])
    # As if the hour had nearly passed: inside the SDK Session's one-minute margin.
    nearly = {**stored, "expiresAt": int(person.page.evaluate("() => Date.now()")) + 30_000}
    person.page.evaluate(
        "tokens => sessionStorage.setItem('memory-dashboard.tokens', tokens)", json.dumps(nearly)
    )

    person.page.reload()

    expect(person.page.locator("#user-id")).to_have_attribute("data-user-id", re.compile("^usr_"))
    fresh = json.loads(person.storage("sessionStorage")["memory-dashboard.tokens"])
    assert fresh["refreshToken"] != stored["refreshToken"]
    assert fresh["accessToken"] != stored["accessToken"]
    assert fresh["expiresAt"] > nearly["expiresAt"] + 3_000_000
    # A refresh token is single use: once its successor has been used (here by a copy of
    # the session elsewhere), presenting the spent one again ends the whole login (reuse
    # detection), and the dashboard notices at its next refresh and signs out.
    copied = stack.call("POST", "/v1/auth/refresh", body={"refresh_token": fresh["refreshToken"]})
    assert copied.status_code == 200
    reused = stack.call("POST", "/v1/auth/refresh", body={"refresh_token": stored["refreshToken"]})
    assert reused.status_code == 400
    nearly = {**fresh, "expiresAt": int(person.page.evaluate("() => Date.now()")) + 30_000}
    person.page.evaluate(
        "tokens => sessionStorage.setItem('memory-dashboard.tokens', tokens)", json.dumps(nearly)
    )
    person.page.reload()
    expect(person.page.get_by_text("Your session has ended")).to_be_visible()
    expect(person.page.get_by_role("button", name="Sign in")).to_be_visible()
    assert person.storage("sessionStorage") == {}


def test_activity_lists_what_the_service_records(people, stack: Stack) -> None:
    person: Person = people("browser-activity")
    person.sign_in()
    create_workspace(person, "Audited")
    person.page.get_by_role("link", name="Activity").click()
    expect(person.page.get_by_role("heading", name="Activity", level=1)).to_be_visible()
    recorded = stack.call("GET", "/v1/auth/events", person.access_token())
    if recorded.status_code == 200:
        expect(person.page.locator("tr[data-event-type='workspace.created']")).to_have_count(1)
    else:
        # A service without audit events answers 404: the page says so instead of failing.
        assert recorded.status_code == 404
        expect(person.page.get_by_text("does not record activity yet")).to_be_visible()
    person.screenshot("activity")


def test_create_a_key_with_the_keyboard_alone(people, stack: Stack) -> None:
    person: Person = people("browser-keyboard")
    person.sign_in()
    page = person.page
    page.get_by_role("button", name="Create an admin key").focus()
    page.keyboard.press("Enter")
    dialog = person.dialog("Create an API key")
    expect(dialog.get_by_label("Label")).to_be_focused()
    page.keyboard.type("typed key")
    page.keyboard.press("Enter")  # submits the form
    secret = person.dialog("Your new API key")
    expect(secret.get_by_label("API key")).to_be_focused()
    # Escape does not drop the key: it asks first, with the safe answer focused.
    page.keyboard.press("Escape")
    confirm = page.get_by_role("alertdialog", name="Close without the key?")
    expect(confirm.get_by_role("button", name="Back to the key")).to_be_focused()
    page.keyboard.press("Enter")
    expect(confirm).to_have_count(0)
    expect(secret).to_be_visible()
    page.keyboard.press("Escape")
    # The question opens after the key press is handled: Tab only once it holds the focus.
    expect(confirm.get_by_role("button", name="Back to the key")).to_be_focused()
    page.keyboard.press("Tab")
    expect(page.get_by_role("button", name="Yes, close")).to_be_focused()
    page.keyboard.press("Enter")
    expect(secret).to_have_count(0)
    expect(person.page.locator("tr[data-key-id]").filter(has_text="typed key")).to_have_count(1)


def test_readable_on_a_phone(people, stack: Stack) -> None:
    person: Person = people("browser-phone", viewport=PHONE)
    person.sign_in()
    page = person.page
    create_workspace(person, "Pocket")
    page.get_by_role("link", name="API keys").click()
    page.get_by_role("button", name="Create key", exact=True).click()
    dialog = person.dialog("Create an API key")
    dialog.get_by_label("Label").fill("phone app")
    person.screenshot("phone-create-dialog")
    dialog.get_by_role("button", name="Create key").click()
    copy_secret(person, "Your new API key", "phone-key-once")
    expect(page.locator("tr[data-key-id]")).to_have_count(1)

    for section in ("API keys", "Workspaces", "Activity"):
        page.get_by_role("link", name=section, exact=True).click()
        expect(page.get_by_role("heading", name=section, level=1)).to_be_visible()
        # Nothing wider than the screen: no sideways scrolling.
        width = page.evaluate("() => document.documentElement.scrollWidth")
        assert width <= PHONE["width"], section
        person.screenshot(f"phone-{section.lower().replace(' ', '-')}")


# Every finding of any impact, for the summary printed at the end of the scan.
AXE_SEEN: list[tuple[str, str]] = []


def axe_violations(person: Person) -> list[dict[str, Any]]:
    """axe-core's findings of any impact on the page as it is now."""
    person.page.add_script_tag(path=str(AXE))
    results = person.page.evaluate(
        "async () => { const r = await axe.run(document); "
        "return {passes: r.passes.length, violations: r.violations}; }"
    )
    assert results["passes"] > 0, "axe-core ran no rule"
    AXE_SEEN.extend((v["id"], v["impact"]) for v in results["violations"])
    return [
        {"id": v["id"], "impact": v["impact"], "nodes": [n["target"] for n in v["nodes"]]}
        for v in results["violations"]
    ]


@pytest.mark.parametrize("viewport", ["desktop", "phone"])
def test_no_accessibility_violations_on_any_screen(
    people, stack: Stack, viewport: str
) -> None:
    # axe-core is injected as a script, which the page's CSP forbids, so the scan runs in a
    # context of its own that bypasses CSP; the other tests run under the real policy.
    size = PHONE if viewport == "phone" else {"width": 1280, "height": 900}
    person: Person = people(f"browser-axe-{viewport}", viewport=size, bypass_csp=True)
    page = person.page
    found: dict[str, list[dict[str, Any]]] = {}

    page.goto(person.dashboard)
    expect(page.get_by_role("button", name="Sign in")).to_be_visible()
    found["sign-in"] = axe_violations(person)
    person.sign_in()
    found["keys, empty"] = axe_violations(person)
    create_workspace(person, "Accessible")
    found["workspaces"] = axe_violations(person)
    page.get_by_role("link", name="API keys").click()
    page.get_by_role("button", name="Create key", exact=True).click()
    person.dialog("Create an API key").get_by_label("Label").fill("scanned")
    found["create dialog"] = axe_violations(person)
    person.dialog("Create an API key").get_by_role("button", name="Create key").click()
    expect(person.dialog("Your new API key")).to_be_visible()
    found["new key dialog"] = axe_violations(person)
    copy_secret(person, "Your new API key", f"axe-{viewport}-key-once")
    expect(page.locator("tr[data-key-id]")).to_have_count(1)
    found["keys table"] = axe_violations(person)
    page.locator("tr[data-key-id]").get_by_role("button", name="Revoke").click()
    found["revoke confirmation"] = axe_violations(person)
    page.get_by_role("alertdialog").get_by_role("button", name="Cancel").click()
    page.get_by_role("link", name="Activity").click()
    expect(page.get_by_role("heading", name="Activity", level=1)).to_be_visible()
    found["activity"] = axe_violations(person)
    person.screenshot(f"axe-{viewport}-activity")
    seen = sorted(set(AXE_SEEN))
    print(f"axe-core, {viewport}: {len(found)} screens, findings of any impact: {seen}")

    assert {screen: v for screen, v in found.items() if v} == {}
