"""People, not ids, and a console that keeps its place: names and emails for people, keys
searched and linked, the place and focus kept after an action, hostile text that never
overflows, Activity in words, progress and a timeout with retry, and axe-core with zero
findings of any impact on each of these screens at both widths."""

from __future__ import annotations

import re
import secrets
from typing import Any

import pytest
from playwright.sync_api import Route, expect

from tests.browser.conftest import DESKTOP, PHONE, Person, Stack
from tests.browser.test_keys import create_workspace, key_row
from tests.browser.test_page import axe_violations

WIDTHS = {"desktop": DESKTOP, "phone": PHONE}
# Hostile text: a long word with nowhere to break, a joined emoji, Persian with its zero-width
# non-joiner (U+200C), and an emoji ZWJ sequence (U+200D): all accepted, none overflows.
LONG_WORD = "Supercalifragilisticexpialidocious" * 2
JOINED_EMOJI = "\U0001f469\U0001f3fd\u200d\U0001f4bb coder"
PERSIAN = "\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645"


def unique(prefix: str) -> str:
    return f"{prefix}-{secrets.token_hex(3)}"


def open_section(person: Person, name: str) -> None:
    """Shows the section `name` (its link and its heading say it) once its list has loaded."""
    page = person.page
    page.get_by_role("link", name=name).click()
    expect(page.get_by_role("heading", name=name, level=1)).to_be_visible()
    expect(page.locator("main [aria-busy='true']")).to_have_count(0)


def a_member_of(people: Any, workspace_name: str, prefix: str) -> tuple[Person, str]:
    """Grace, signed in at phone width and added by its owner (signed in beside her) to a
    new workspace `workspace_name`, chosen in her switcher; answers her and its id."""
    member_subject = unique("member")
    member: Person = people(f"{prefix}-member", viewport=WIDTHS["phone"])
    member.sign_in(member_subject, name="Grace Hopper")
    owner: Person = people(f"{prefix}-owner")
    owner.sign_in(unique("owner"))
    workspace = create_workspace(owner, workspace_name)
    members = owner.page.locator("section.members")
    members.get_by_label("Email of the new member").fill(member.email(member_subject))
    members.get_by_role("button", name="Add member").click()
    expect(members.locator("tbody")).to_contain_text("Grace Hopper")
    member.page.reload()
    member.page.get_by_label("Workspace", exact=True).select_option(label=workspace_name)
    return member, workspace


def no_sideways_scroll(person: Person) -> None:
    """Nothing wider than the screen; on failure, the elements that stick out."""
    width = person.page.evaluate("() => document.documentElement.scrollWidth")
    viewport = person.page.viewport_size
    assert viewport is not None
    wider = person.page.evaluate(
        "() => [...document.querySelectorAll('body *')]"
        ".filter((e) => e.getBoundingClientRect().right > window.innerWidth + 1)"
        ".slice(0, 5)"
        ".map((e) => e.tagName + '.' + e.className + ' ' + e.getBoundingClientRect().right)"
    )
    assert width <= viewport["width"], wider


def test_people_are_named_by_name_and_email_and_added_by_email(people, stack: Stack) -> None:
    grace_subject = unique("grace")
    member: Person = people("people-member")
    member.sign_in(grace_subject, name="Grace Hopper")
    owner: Person = people("people-owner")
    owner.sign_in(unique("ada"), name="Ada Lovelace")
    page = owner.page

    expect(page.locator("#who-name")).to_have_text("Ada Lovelace")
    expect(page.locator("header.topbar")).not_to_contain_text("usr_")
    create_workspace(owner, "People first")
    members = page.locator("section.members")
    members.get_by_label("Email of the new member").fill("nobody-at-all@example.test")
    members.get_by_role("button", name="Add member").click()
    expect(members.get_by_role("alert")).to_contain_text(
        "Nobody has signed in with that email or user id yet."
    )
    owner.screenshot("people-add-member-unknown-email")

    members.get_by_label("Email of the new member").fill(member.email(grace_subject).upper())
    members.get_by_role("button", name="Add member").click()

    row = members.locator("tr[data-user-id]").filter(has_text="Grace Hopper")
    expect(row).to_contain_text(member.email(grace_subject))
    expect(members.locator("tbody")).not_to_contain_text("usr_")
    owner.screenshot("people-members")
    row.get_by_role("button", name="Remove").click()
    expect(page.get_by_role("alertdialog", name="Remove Grace Hopper?")).to_be_visible()
    owner.screenshot("people-remove-confirmation")
    page.get_by_role("alertdialog").get_by_role("button", name="Cancel").click()

    page.get_by_role("link", name="Activity").click()
    added = page.locator('tr[data-event-type="member.added"]')
    expect(added).to_contain_text(f"Grace Hopper ({member.email(grace_subject)}) joined")
    expect(added).to_contain_text("you")
    expect(page.locator("main table")).not_to_contain_text("usr_")
    owner.screenshot("people-activity")


