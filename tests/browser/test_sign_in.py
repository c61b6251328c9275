"""Sign-in through the development provider's form, the session's storage, and sign-out;
the provider's `iss` on the way back (RFC 9207)."""

from __future__ import annotations

import re
from urllib.parse import parse_qsl, urlencode, urlsplit

import pytest
from playwright.sync_api import Route, expect

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


# -- RFC 9207: the provider's `iss` on the way back --------------------------------------


def provider_promises_iss(person: Person, promise: bool) -> None:
    """The provider's discovery document, as this tab reads it, says `promise` about `iss`."""

    def serve(route: Route) -> None:
        answer = route.fetch()
        document = answer.json()
        document["authorization_response_iss_parameter_supported"] = promise
        route.fulfill(response=answer, json=document)

    person.page.route("**/.well-known/openid-configuration", serve)


def provider_answers_with(person: Person, iss: str | None) -> None:
    """The provider's redirect back to the dashboard carries `iss` (None: no `iss` at all)."""

    def answer(route: Route) -> None:
        if route.request.method != "POST":
            route.continue_()
            return
        back = urlsplit(route.fetch(max_redirects=0).headers["location"])
        query = [(name, value) for name, value in parse_qsl(back.query) if name != "iss"]
        if iss is not None:
            query.append(("iss", iss))
        location = back._replace(query=urlencode(query)).geturl()
        route.fulfill(status=302, headers={"Location": location})

    person.page.route("**/authorize", answer)


def sign_in_at_the_provider(person: Person) -> None:
    """From the dashboard to the provider's form and back, whatever the tab makes of it."""
    page = person.page
    page.goto(person.dashboard)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(re.compile(r"/authorize\?"))
    page.get_by_label("Subject (user name)").fill(person.name)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(re.compile(r"/dashboard/$"))


@pytest.mark.parametrize("iss", [None, "http://127.0.0.1:9/other-provider"])
def test_a_provider_that_promises_iss_is_refused_an_answer_without_its_own(
    people, iss: str | None
) -> None:
    person: Person = people("browser-mallory")
    provider_promises_iss(person, True)
    provider_answers_with(person, iss)

    sign_in_at_the_provider(person)

    alert = person.page.get_by_role("alert")
    expect(alert).to_contain_text("did not come from the login provider (iss)")
    expect(person.page.get_by_role("button", name="Sign in")).to_be_visible()
    assert person.storage("sessionStorage") == {}  # no tokens, and the sign-in is spent
    assert "code=" not in person.page.url
    assert person.csp_violations() == []


def test_a_provider_that_does_not_promise_iss_may_answer_without_it(people) -> None:
    person: Person = people("browser-nina")
    provider_promises_iss(person, False)
    provider_answers_with(person, None)

    sign_in_at_the_provider(person)

    expect(person.page.locator("#user-id")).to_have_attribute("data-user-id", re.compile(r"^usr_"))
    assert set(person.storage("sessionStorage")) == {"memory-dashboard.tokens"}
    assert person.csp_violations() == []


def test_the_development_provider_promises_iss_and_sends_it(people) -> None:
    person: Person = people("browser-olga")
    documents: list[dict[str, object]] = []

    def read(route: Route) -> None:
        answer = route.fetch()
        documents.append(answer.json())
        route.fulfill(response=answer)

    person.page.route("**/.well-known/openid-configuration", read)

    person.sign_in()

    assert [d["authorization_response_iss_parameter_supported"] for d in documents] == [True]
