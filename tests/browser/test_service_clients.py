"""Service clients in a real browser at 1280 and 390 px: the owner registers a machine with a
pasted JWK Set or a JWKS URI, sees it listed, deletes it after a confirmation (its token is
refused on its next request); a pasted private key is refused with the service's words; the
empty, error, outage and answer-budget states (and a registration retried after an outage);
a member told why they see none; the new events in words in Activity; axe-core with zero
findings on every state and dialog."""

from __future__ import annotations

import json
import re
import time
from typing import Any

import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import ec
from jwt.algorithms import ECAlgorithm
from playwright.sync_api import Locator, Route, expect

from tests.browser.conftest import Person, Stack
from tests.browser.test_keys import create_workspace
from tests.browser.test_page import axe_violations
from tests.browser.test_people import WIDTHS, a_member_of, no_sideways_scroll, open_section, unique
from tests.browser.test_sessions import answer, held_in

SERVICE_CLIENTS = re.compile(r".*/v1/workspaces/[^/]+/service-clients$")
OUTAGE = {"code": "dependency_unavailable", "status": 503,
          "detail": "A dependency is unavailable; retry later."}
ASSERTION_TYPE = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"


def open_service_clients(person: Person) -> Locator:
    open_section(person, "Service clients")
    return person.page.locator("tr[data-client-id]")


def key_pair() -> tuple[Any, dict[str, Any]]:
    key = ec.generate_private_key(ec.SECP256R1())
    public = {**ECAlgorithm.to_jwk(key.public_key(), as_dict=True), "kid": "k1"}
    return key, public


def machine_token(stack: Stack, client_id: str, key: Any) -> str:
    now = int(time.time())
    claims = {"iss": client_id, "sub": client_id, "aud": stack.endpoint, "iat": now,
              "exp": now + 60, "jti": f"browser-{now}-{client_id}"}
    assertion = jwt.encode(claims, key, algorithm="ES256", headers={"kid": "k1"})
    answered = stack.http.post(
        "/v1/oauth/token",
        data={"grant_type": "client_credentials", "client_assertion_type": ASSERTION_TYPE,
              "client_assertion": assertion},
    )
    assert answered.status_code == 200, answered.text
    return str(answered.json()["access_token"])


@pytest.mark.parametrize("width", ["desktop", "phone"])
def test_the_owner_registers_lists_and_deletes_a_service_client(
    people, stack: Stack, width: str
) -> None:
    person: Person = people(f"machines-{width}", viewport=WIDTHS[width])
    person.sign_in(unique("owner"))
    page = person.page
    open_service_clients(person)
    expect(page.get_by_role("heading", name="No workspace of yours")).to_be_visible()
    workspace_id = create_workspace(person, "Machines")
    open_service_clients(person)
    expect(page.get_by_role("heading", name="No service clients yet")).to_be_visible()
    person.screenshot(f"service-clients-empty-{width}")

    key, public = key_pair()
    page.get_by_role("button", name="Register service client").click()
    dialog = person.dialog(re.compile("^Register a service client"))
    dialog.get_by_label("Name").fill("nightly sync")
    private = {**public, "d": ECAlgorithm.to_jwk(key, as_dict=True)["d"]}
    dialog.get_by_label("JWK Set (public keys only)").fill(json.dumps({"keys": [private]}))
    dialog.get_by_role("button", name="Register").click()
    expect(dialog.get_by_role("alert")).to_contain_text("register the public key only")
    person.screenshot(f"service-clients-private-key-refused-{width}")
    dialog.get_by_label("JWK Set (public keys only)").fill(json.dumps({"keys": [public]}))
    dialog.get_by_label("entities").check()
    no_sideways_scroll(person)
    person.screenshot(f"service-clients-register-{width}")
    dialog.get_by_role("button", name="Register").click()

    rows = page.locator("tr[data-client-id]")
    expect(rows).to_have_count(1)
    expect(rows).to_contain_text("nightly sync")
    expect(rows).to_contain_text("1 key registered")
    expect(rows).to_contain_text("memory, entities")
    client_id = rows.get_attribute("data-client-id")
    assert client_id is not None and client_id.startswith("scl_")
    token = machine_token(stack, client_id, key)
    assert stack.call("GET", "/v1/auth/whoami", token).status_code == 200

    page.get_by_role("button", name="Register service client").click()
    dialog = person.dialog(re.compile("^Register a service client"))
    dialog.get_by_label("Name").fill("published keys")
    dialog.get_by_label("A JWKS URI").check()
    dialog.get_by_label("JWKS URI", exact=True).fill("https://machines.example.com/jwks.json")
    dialog.get_by_role("button", name="Register").click()
    expect(rows).to_have_count(2)
    expect(rows.nth(1)).to_contain_text("published at https://machines.example.com/jwks.json")
    no_sideways_scroll(person)
    person.screenshot(f"service-clients-list-{width}")

    rows.first.get_by_role("button", name="Delete").click()
    confirm = page.get_by_role("alertdialog")
    expect(confirm).to_contain_text("refused from their next request")
    person.screenshot(f"service-clients-delete-confirmation-{width}")
    confirm.get_by_role("button", name="Delete service client").click()
    expect(rows).to_have_count(1)

    refused = stack.call("GET", "/v1/auth/whoami", token)
    assert (refused.status_code, refused.json()["code"]) == (401, "revoked_credentials")
    listed = stack.call(
        "GET", f"/v1/workspaces/{workspace_id}/service-clients", person.access_token()
    ).json()["serviceClients"]
    assert [c["name"] for c in listed] == ["published keys"]

    page.get_by_role("link", name="Activity").click()
    activity = page.locator("main")
    expect(activity).to_contain_text("Service client registered")
    expect(activity).to_contain_text("Service client deleted")
    expect(activity).to_contain_text("Service client got a token")
    expect(activity).to_contain_text("“nightly sync”")
    person.screenshot(f"service-clients-activity-{width}")
    assert person.csp_violations() == []


