"""The keys table's search asks the service (`GET /v1/auth/api-keys?q=`): a key that is not
on the first page is found, "Load more" goes on over the search, "No keys match" is said only
once the service has answered, and clearing the search brings the plain list back; at both
widths, with axe-core's zero findings."""

from __future__ import annotations

import re
import secrets
from typing import Any

import pytest
from playwright.sync_api import Route, expect

from tests.browser.conftest import DESKTOP, PHONE, Person, Stack
from tests.browser.test_page import axe_violations

WIDTHS = {"desktop": DESKTOP, "phone": PHONE}
SEARCHES = re.compile(r".*/v1/auth/api-keys\?.*q=.*")


def bulk_keys(stack: Stack, token: str, count: int) -> None:
    """`bulk key 01` … `bulk key <count>`, made in that order (so 01 is the oldest: last)."""
    for number in range(1, count + 1):
        made = stack.call(
            "POST", "/v1/auth/api-keys", token, body={"label": f"bulk key {number:02}"}
        )
        assert made.status_code == 201


@pytest.mark.parametrize("width", ["desktop", "phone"])
def test_search_finds_a_key_that_is_not_on_the_first_page(
    people, stack: Stack, width: str
) -> None:
    person: Person = people(f"key-search-{width}", viewport=WIDTHS[width], bypass_csp=True)
    person.sign_in(f"searcher-{secrets.token_hex(3)}")
    bulk_keys(stack, person.access_token(), 30)
    page = person.page
    page.reload()
    rows = page.locator("tr[data-key-id]")
    expect(rows).to_have_count(25)
    expect(rows.filter(has_text="bulk key 01")).to_have_count(0)  # not on the first page

    with page.expect_response(SEARCHES) as searched:
        page.get_by_label("Search").fill("BULK KEY 01")
    assert "q=BULK+KEY+01" in searched.value.url

    expect(rows).to_have_count(1)
    expect(rows.first).to_contain_text("bulk key 01")
    assert axe_violations(person) == []
    person.screenshot(f"key-search-found-{width}")

    page.get_by_label("Search").fill("")
    expect(rows).to_have_count(25)
    expect(rows.first).to_contain_text("bulk key 30")


@pytest.mark.parametrize("width", ["desktop", "phone"])
def test_no_match_is_said_only_after_the_service_answers(
    people, stack: Stack, width: str
) -> None:
    person: Person = people(f"key-no-match-{width}", viewport=WIDTHS[width], bypass_csp=True)
    person.sign_in(f"nomatch-{secrets.token_hex(3)}")
    bulk_keys(stack, person.access_token(), 2)
    page = person.page
    page.reload()
    rows = page.locator("tr[data-key-id]")
    expect(rows).to_have_count(2)
    held: list[Route] = []
    page.route(SEARCHES, lambda route: held.append(route))

    page.get_by_label("Search").fill("nothing like it")
    expect(page.locator("#progress")).to_be_visible()  # the search is on its way, held

    expect(page.get_by_text("No keys match")).to_have_count(0)
    expect(rows).to_have_count(2)
    assert len(held) == 1
    held[0].continue_()
    expect(page.get_by_text("No keys match “nothing like it”.")).to_be_visible()
    assert axe_violations(person) == []
    person.screenshot(f"key-no-match-{width}")


def test_load_more_goes_on_over_the_search(people, stack: Stack) -> None:
    person: Person = people("key-search-more")
    person.sign_in(f"more-{secrets.token_hex(3)}")
    token = person.access_token()
    bulk_keys(stack, token, 27)
    stack.call("POST", "/v1/auth/api-keys", token, body={"label": "unrelated"})
    page = person.page
    page.reload()
    rows = page.locator("tr[data-key-id]")
    expect(rows).to_have_count(25)

    page.get_by_label("Search").fill("bulk")
    expect(rows.filter(has_text="unrelated")).to_have_count(0)
    expect(rows).to_have_count(25)
    sent: list[Any] = []
    page.on("request", lambda request: sent.append(request.url))
    page.get_by_role("button", name="Load more keys").click()

    expect(rows).to_have_count(27)
    expect(rows.last).to_contain_text("bulk key 01")
    expect(page.get_by_role("button", name="Load more keys")).to_be_hidden()
    assert any("q=bulk" in url and "cursor=" in url for url in sent)