def test_keys_keep_their_place_page_and_focus_after_an_action(people, stack: Stack) -> None:
    owner: Person = people("people-keys-place")
    owner.sign_in()
    token = owner.access_token()
    for number in range(30):
        made = stack.call("POST", "/v1/auth/api-keys", token, body={"label": f"key {number:02}"})
        assert made.status_code == 201
    page = owner.page
    page.reload()
    rows = page.locator("tr[data-key-id]")
    page.get_by_role("button", name="Load more keys").click()
    expect(rows).to_have_count(30)

    key_row(owner, "key 02").get_by_role("button", name="Edit").click()
    rename = owner.dialog(re.compile("^Edit"))
    rename.get_by_label("Label").fill("key 02 renamed")
    rename.get_by_role("button", name="Save").click()

    expect(rows).to_have_count(30)
    renamed = key_row(owner, "key 02 renamed")
    expect(renamed.locator('button[data-action="Edit"]')).to_be_focused()
    page.get_by_label("Search").fill("KEY 02")
    expect(rows).to_have_count(1)
    expect(rows).to_contain_text("key 02 renamed")
    owner.screenshot("keys-search")


def test_the_rotated_pair_is_linked_and_last_used_never_reads_before_created(
    people, stack: Stack
) -> None:
    owner: Person = people("people-pair")
    owner.sign_in()
    token = owner.access_token()
    old = stack.call("POST", "/v1/auth/api-keys", token, body={"label": "paired"}).json()
    assert stack.call("GET", "/v1/auth/whoami", old["key"]).status_code == 200
    rotated = stack.call(
        "POST", f"/v1/auth/api-keys/{old['id']}/rotate", token, body={"gracePeriodSeconds": 3600}
    )
    assert rotated.status_code == 201
    page = owner.page
    page.reload()

    old_row = page.locator(f'tr[data-key-id="{old["id"]}"]')
    new_row = page.locator(f'tr[data-key-id="{rotated.json()["id"]}"]')
    expect(old_row).to_contain_text(f"replaced by “paired” ({rotated.json()['hint']})")
    expect(new_row).to_contain_text(f"replaces “paired” ({old['hint']})")
    old_row.get_by_role("button", name=re.compile("^“paired”")).click()
    expect(new_row.locator("th")).to_be_focused()
    used = old_row.locator('td[data-label="Last used"] time').get_attribute("datetime")
    created = old_row.locator('td[data-label="Created"] time').get_attribute("datetime")
    assert used is not None and created is not None and used >= created
    owner.screenshot("keys-rotated-pair")


def test_a_key_whose_owner_left_its_workspace_offers_only_revoke(people, stack: Stack) -> None:
    member: Person = people("people-leaver")
    member_id = member.sign_in()
    owner: Person = people("people-leaver-owner")
    owner.sign_in()
    workspace_id = create_workspace(owner, "Left behind")
    added = stack.call(
        "PUT", f"/v1/workspaces/{workspace_id}/members/{member_id}", owner.access_token()
    )
    assert added.status_code == 201
    made = stack.call(
        "POST", "/v1/auth/api-keys", member.access_token(),
        body={"label": "orphan", "category": "workspace", "workspaceId": workspace_id},
    )
    assert made.status_code == 201
    removed = stack.call(
        "DELETE", f"/v1/workspaces/{workspace_id}/members/{member_id}", owner.access_token()
    )
    assert removed.status_code == 204

    member.page.reload()

    row = key_row(member, "orphan")
    expect(row).to_contain_text("you left its workspace")
    expect(row.get_by_role("button")).to_have_count(1)
    expect(row.get_by_role("button", name="Revoke")).to_be_visible()
    member.screenshot("keys-owner-left")


