"""Sessions in a real browser at 1280 and 390 px: the person's sign-ins listed with this device
marked, one signed out from another tab, every one signed out after a confirmation, the empty,
error, outage and answer-budget states, the keyboard, axe-core with zero findings; and the
issue's must-show: once the dashboard signs out, the access token the tab held is refused on
its very next request (401 `revoked_credentials` at the routes, 401 at the data-plane
authorizer)."""

from __future__ import annotations

import json
import re
from typing import Any

import httpx
import pytest
from playwright.sync_api import Locator, Route, expect

from tests.browser.conftest import Person, Stack
from tests.browser.test_page import axe_violations
from tests.browser.test_people import WIDTHS, no_sideways_scroll, unique

SESSIONS = re.compile(r".*/v1/auth/sessions$")
OUTAGE = {"code": "dependency_unavailable", "status": 503,
          "detail": "A dependency is unavailable; retry later."}


def open_sessions(person: Person) -> Locator:
    """Shows the Sessions section; answers its rows once they are listed."""
    page = person.page
    page.get_by_role("link", name="Sessions").click()
    expect(page.get_by_role("heading", name="Sessions", level=1)).to_be_visible()
    expect(page.locator("main [aria-busy='true']")).to_have_count(0)
    return page.locator("tr[data-session-id]")


def refresh_token(person: Person) -> str:
    stored = json.loads(person.storage("sessionStorage")["memory-dashboard.tokens"])
    return str(stored["refreshToken"])


def refused_as_revoked(stack: Stack, token: str) -> None:
    """The token is refused at whoami and at admin-key creation with 401 revoked_credentials."""
    whoami = stack.call("GET", "/v1/auth/whoami", token)
    assert (whoami.status_code, whoami.json()["code"]) == (401, "revoked_credentials"), whoami.text
    created = stack.call("POST", "/v1/auth/api-keys", token, body={"category": "admin"})
    assert (created.status_code, created.json()["code"]) == (401, "revoked_credentials"), (
        created.text
    )


def gate(stack: Stack, token: str, workspace: str) -> httpx.Response:
    """The data plane behind the authorizer (the local MCP server's `/v1/...` stand-in)."""
    base = stack.info["mcpResource"].removesuffix("/mcp")
    headers = {"Authorization": f"Bearer {token}", "X-Workspace-Id": workspace}
    return httpx.get(f"{base}/v1/memory/items", headers=headers, timeout=10)


def answer(status: int, body: dict[str, Any]) -> Any:
    def fulfill(route: Route) -> None:
        route.fulfill(status=status, json=body, headers={"Content-Type": "application/json"})

    return fulfill


def held_in(held: list[Route]) -> Any:
    """A route handler that never answers: it keeps each request in `held`."""

    def hold(route: Route) -> None:
        held.append(route)

    return hold


@pytest.mark.parametrize("width", ["desktop", "phone"])
def test_sessions_lists_each_sign_in_with_this_device_marked(
    people, stack: Stack, width: str
) -> None:
    subject = unique("traveller")
    laptop: Person = people(f"sessions-list-laptop-{width}")
    laptop.sign_in(subject)
    person: Person = people(f"sessions-list-{width}", viewport=WIDTHS[width])
    person.sign_in(subject, name="Ada Lovelace")

    rows = open_sessions(person)

    expect(rows).to_have_count(2)
    this = person.page.locator("tr[data-current]")
    expect(this).to_have_count(1)
    expect(this).to_contain_text("This device")
    expect(this).to_contain_text("Chrome (headless) on Linux")
    expect(this.locator('td[data-label="IP address"]')).to_have_text("127.0.0.1")
    expect(this.locator('td[data-label="Last refreshed"]')).to_have_text("not yet")
    expect(rows.first).to_have_attribute("data-current", "true")  # newest first: this one
    other = rows.filter(has_not=person.page.locator(".badge"))
    expect(other).to_have_count(1)
    expect(other.get_by_role("button", name=re.compile("^Sign out Chrome"))).to_be_visible()
    expect(this.get_by_role("button", name="Sign out this device")).to_be_visible()
    listed = stack.call("GET", "/v1/auth/sessions", person.access_token()).json()["sessions"]
    assert [row.get_attribute("data-session-id") for row in rows.all()] == [
        s["id"] for s in listed
    ]
    no_sideways_scroll(person)
    person.screenshot(f"sessions-list-{width}")
    assert person.csp_violations() == []


