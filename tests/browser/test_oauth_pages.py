"""The pages an MCP user sees at this service, in a real browser: the consent page and an
error page, at 1280 and 390 px, under their real Content-Security-Policy (the stylesheet
loads, nothing is refused), scanned by axe-core (no violation of any impact), and saved
under build/screenshots/. (The sign-in itself is the login provider's page, not ours.)"""

from __future__ import annotations

import base64
import hashlib
import re
import secrets
from typing import Any
from urllib.parse import urlencode

import httpx
import pytest
from playwright.sync_api import expect

from tests.browser.conftest import AXE, DESKTOP, PHONE, Person, Stack

VIEWPORTS = {"desktop": DESKTOP, "phone": PHONE}
# Nothing listens there: the tests stop at our pages, before the way back.
REDIRECT_URI = "http://127.0.0.1:9/callback"
# The pages and their stylesheet, together: a person on a slow phone connection waits for them.
BUDGET_BYTES = 16 * 1024


@pytest.fixture(scope="module")
def client_id(stack: Stack) -> str:
    answer = httpx.post(
        f"{stack.endpoint}/v1/oauth/register",
        json={"redirect_uris": [REDIRECT_URI], "client_name": "Browser Test Agent"},
    )
    assert answer.status_code == 201, answer.text
    return str(answer.json()["client_id"])


def authorize_url(stack: Stack, client_id: str, redirect_uri: str = REDIRECT_URI) -> str:
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest())
    parameters = {
        "response_type": "code",
        "client_id": client_id,
        "redirect_uri": redirect_uri,
        "code_challenge": challenge.rstrip(b"=").decode(),
        "code_challenge_method": "S256",
        "state": "browser-test",
        "resource": stack.info["mcpResource"],
    }
    return f"{stack.endpoint}/v1/oauth/authorize?{urlencode(parameters)}"


def to_consent_page(person: Person, client_id: str) -> None:
    """Authorize, sign in at the development provider as its workspace owner: the consent."""
    page = person.page
    page.goto(authorize_url(person.stack, client_id))
    page.get_by_label("Subject (user name)").fill("developer")
    page.get_by_label("Email").fill("developer@example.test")
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(re.compile(r"/v1/oauth/consent\?"))


def to_error_page(person: Person) -> None:
    person.page.goto(authorize_url(person.stack, "cli_01NOSUCHCLIENT0000000000000"))


def all_axe_violations(person: Person) -> list[dict[str, Any]]:
    person.page.add_script_tag(path=str(AXE))
    results = person.page.evaluate(
        "async () => { const r = await axe.run(document); "
        "return {passes: r.passes.length, violations: r.violations}; }"
    )
    assert results["passes"] > 0, "axe-core ran no rule"
    return [
        {"id": v["id"], "impact": v["impact"], "nodes": [n["target"] for n in v["nodes"]]}
        for v in results["violations"]
    ]


def styled(person: Person) -> dict[str, str]:
    """What the stylesheet decides, as computed: proof that it loaded under the policy."""
    return dict(
        person.page.evaluate(
            "() => ({font: getComputedStyle(document.body).fontFamily,"
            " background: getComputedStyle(document.documentElement).backgroundColor})"
        )
    )


@pytest.mark.parametrize("viewport", VIEWPORTS)
def test_the_consent_page_leads_with_the_decision_styled_under_its_policy(
    people, client_id: str, viewport: str
) -> None:
    person: Person = people(f"oauth-consent-{viewport}", viewport=VIEWPORTS[viewport])
    to_consent_page(person, client_id)
    page = person.page

    expect(page.get_by_role("heading", level=1)).to_have_text(
        "Allow Browser Test Agent to use your memories?"
    )
    expect(page.get_by_text("the name the application gives itself")).to_be_visible()
    expect(page.locator(".host")).to_have_text("127.0.0.1")
    expect(page.get_by_text("This goes to a program on this computer")).to_be_visible()
    expect(page.get_by_label("In the workspace")).to_be_visible()
    expect(page.get_by_text("Read and write your memories")).to_be_visible()
    allow = page.get_by_role("button", name="Allow")
    deny = page.get_by_role("button", name="Deny")
    expect(allow).to_be_visible()
    expect(deny).to_be_visible()
    assert person.csp_violations() == []
    assert "serif" not in styled(person)["font"].split(",")[0]
    assert styled(person)["background"] == "rgb(243, 244, 246)"  # the dashboard's wash
    # Readable at 390 px: nothing wider than the screen.
    assert page.evaluate("() => document.documentElement.scrollWidth") <= VIEWPORTS[viewport][
        "width"
    ]
    allow_box, deny_box = allow.bounding_box(), deny.bounding_box()
    assert allow_box is not None and deny_box is not None
    assert allow_box["height"] >= 40  # a finger's target, not the browser's default button
    person.screenshot(f"oauth-consent-{viewport}")


