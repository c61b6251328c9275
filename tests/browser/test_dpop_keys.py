"""Creating a key-bound API key (DPoP) in the dashboard at 1280 and 390 px: the public JWK
pasted, its thumbprint shown, a private JWK refused before any request; the key created is
bound (`dpopJkt`) and refused without a proof (401 dpop_required); axe-core finds nothing."""

from __future__ import annotations

import json
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import Person, Stack
from tests.browser.test_keys import copy_secret, create_workspace
from tests.browser.test_page import axe_violations
from tests.browser.test_people import WIDTHS, no_sideways_scroll, unique
from tests.fixtures.dpop import DpopKey


@pytest.mark.parametrize("width", ["desktop", "phone"])
def test_a_key_bound_to_a_pasted_public_jwk_shows_its_thumbprint_and_is_bound(
    people, stack: Stack, width: str
) -> None:
    person: Person = people(unique(f"dpop-keys-{width}"), viewport=WIDTHS[width], bypass_csp=True)
    person.sign_in()
    page = person.page
    create_workspace(person, f"DPoP team {width}")
    pair = DpopKey()
    found: dict[str, list[dict[str, Any]]] = {}

    page.get_by_role("link", name="API keys").click()
    page.get_by_role("button", name="Create key", exact=True).click()
    create = person.dialog("Create an API key")
    create.get_by_label("Label").fill(f"bound worker {width}")
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

    whoami = stack.call("GET", "/v1/auth/whoami", key)
    listed = stack.call("GET", "/v1/auth/api-keys", key)  # refused too: the key is bound
    print(f"axe-core, {width}: {found}")

    assert (whoami.status_code, whoami.json()["code"]) == (401, "dpop_required")
    assert listed.status_code == 401
    assert {screen: v for screen, v in found.items() if v} == {}