def test_signing_out_another_session_by_keyboard_removes_its_row_and_ends_it(
    people, stack: Stack
) -> None:
    subject = unique("two-tabs")
    elsewhere: Person = people("sessions-other-elsewhere")
    elsewhere.sign_in(subject)
    elsewhere_token = elsewhere.access_token()
    person: Person = people("sessions-other")
    person.sign_in(subject)
    rows = open_sessions(person)
    expect(rows).to_have_count(2)
    other = person.page.locator("tr[data-session-id]:not([data-current])")
    button = other.get_by_role("button", name=re.compile("^Sign out Chrome"))

    button.focus()
    person.page.keyboard.press("Enter")

    expect(rows).to_have_count(1)
    expect(rows).to_have_attribute("data-current", "true")
    expect(rows.get_by_role("button", name="Sign out this device")).to_be_focused()
    expect(person.page.get_by_text("Only this device is signed in.")).to_be_visible()
    refused_as_revoked(stack, elsewhere_token)
    refreshed = stack.call(
        "POST", "/v1/auth/refresh", body={"refresh_token": refresh_token(elsewhere)}
    )
    assert (refreshed.status_code, refreshed.json()["error"]) == (400, "invalid_grant")
    assert stack.call("GET", "/v1/auth/whoami", person.access_token()).status_code == 200
    # The other tab finds out on its next request, and signs out saying why.
    elsewhere.page.get_by_role("link", name="Workspaces").click()
    expect(elsewhere.page.get_by_text(re.compile("Sign in again"))).to_be_visible()
    person.screenshot("sessions-other-signed-out")
    person.page.get_by_role("link", name="Activity").click()
    person.page.get_by_label("Event").select_option("session.revoked")
    ended = person.page.locator('tr[data-event-type="session.revoked"]')
    expect(ended).to_have_count(1)
    expect(ended).to_contain_text("Sign-in ended")
    expect(ended).to_contain_text("from the Sessions list")
    expect(ended).to_contain_text("you")


@pytest.mark.parametrize("width", ["desktop", "phone"])
def test_sign_out_everywhere_asks_first_then_ends_this_tab_and_every_other(
    people, stack: Stack, width: str
) -> None:
    subject = unique("everywhere")
    elsewhere: Person = people(f"sessions-everywhere-elsewhere-{width}")
    elsewhere.sign_in(subject)
    person: Person = people(f"sessions-everywhere-{width}", viewport=WIDTHS[width])
    person.sign_in(subject)
    tokens = [person.access_token(), elsewhere.access_token()]
    refresh_tokens = [refresh_token(person), refresh_token(elsewhere)]
    page = person.page
    expect(open_sessions(person)).to_have_count(2)

    page.get_by_role("button", name="Sign out everywhere").click()
    confirm = page.get_by_role("alertdialog", name="Sign out everywhere?")
    expect(confirm).to_contain_text("every sign-in of yours: this one and 1 other.")
    expect(confirm.get_by_role("button", name="Cancel")).to_be_focused()
    no_sideways_scroll(person)
    person.screenshot(f"sessions-everywhere-confirmation-{width}")
    confirm.get_by_role("button", name="Cancel").click()
    assert stack.call("GET", "/v1/auth/whoami", tokens[0]).status_code == 200
    page.get_by_role("button", name="Sign out everywhere").click()
    page.get_by_role("alertdialog").get_by_role("button", name="Sign out everywhere").click()

    expect(page.get_by_text("You are signed out everywhere.")).to_be_visible()
    expect(page.get_by_role("button", name="Sign in")).to_be_visible()
    assert person.storage("sessionStorage") == {}
    for token in tokens:
        refused_as_revoked(stack, token)
    for token in refresh_tokens:
        refreshed = stack.call("POST", "/v1/auth/refresh", body={"refresh_token": token})
        assert (refreshed.status_code, refreshed.json()["error"]) == (400, "invalid_grant")
    assert person.csp_violations() == []


@pytest.mark.parametrize("how", ["header", "sessions"])
def test_after_the_dashboard_signs_out_its_old_access_token_is_refused_401_revoked(
    people, stack: Stack, how: str
) -> None:
    person: Person = people(f"sessions-must-show-{how}")
    person.sign_in(unique("leaver"))
    token = person.access_token()
    made = stack.call("POST", "/v1/workspaces", token, body={"name": "Before sign-out"})
    assert made.status_code == 201, made.text
    workspace = made.json()["id"]
    assert stack.call("GET", "/v1/auth/whoami", token).status_code == 200
    assert gate(stack, token, workspace).status_code == 200
    page = person.page

    if how == "header":
        page.locator("header").get_by_role("button", name="Sign out").click()
        expect(page.get_by_text("You are signed out.")).to_be_visible()
    else:
        open_sessions(person)
        page.get_by_role("button", name="Sign out this device").click()
        expect(page.get_by_text("You are signed out.")).to_be_visible()

    assert person.storage("sessionStorage") == {}
    refused_as_revoked(stack, token)
    at_the_gate = gate(stack, token, workspace)
    assert at_the_gate.status_code == 401, at_the_gate.text
    person.screenshot(f"sessions-must-show-{how}")