@pytest.mark.parametrize("width", ["desktop", "phone"])
def test_hostile_text_wraps_and_never_overflows(people, stack: Stack, width: str) -> None:
    person: Person = people(f"people-hostile-{width}", viewport=WIDTHS[width])
    person.sign_in(unique("w" * 60), name="N" * 80)
    page = person.page
    create_workspace(person, f"{PERSIAN} {LONG_WORD[:90]}")
    create_workspace(person, f"{JOINED_EMOJI} team")
    token = person.access_token()
    for label in (LONG_WORD[:100], JOINED_EMOJI, PERSIAN):
        made = stack.call("POST", "/v1/auth/api-keys", token, body={"label": label})
        assert made.status_code == 201, made.text

    page.get_by_label("Workspace", exact=True).select_option("")  # every workspace's keys
    for section in ("API keys", "Workspaces", "Activity"):
        page.get_by_role("link", name=section, exact=True).click()
        expect(page.get_by_role("heading", name=section, level=1)).to_be_visible()
        expect(page.locator("main [aria-busy='true']")).to_have_count(0)
        no_sideways_scroll(person)
        person.screenshot(f"hostile-{width}-{section.lower().replace(' ', '-')}")
    page.get_by_role("link", name="API keys").click()
    expect(key_row(person, LONG_WORD[:100])).to_have_count(1)  # the whole label, on show
    expect(key_row(person, JOINED_EMOJI)).to_have_count(1)
    expect(key_row(person, PERSIAN)).to_have_count(1)
    # The dashboard's own forms accept them too.
    page.get_by_role("button", name="Create key", exact=True).click()
    create = person.dialog("Create an API key")
    create.get_by_label("Label").fill(f"{JOINED_EMOJI} {PERSIAN}")
    create.get_by_role("radio", name=re.compile("^Admin key")).check()
    create.get_by_role("button", name="Create key").click()
    secret = person.dialog("Your new API key")
    expect(secret).to_be_visible()
    secret.get_by_role("button", name="Done").click()
    page.get_by_role("alertdialog").get_by_role("button", name="Yes, close").click()
    expect(key_row(person, f"{JOINED_EMOJI} {PERSIAN}")).to_have_count(1)
    no_sideways_scroll(person)


def test_tapping_members_on_a_phone_shows_the_list_in_place(people, stack: Stack) -> None:
    person: Person = people("people-phone-members", viewport=PHONE)
    person.sign_in()
    for name in ("First team", "Second team", "Third team"):
        create_workspace(person, name)
    page = person.page

    page.get_by_role("button", name="Members of First team").click()

    title = page.get_by_role("heading", name="Members of First team")
    expect(title).to_be_focused()
    expect(title).to_be_in_viewport()
    expect(page.locator("section.members tr[data-user-id]")).to_have_count(1)
    person.screenshot("phone-members")


def test_a_slow_service_shows_progress_then_offers_to_try_again(people, stack: Stack) -> None:
    person: Person = people("people-slow")
    person.sign_in()
    page = person.page
    held: list[Route] = []

    def hold(route: Route) -> None:
        held.append(route)

    page.route(re.compile(r".*/v1/auth/api-keys\?.*status=revoked.*"), hold)

    page.get_by_label("Status").select_option("revoked")

    expect(page.locator("#progress")).to_be_visible()
    expect(page.locator("#progress")).to_have_text("Working…")
    alert = page.locator("main").get_by_role("alert")
    expect(alert).to_contain_text("did not answer in time", timeout=15_000)
    person.screenshot("keys-timeout")
    page.unroute(re.compile(r".*/v1/auth/api-keys\?.*status=revoked.*"))
    alert.get_by_role("button", name="Try again").click()
    expect(page.get_by_text("No revoked keys")).to_be_visible()
    expect(page.locator("#progress")).to_be_hidden()
    assert held  # the first answer was held back (unroute lets it go)