@pytest.mark.parametrize("viewport", VIEWPORTS)
def test_an_error_page_says_what_to_do_styled_under_its_policy(people, viewport: str) -> None:
    person: Person = people(f"oauth-error-{viewport}", viewport=VIEWPORTS[viewport])
    to_error_page(person)
    page = person.page

    expect(page.get_by_role("heading", level=1)).to_be_visible()
    expect(page.get_by_role("heading", name="What you can do")).to_be_visible()
    expect(page.locator(".fineprint")).to_have_text("Error code: invalid_request")
    assert person.csp_violations() == []
    assert styled(person)["background"] == "rgb(243, 244, 246)"
    assert page.evaluate("() => document.documentElement.scrollWidth") <= VIEWPORTS[viewport][
        "width"
    ]
    person.screenshot(f"oauth-error-{viewport}")


@pytest.mark.parametrize("viewport", VIEWPORTS)
def test_the_consent_and_error_pages_have_no_accessibility_violations(
    people, client_id: str, viewport: str
) -> None:
    # axe-core is injected as a script, which the pages' CSP forbids: this context bypasses
    # the policy; the tests above run under it.
    person: Person = people(
        f"oauth-axe-{viewport}", viewport=VIEWPORTS[viewport], bypass_csp=True
    )
    found: dict[str, list[dict[str, Any]]] = {}

    to_consent_page(person, client_id)
    found["consent"] = all_axe_violations(person)
    to_error_page(person)
    found["error"] = all_axe_violations(person)

    assert found == {"consent": [], "error": []}


def test_the_pages_weigh_little(stack: Stack, client_id: str) -> None:
    error = httpx.get(authorize_url(stack, "cli_01NOSUCHCLIENT0000000000000"))
    stylesheet = httpx.get(f"{stack.endpoint}/v1/oauth/pages.css")

    weight = len(error.content) + len(stylesheet.content)
    print(f"error page {len(error.content)} B, stylesheet {len(stylesheet.content)} B")

    assert stylesheet.headers["content-type"] == "text/css; charset=utf-8"
    assert weight <= BUDGET_BYTES


# An https client: nothing listens at this host; the browser's requests to it are answered
# by the test (Playwright's routing), so the code can be seen arriving.
HTTPS_REDIRECT = "https://agent.example.test/callback"


def sign_in_at_the_provider(person: Person, subject: str) -> None:
    page = person.page
    page.get_by_label("Subject (user name)").fill(subject)
    page.get_by_label("Email").fill(f"{subject}@example.test")
    page.get_by_role("button", name="Sign in").click()


def test_a_remembered_consent_goes_from_the_providers_sign_in_straight_to_an_https_client(
    people, stack: Stack
) -> None:
    registered = httpx.post(
        f"{stack.endpoint}/v1/oauth/register",
        json={"redirect_uris": [HTTPS_REDIRECT], "client_name": "Remembered Agent"},
    )
    assert registered.status_code == 201, registered.text
    client_id = str(registered.json()["client_id"])
    person: Person = people("oauth-remembered")
    page = person.page
    arrived: list[str] = []

    def at_the_client(route: Any) -> None:
        arrived.append(route.request.url)
        route.fulfill(status=200, content_type="text/html", body="<title>Agent</title>Back.")

    page.route(re.compile(r"^https://agent\.example\.test/"), at_the_client)
    back = re.compile(r"^https://agent\.example\.test/callback\?code=")
    # Allow once: through the consent page.
    page.goto(authorize_url(stack, client_id, HTTPS_REDIRECT))
    sign_in_at_the_provider(person, "developer")
    page.wait_for_url(re.compile(r"/v1/oauth/consent\?"))
    page.get_by_role("button", name="Allow").click()
    expect(page).to_have_url(back)

    # Again: the consent is remembered, so the provider's sign-in leads to the client at once.
    page.goto(authorize_url(stack, client_id, HTTPS_REDIRECT))
    sign_in_at_the_provider(person, "developer")

    expect(page).to_have_url(back)
    assert len(arrived) == 2
    assert "/v1/oauth/consent" not in page.url
    assert person.csp_violations() == []