@pytest.mark.parametrize("width", ["desktop", "phone"])
def test_the_empty_error_outage_and_budget_states_say_what_happened_and_offer_a_retry(
    people, stack: Stack, width: str
) -> None:
    person: Person = people(f"sessions-states-{width}", viewport=WIDTHS[width])
    page = person.page
    page.clock.install()
    person.sign_in(unique("states"))

    page.route(SESSIONS, answer(200, {"sessions": []}))
    open_sessions(person)
    expect(page.get_by_role("heading", name="No sign-ins")).to_be_visible()
    expect(page.get_by_role("button", name="Sign out everywhere")).to_be_hidden()
    person.screenshot(f"sessions-empty-{width}")
    page.unroute(SESSIONS)

    # A problem answer, in words, with Try again; nothing of a list drawn before it.
    page.route(SESSIONS, answer(500, {"code": "internal_error", "status": 500}))
    page.get_by_role("link", name="API keys").click()
    page.get_by_role("link", name="Sessions").click()
    alert = page.locator("main").get_by_role("alert")
    expect(alert).to_contain_text("Something went wrong on our side.")
    expect(page.locator("tr[data-session-id]")).to_have_count(0)
    person.screenshot(f"sessions-error-{width}")
    page.unroute(SESSIONS)
    alert.get_by_role("button", name="Try again").click()
    rows = page.locator("tr[data-session-id]")
    expect(rows).to_have_count(1)

    page.route(SESSIONS, answer(503, OUTAGE))
    page.get_by_role("link", name="API keys").click()
    page.get_by_role("link", name="Sessions").click()
    expect(alert).to_contain_text("The service is having trouble right now.")
    person.screenshot(f"sessions-outage-{width}")
    page.unroute(SESSIONS)

    # No answer: given up after the answer budget (10 s on the page's clock), with Try again.
    held: list[Route] = []
    page.route(SESSIONS, held_in(held))
    alert.get_by_role("button", name="Try again").click()
    expect(page.locator("#progress")).to_be_visible()
    page.clock.run_for(10_000)
    expect(alert).to_contain_text("did not answer in time")
    assert held
    person.screenshot(f"sessions-budget-{width}")
    page.unroute(SESSIONS)
    alert.get_by_role("button", name="Try again").click()
    expect(rows).to_have_count(1)

    # A sign-out the service cannot do now leaves the row, and says so.
    page.route(re.compile(r".*/v1/auth/sessions/[^/]+$"), answer(503, OUTAGE))
    rows.get_by_role("button", name="Sign out this device").click()
    expect(alert).to_contain_text("Nothing was changed")
    expect(rows).to_have_count(1)
    assert stack.call("GET", "/v1/auth/whoami", person.access_token()).status_code == 200
    no_sideways_scroll(person)
    person.screenshot(f"sessions-sign-out-refused-{width}")
    assert person.csp_violations() == []


@pytest.mark.parametrize("width", ["desktop", "phone"])
def test_no_accessibility_findings_on_the_sessions_section(
    people, stack: Stack, width: str
) -> None:
    subject = unique("axe-sessions")
    elsewhere: Person = people(f"sessions-axe-elsewhere-{width}")
    elsewhere.sign_in(subject)
    person: Person = people(f"sessions-axe-{width}", viewport=WIDTHS[width], bypass_csp=True)
    person.sign_in(subject, name="Ada Lovelace")
    page = person.page
    found: dict[str, list[dict[str, Any]]] = {}

    expect(open_sessions(person)).to_have_count(2)
    found["sessions"] = axe_violations(person)
    page.get_by_role("button", name="Sign out everywhere").click()
    found["sign out everywhere confirmation"] = axe_violations(person)
    page.get_by_role("alertdialog").get_by_role("button", name="Cancel").click()
    page.route(SESSIONS, answer(200, {"sessions": []}))
    page.get_by_role("link", name="API keys").click()
    open_sessions(person)
    expect(page.get_by_role("heading", name="No sign-ins")).to_be_visible()
    found["sessions, empty"] = axe_violations(person)
    page.unroute(SESSIONS)
    page.route(SESSIONS, answer(500, {"code": "internal_error", "status": 500}))
    page.get_by_role("link", name="API keys").click()
    page.get_by_role("link", name="Sessions").click()
    expect(page.locator("main").get_by_role("button", name="Try again")).to_be_visible()
    found["sessions, error"] = axe_violations(person)
    page.unroute(SESSIONS)
    page.route(SESSIONS, answer(503, OUTAGE))
    page.get_by_role("link", name="API keys").click()
    page.get_by_role("link", name="Sessions").click()
    expect(page.locator("main").get_by_role("button", name="Try again")).to_be_visible()
    found["sessions, outage"] = axe_violations(person)
    print(f"axe-core, {width}: {len(found)} screens, findings: {found}")

    assert {screen: v for screen, v in found.items() if v} == {}