def test_activity_names_keys_and_people_and_follows_filters_and_the_switcher(
    people, stack: Stack
) -> None:
    person: Person = people("people-activity")
    person.sign_in(unique("act"), name="Ada Lovelace")
    first = create_workspace(person, "Alpha")
    create_workspace(person, "Beta")
    token = person.access_token()
    key = stack.call(
        "POST", "/v1/auth/api-keys", token,
        body={"label": "alpha worker", "category": "workspace", "workspaceId": first},
    ).json()
    rotated = stack.call("POST", f"/v1/auth/api-keys/{key['id']}/rotate", token).json()
    page = person.page
    page.get_by_label("Workspace", exact=True).select_option(first)
    page.get_by_role("link", name="Activity").click()

    rows = page.locator("tr[data-event-type]")
    expect(page.locator('tr[data-event-type="workspace.created"]')).to_have_count(1)
    expect(page.locator("main table")).not_to_contain_text("Beta")  # another workspace's
    expect(page.locator('tr[data-event-type="key.rotated"]')).to_contain_text(
        f"replaced by “alpha worker” ({rotated['hint']})"
    )
    expect(page.locator('tr[data-event-type="key.created"]')).to_contain_text("you")
    page.get_by_label("Event").select_option("key.created")
    expect(rows).to_have_count(1)
    page.get_by_label("Event").select_option("")
    page.get_by_label("Key", exact=True).select_option(key["id"])
    expect(rows).to_have_count(2)
    expect(page.locator("main table")).not_to_contain_text("Workspace created")
    person.screenshot("activity-filtered")


@pytest.mark.parametrize("width", ["desktop", "phone"])
def test_no_accessibility_findings_on_the_people_and_key_screens(
    people, stack: Stack, width: str
) -> None:
    member: Person = people(f"people-axe-member-{width}")
    member_subject = unique("axe-member")
    member_id = member.sign_in(member_subject, name="Grace Hopper")
    person: Person = people(f"people-axe-{width}", viewport=WIDTHS[width], bypass_csp=True)
    person.sign_in(unique("axe"), name="Ada Lovelace")
    page = person.page
    found: dict[str, list[dict[str, Any]]] = {}
    workspace_id = create_workspace(person, f"{JOINED_EMOJI} {LONG_WORD[:40]}")
    members = page.locator("section.members")
    members.get_by_label("Email of the new member").fill(member.email(member_subject))
    members.get_by_role("button", name="Add member").click()
    expect(members.locator(f'tr[data-user-id="{member_id}"]')).to_be_visible()
    found["members"] = axe_violations(person)
    person.screenshot(f"axe-{width}-members")
    members.get_by_label("Email of the new member").fill("nobody@example.test")
    members.get_by_role("button", name="Add member").click()
    expect(members.get_by_role("alert")).to_be_visible()
    found["add member refused"] = axe_violations(person)
    members.locator(f'tr[data-user-id="{member_id}"]').get_by_role("button", name="Remove").click()
    found["remove confirmation"] = axe_violations(person)
    person.screenshot(f"axe-{width}-remove-member")
    page.get_by_role("alertdialog").get_by_role("button", name="Cancel").click()

    token = person.access_token()
    key = stack.call(
        "POST", "/v1/auth/api-keys", token,
        body={"label": LONG_WORD[:100], "category": "workspace", "workspaceId": workspace_id},
    ).json()
    rotate = f"/v1/auth/api-keys/{key['id']}/rotate"
    stack.call("POST", rotate, token, body={"gracePeriodSeconds": 60})
    page.get_by_role("link", name="API keys").click()
    expect(page.locator("tr[data-key-id]")).to_have_count(2)
    found["keys, rotated pair"] = axe_violations(person)
    person.screenshot(f"axe-{width}-keys")
    page.get_by_label("Search").fill("nothing like it")
    expect(page.get_by_text("No keys match")).to_be_visible()  # the service's answer
    found["keys, no match"] = axe_violations(person)
    page.get_by_label("Search").fill("")
    expect(page.locator("tr[data-key-id]")).to_have_count(2)
    page.locator("tr[data-key-id]").first.get_by_role("button", name="Rotate").click()
    found["rotate dialog"] = axe_violations(person)
    person.screenshot(f"axe-{width}-rotate-dialog")
    page.get_by_role("dialog").get_by_role("button", name="Cancel").click()
    page.locator("tr[data-key-id]").first.get_by_role("button", name="Edit").click()
    found["rename dialog"] = axe_violations(person)
    person.screenshot(f"axe-{width}-rename-dialog")
    page.get_by_role("dialog").get_by_role("button", name="Cancel").click()
    page.get_by_role("link", name="Activity").click()
    expect(page.locator("tr[data-event-type]").first).to_be_visible()
    found["activity"] = axe_violations(person)
    person.screenshot(f"axe-{width}-activity-people")
    page.get_by_label("Event").select_option("member.added")
    expect(page.locator("tr[data-event-type]")).to_have_count(1)
    found["activity, filtered"] = axe_violations(person)
    print(f"axe-core, {width}: {len(found)} screens, findings: {found}")

    assert {screen: v for screen, v in found.items() if v} == {}