@pytest.mark.parametrize("width", ["desktop", "phone"])
def test_the_empty_error_outage_and_budget_states_say_what_happened_and_offer_a_retry(
    people, stack: Stack, width: str
) -> None:
    person: Person = people(f"machines-states-{width}", viewport=WIDTHS[width])
    page = person.page
    page.clock.install()
    person.sign_in(unique("states"))
    workspace_id = create_workspace(person, "Machines")
    alert = page.locator("main").get_by_role("alert")

    # A problem answer, in words, with Try again, and no button to register meanwhile.
    page.route(SERVICE_CLIENTS, answer(500, {"code": "internal_error", "status": 500}))
    open_service_clients(person)
    expect(alert).to_contain_text("Something went wrong on our side.")
    expect(page.get_by_role("button", name="Register service client")).to_have_count(0)
    person.screenshot(f"service-clients-error-{width}")
    page.unroute(SERVICE_CLIENTS)
    alert.get_by_role("button", name="Try again").click()
    expect(page.get_by_role("heading", name="No service clients yet")).to_be_visible()
    expect(page.get_by_role("button", name="Register service client")).to_be_visible()

    page.route(SERVICE_CLIENTS, answer(503, OUTAGE))
    page.get_by_role("link", name="API keys").click()
    open_service_clients(person)
    expect(alert).to_contain_text("The service is having trouble right now.")
    person.screenshot(f"service-clients-outage-{width}")
    page.unroute(SERVICE_CLIENTS)

    # No answer: given up after the answer budget (10 s on the page's clock), with Try again.
    held: list[Route] = []
    page.route(SERVICE_CLIENTS, held_in(held))
    alert.get_by_role("button", name="Try again").click()
    expect(page.locator("#progress")).to_be_visible()
    page.clock.run_for(10_000)
    expect(alert).to_contain_text("did not answer in time")
    assert held
    person.screenshot(f"service-clients-budget-{width}")
    page.unroute(SERVICE_CLIENTS)
    alert.get_by_role("button", name="Try again").click()
    expect(page.get_by_role("heading", name="No service clients yet")).to_be_visible()

    # The form: its own mistake is said before any request; the service's outage keeps what
    # was typed and offers to try again, which registers the machine once it is over.
    page.get_by_role("button", name="Register service client").click()
    dialog = person.dialog(re.compile("^Register a service client"))
    dialog.get_by_label("Name").fill("broken")
    jwks = dialog.get_by_label("JWK Set (public keys only)")
    jwks.fill("not json")
    dialog.get_by_role("button", name="Register").click()
    expect(dialog.get_by_role("alert")).to_contain_text("is not JSON")
    expect(dialog.get_by_role("alert").get_by_role("button", name="Try again")).to_have_count(0)
    person.screenshot(f"service-clients-form-error-{width}")
    jwks.fill(json.dumps({"keys": [key_pair()[1]]}))
    page.route(SERVICE_CLIENTS, answer(503, OUTAGE))
    dialog.get_by_role("button", name="Register").click()
    expect(dialog.get_by_role("alert")).to_contain_text("The service is having trouble right now.")
    no_sideways_scroll(person)
    person.screenshot(f"service-clients-form-outage-{width}")
    page.unroute(SERVICE_CLIENTS)
    dialog.get_by_role("alert").get_by_role("button", name="Try again").click()
    rows = page.locator("tr[data-client-id]")
    expect(rows).to_have_count(1)
    expect(rows).to_contain_text("broken")
    listed = stack.call(
        "GET", f"/v1/workspaces/{workspace_id}/service-clients", person.access_token()
    ).json()["serviceClients"]
    assert [c["name"] for c in listed] == ["broken"]
    assert person.csp_violations() == []


