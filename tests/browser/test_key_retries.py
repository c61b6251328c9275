"""A rotation the page gave up on (no answer within the 10 s answer budget) and tried again
rotates once and shows the new key: both sends carry one Idempotency-Key, so the second is
answered with what the first did, not refused because the key was already replaced."""

from __future__ import annotations

import re

from playwright.sync_api import Route, expect

from tests.browser.conftest import Person, Stack
from tests.browser.test_dpop_keys import open_create_dialog
from tests.browser.test_keys import copy_secret, create_workspace
from tests.browser.test_people import unique
from tests.browser.test_sessions import held_in

ROTATE = re.compile(r".*/v1/auth/api-keys/[^/]+/rotate$")


def test_a_rotation_tried_again_after_the_answer_budget_rotates_once_and_shows_the_new_key(
    people, stack: Stack
) -> None:
    person: Person = people(unique("rotate-budget"), bypass_csp=True)
    page = person.page
    page.clock.install()
    person.sign_in()
    create_workspace(person, "Rotate budget")
    label = unique("budget key")
    open_create_dialog(person, label).get_by_role("button", name="Create key").click()
    copy_secret(person, "Your new API key", "key-rotate-budget-created")

    row = page.locator("tr[data-key-id]").filter(has_text=label)
    row.get_by_role("button", name=f"Rotate key “{label}”", exact=True).click()
    dialog = person.dialog(f"Rotate “{label}”")
    held: list[Route] = []
    page.route(ROTATE, held_in(held))
    dialog.get_by_role("button", name="Rotate key").click()
    expect(page.locator("#progress")).to_be_visible()
    page.clock.run_for(10_000)
    alert = dialog.get_by_role("alert")
    expect(alert).to_contain_text("did not answer in time")
    assert held

    # The SDK's own timeout (30 s) ends the held send and sends it again, past the route now:
    # the service rotates the key before the person tries again.
    page.unroute(ROTATE)
    with page.expect_response(ROTATE) as first:
        page.clock.run_for(25_000)
    assert first.value.status == 201

    alert.get_by_role("button", name="Try again").click()
    new_key = copy_secret(person, "Your rotated API key", "key-rotate-budget-rotated")

    token = person.access_token()
    mine = [k for k in stack.call("GET", "/v1/auth/api-keys", token).json()["keys"]
            if k["label"] == label]
    assert sorted(k["status"] for k in mine) == ["active", "revoked"]
    whoami = stack.call("GET", "/v1/auth/whoami", new_key)
    assert whoami.status_code == 200
