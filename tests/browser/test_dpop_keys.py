"""Key-bound API keys (DPoP) in the dashboard's key dialog at 1280 and 390 px: the public JWK
pasted, its thumbprint shown, a private JWK refused before any request; the key created is
bound (`dpopJkt`), listed as such, and refused without a proof (401 dpop_required). With the
field left empty (or emptied) no thumbprint shows and the key is not bound. The service's
refusal of the binding is said in words; its outage and an answer later than the budget keep
what was pasted and offer to try again, which creates the bound key; axe-core finds nothing."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from playwright.sync_api import Locator, Route, expect

from tests.browser.conftest import Person, Stack
from tests.browser.test_keys import copy_secret, create_workspace, key_row
from tests.browser.test_page import axe_violations
from tests.browser.test_people import WIDTHS, no_sideways_scroll, unique
from tests.browser.test_sessions import OUTAGE, answer, held_in
from tests.fixtures.dpop import DpopKey

CREATE_KEY = re.compile(r".*/v1/auth/api-keys$")  # the list is asked for with a query
BOUND = "bound to a key pair"


def open_create_dialog(person: Person, label: str) -> Locator:
    page = person.page
    page.get_by_role("link", name="API keys").click()
    page.get_by_role("button", name="Create key", exact=True).click()
    create = person.dialog("Create an API key")
    create.get_by_label("Label").fill(label)
    return create


@pytest.mark.parametrize("width", ["desktop", "phone"])
def test_a_key_bound_to_a_pasted_public_jwk_shows_its_thumbprint_and_is_bound(
    people, stack: Stack, width: str
) -> None:
    person: Person = people(unique(f"dpop-keys-{width}"), viewport=WIDTHS[width], bypass_csp=True)
    person.sign_in()
    create_workspace(person, f"DPoP team {width}")
    pair = DpopKey()
    found: dict[str, list[dict[str, Any]]] = {}

    create = open_create_dialog(person, f"bound worker {width}")
    jwk_field = create.get_by_label("Bind to a key pair (optional)")
    jwk_field.fill(json.dumps({**pair.jwk, "d": "c2VjcmV0"}))
    expect(create.locator("output")).to_have_text(
        "This JWK holds a private key: paste only the public key."
    )
    jwk_field.fill(json.dumps(pair.jwk))
    expect(create.locator("output")).to_have_text(f"Thumbprint (dpopJkt): {pair.jkt}")
    no_sideways_scroll(person)
    found["create dialog, key pair pasted"] = axe_violations(person)
    person.screenshot(f"key-create-dpop-{width}")
    create.get_by_role("button", name="Create key").click()
    key = copy_secret(person, "Your new API key", f"key-created-dpop-{width}")

    row = key_row(person, f"bound worker {width}")
    expect(row.locator('td[data-label="Status"]')).to_contain_text(BOUND)
    expect(row.get_by_text(BOUND)).to_have_attribute("title", f"Thumbprint (dpopJkt): {pair.jkt}")
    no_sideways_scroll(person)
    found["list with a bound key"] = axe_violations(person)
    whoami = stack.call("GET", "/v1/auth/whoami", key)
    listed = stack.call("GET", "/v1/auth/api-keys", key)  # refused too: the key is bound
    print(f"axe-core, {width}: {found}")

    assert (whoami.status_code, whoami.json()["code"]) == (401, "dpop_required")
    assert listed.status_code == 401
    assert {screen: v for screen, v in found.items() if v} == {}


@pytest.mark.parametrize("width", ["desktop", "phone"])
def test_with_the_bind_field_empty_no_thumbprint_shows_and_the_key_is_not_bound(
    people, stack: Stack, width: str
) -> None:
    person: Person = people(unique(f"dpop-empty-{width}"), viewport=WIDTHS[width], bypass_csp=True)
    person.sign_in()
    create_workspace(person, f"Unbound {width}")
    create = open_create_dialog(person, f"plain worker {width}")
    output = create.locator("output")
    expect(output).to_have_text("")
    jwk_field = create.get_by_label("Bind to a key pair (optional)")
    jwk_field.fill(json.dumps(DpopKey().jwk))
    expect(output).to_contain_text("Thumbprint (dpopJkt): ")
    jwk_field.fill("")  # emptied again: the key is made without a binding
    expect(output).to_have_text("")
    empty_dialog = axe_violations(person)
    create.get_by_role("button", name="Create key").click()
    key = copy_secret(person, "Your new API key", f"key-created-unbound-{width}")

    row = key_row(person, f"plain worker {width}")
    expect(row).to_have_count(1)
    expect(row).not_to_contain_text(BOUND)
    made = [k for k in stack.call("GET", "/v1/auth/api-keys", person.access_token())
            .json()["keys"] if k["label"] == f"plain worker {width}"]
    assert [k["dpopJkt"] for k in made] == [None]
    assert stack.call("GET", "/v1/auth/whoami", key).status_code == 200  # no proof needed
    assert empty_dialog == []


@pytest.mark.parametrize("width", ["desktop", "phone"])
def test_a_400_invalid_dpop_jkt_is_said_in_words_and_a_503_or_no_answer_retries_to_one_key(
    people, stack: Stack, width: str
) -> None:
    person: Person = people(unique(f"dpop-states-{width}"), viewport=WIDTHS[width], bypass_csp=True)
    page = person.page
    page.clock.install()
    person.sign_in()
    create_workspace(person, f"States {width}")
    pair = DpopKey()
    found: dict[str, list[dict[str, Any]]] = {}
    create = open_create_dialog(person, f"bound later {width}")
    jwk_field = create.get_by_label("Bind to a key pair (optional)")
    jwk_field.fill(json.dumps(pair.jwk))
    thumbprint = f"Thumbprint (dpopJkt): {pair.jkt}"
    expect(create.locator("output")).to_have_text(thumbprint)
    alert = create.get_by_role("alert")
    submit = create.get_by_role("button", name="Create key")

    # The service's refusal of the binding: in words, and nothing to retry as it is.
    detail = ("dpopJkt must be the RFC 7638 SHA-256 thumbprint of a public key: "
              "43 base64url characters.")
    page.route(CREATE_KEY, answer(400, {"code": "invalid_dpop_jkt", "status": 400,
                                        "detail": detail}))
    submit.click()
    expect(alert).to_contain_text("The service did not take the key pair's thumbprint.")
    expect(alert).not_to_contain_text("dpopJkt must be")
    expect(alert.get_by_role("button", name="Try again")).to_have_count(0)
    found["refused"] = axe_violations(person)
    person.screenshot(f"key-create-dpop-refused-{width}")
    page.unroute(CREATE_KEY)

    # An outage: said, with Try again; what was pasted stays.
    page.route(CREATE_KEY, answer(503, OUTAGE))
    submit.click()
    expect(alert).to_contain_text("The service is having trouble right now.")
    expect(jwk_field).to_have_value(json.dumps(pair.jwk))
    expect(create.locator("output")).to_have_text(thumbprint)
    no_sideways_scroll(person)
    found["outage"] = axe_violations(person)
    person.screenshot(f"key-create-dpop-outage-{width}")
    page.unroute(CREATE_KEY)

    # No answer: given up after the answer budget (10 s on the page's clock), with Try again.
    held: list[Route] = []
    page.route(CREATE_KEY, held_in(held))
    alert.get_by_role("button", name="Try again").click()
    expect(page.locator("#progress")).to_be_visible()
    page.clock.run_for(10_000)
    expect(alert).to_contain_text("did not answer in time")
    assert held
    found["no answer"] = axe_violations(person)
    # The send given up on goes on (the SDK sends it again, past the route now): it may make
    # the key before "Try again" does; one key all the same.
    page.unroute(CREATE_KEY)
    alert.get_by_role("button", name="Try again").click()
    key = copy_secret(person, "Your new API key", f"key-created-dpop-retried-{width}")

    expect(key_row(person, f"bound later {width}")).to_have_count(1)
    expect(key_row(person, f"bound later {width}")).to_contain_text(BOUND)
    made = [k for k in stack.call("GET", "/v1/auth/api-keys", person.access_token())
            .json()["keys"] if k["label"] == f"bound later {width}"]
    assert [k["dpopJkt"] for k in made] == [pair.jkt]
    whoami = stack.call("GET", "/v1/auth/whoami", key)
    assert (whoami.status_code, whoami.json()["code"]) == (401, "dpop_required")
    print(f"axe-core, {width}: {found}")
    assert {screen: v for screen, v in found.items() if v} == {}