def test_a_member_is_told_why_they_see_no_service_clients_and_the_api_answers_403(
    people, stack: Stack
) -> None:
    member, workspace = a_member_of(people, "Shared machines", "machines")
    page = member.page
    open_service_clients(member)

    expect(
        page.get_by_role(
            "heading", name="Only the owner of Shared machines manages its service clients"
        )
    ).to_be_visible()
    expect(page.locator("main")).to_contain_text("ask its owner to register the machine")
    expect(page.get_by_role("button", name="Register service client")).to_have_count(0)
    refused = stack.call(
        "GET", f"/v1/workspaces/{workspace}/service-clients", member.access_token()
    )
    assert (refused.status_code, refused.json()["code"]) == (403, "owner_required")
    member.screenshot("service-clients-member-not-owner")


@pytest.mark.parametrize("width", ["desktop", "phone"])
def test_no_accessibility_findings_on_the_service_clients_section(
    people, stack: Stack, width: str
) -> None:
    person: Person = people(f"machines-axe-{width}", viewport=WIDTHS[width], bypass_csp=True)
    person.sign_in(unique("axe-machines"), name="Ada Lovelace")
    page = person.page
    found: dict[str, list[dict[str, Any]]] = {}

    open_service_clients(person)
    expect(page.get_by_role("heading", name="No workspace of yours")).to_be_visible()
    found["no workspace"] = axe_violations(person)
    create_workspace(person, "Machines")
    open_service_clients(person)
    expect(page.get_by_role("heading", name="No service clients yet")).to_be_visible()
    found["empty"] = axe_violations(person)
    page.get_by_role("button", name="Register service client").click()
    dialog = person.dialog(re.compile("^Register a service client"))
    found["register dialog"] = axe_violations(person)
    dialog.get_by_label("Name").fill("machine")
    dialog.get_by_label("JWK Set (public keys only)").fill(json.dumps({"keys": [key_pair()[1]]}))
    dialog.get_by_role("button", name="Register").click()
    rows = page.locator("tr[data-client-id]")
    expect(rows).to_have_count(1)
    found["list"] = axe_violations(person)
    rows.get_by_role("button", name="Delete").click()
    found["delete confirmation"] = axe_violations(person)
    page.get_by_role("alertdialog").get_by_role("button", name="Cancel").click()
    page.route(SERVICE_CLIENTS, answer(500, {"code": "internal_error", "status": 500}))
    page.get_by_role("link", name="API keys").click()
    page.get_by_role("link", name="Service clients").click()
    expect(page.locator("main").get_by_role("button", name="Try again")).to_be_visible()
    found["error"] = axe_violations(person)
    page.unroute(SERVICE_CLIENTS)
    page.route(SERVICE_CLIENTS, answer(503, OUTAGE))
    page.get_by_role("link", name="API keys").click()
    page.get_by_role("link", name="Service clients").click()
    expect(page.locator("main").get_by_role("button", name="Try again")).to_be_visible()
    found["outage"] = axe_violations(person)
    print(f"axe-core, {width}: {len(found)} screens, findings: {found}")

    assert {screen: v for screen, v in found.items() if v} == {}
