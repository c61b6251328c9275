"""What people trying the dashboard met (issue 39): Activity in words for every event type
with its subject's name, outages that offer to try again, a removed member's tab, names with
joiners, the focus after creating a workspace, and the cosmetic frictions; each at both
widths with axe-core's zero findings, and the built size the docs state."""

from __future__ import annotations

import re
import secrets
import subprocess

import pytest
from playwright.sync_api import Route, expect

from chalicelib.dashboard import assets
from chalicelib.events.model import TYPES
from tests.browser.conftest import DESKTOP, PHONE, PROJECT_DIR, Person, Stack
from tests.browser.test_keys import create_workspace
from tests.browser.test_page import axe_violations
from tests.workload_issuer import AUDIENCE, GITHUB

WIDTHS = {"desktop": DESKTOP, "phone": PHONE}
HAL = "Hal \U0001f469\u200d\U0001f4bb"
PARISA = "\u067e\u0631\u06cc\u0633\u0627 \u0646\u06cc\u06a9\u200c\u0646\u0627\u0645"


def unique(prefix: str) -> str:
    return f"{prefix}-{secrets.token_hex(3)}"


def no_sideways_scroll(person: Person) -> None:
    width = person.page.evaluate("() => document.documentElement.scrollWidth")
    viewport = person.page.viewport_size
    assert viewport is not None
    assert width <= viewport["width"]


@pytest.mark.parametrize("width", ["desktop", "phone"])
def test_activity_names_trust_policy_events_with_the_policys_name_and_filters_every_type(
    people, stack: Stack, width: str
) -> None:
    person: Person = people(f"polish-activity-{width}", viewport=WIDTHS[width], bypass_csp=True)
    person.sign_in(unique("act"))
    workspace = create_workspace(person, "Polish")
    token = person.access_token()
    body = {
        "name": "agents CI",
        "issuer": GITHUB,
        "audience": AUDIENCE,
        "subject": "repo:acme/agents:ref:refs/heads/main",
        "scopes": ["memory"],
    }
    created = stack.call("POST", f"/v1/workspaces/{workspace}/trust-policies", token, body=body)
    assert created.status_code == 201, created.text
    policy = created.json()["id"]
    deleted = stack.call("DELETE", f"/v1/workspaces/{workspace}/trust-policies/{policy}", token)
    assert deleted.status_code == 204
    key = stack.call(
        "POST", "/v1/auth/api-keys", token,
        body={"label": "patched", "category": "workspace", "workspaceId": workspace},
    ).json()
    patched = stack.call(
        "PATCH", f"/v1/auth/api-keys/{key['id']}", token, body={"allowedCidrs": ["10.0.0.0/8"]}
    )
    assert patched.status_code == 200, patched.text
    page = person.page
    page.get_by_role("link", name="Activity").click()

    made = page.locator('tr[data-event-type="trust_policy.created"]')
    expect(made).to_contain_text("Trust policy created")
    expect(made).to_contain_text(
        "trust policy “agents CI”, for repo:acme/agents:ref:refs/heads/main"
    )
    expect(page.locator('tr[data-event-type="trust_policy.deleted"]')).to_contain_text(
        "Trust policy deleted"
    )
    expect(page.locator('tr[data-event-type="key.updated"]')).to_contain_text(
        "changed: allowed addresses"
    )
    expect(page.locator("main table")).not_to_contain_text("trust_policy")
    expect(page.locator("main table")).not_to_contain_text("allowedCidrs")
    options = page.locator("#event-type option").evaluate_all("(os) => os.map((o) => o.value)")
    assert set(options) == {"", *TYPES}
    labels = page.locator("#event-type option").all_inner_texts()
    assert not [label for label in labels if re.search(r"[._]", label)], labels
    page.get_by_label("Event").select_option("trust_policy.deleted")
    expect(page.locator("tr[data-event-type]")).to_have_count(1)
    no_sideways_scroll(person)
    assert axe_violations(person) == []
    person.screenshot(f"polish-activity-{width}")


def test_activity_asks_for_its_events_without_waiting_for_the_key_labels(
    people, stack: Stack
) -> None:
    person: Person = people("polish-activity-budget")
    page = person.page
    # The page's clock stands still from here: no answer budget runs out, so the events are
    # asked for only if Activity does not wait for the key list (one budget, not two).
    page.clock.install()
    person.sign_in()
    page.clock.pause_at(page.evaluate("() => Date.now()") + 1_000)
    held: list[Route] = []

    def hold(route: Route) -> None:
        held.append(route)

    page.route(re.compile(r".*/v1/auth/api-keys\?.*"), hold)

    with page.expect_request(re.compile(r".*/v1/auth/events.*")):
        page.get_by_role("link", name="Activity").click()

    assert held, "the key list was asked for, and is still unanswered"
    page.unroute(re.compile(r".*/v1/auth/api-keys\?.*"))


@pytest.mark.parametrize("width", ["desktop", "phone"])
def test_workspaces_that_fail_to_load_offer_to_try_again(
    people, stack: Stack, width: str
) -> None:
    person: Person = people(f"polish-outage-{width}", viewport=WIDTHS[width], bypass_csp=True)
    person.sign_in()
    page = person.page
    outage = re.compile(r".*/v1/workspaces$")
    page.route(
        outage,
        lambda route: route.fulfill(
            status=503,
            content_type="application/problem+json",
            body='{"status":503,"code":"dependency_unavailable","error":"dependency_unavailable",'
            '"detail":"A dependency is unavailable; retry later.","title":"Service Unavailable"}',
        ),
    )
    page.get_by_role("link", name="Workspaces", exact=True).click()
    alert = page.locator("main").get_by_role("alert").filter(has_text="try again")
    expect(alert).to_be_visible()
    assert axe_violations(person) == []
    person.screenshot(f"polish-outage-{width}")
    page.unroute(outage)
    alert.get_by_role("button", name="Try again").click()
    expect(page.get_by_role("heading", name="No workspaces yet")).to_be_visible()


def test_a_removed_members_tab_drops_the_workspace_and_its_actions(
    people, stack: Stack
) -> None:
    owner: Person = people("polish-owner")
    owner.sign_in(unique("owner"))
    member: Person = people("polish-member")
    member_subject = unique("member")
    member_id = member.sign_in(member_subject)
    shared = create_workspace(owner, "Shared")
    added = stack.call(
        "PUT", f"/v1/workspaces/{shared}/members/{member.email(member_subject)}",
        owner.access_token(),
    )
    assert added.status_code in (200, 201), added.text
    page = member.page
    page.get_by_role("link", name="Workspaces", exact=True).click()
    switcher = page.get_by_label("Workspace", exact=True)
    expect(switcher.locator(f'option[value="{shared}"]')).to_have_count(1)
    switcher.select_option(shared)
    expect(page.get_by_role("button", name="Members of Shared")).to_be_visible()

    removed = stack.call(
        "DELETE", f"/v1/workspaces/{shared}/members/{member_id}",
        owner.access_token(),
    )
    assert removed.status_code == 204, removed.text
    page.get_by_role("button", name="Members of Shared").click()

    expect(switcher.locator(f'option[value="{shared}"]')).to_have_count(0)
    expect(page.get_by_role("button", name="Members of Shared")).to_have_count(0)
    expect(switcher).to_have_value("")


@pytest.mark.parametrize("name", [HAL, PARISA])
def test_a_name_with_joiners_from_the_id_token_is_shown_not_the_email(
    people, stack: Stack, name: str
) -> None:
    person: Person = people("polish-joiners")
    person.sign_in(unique("joiner"), name=name)
    expect(person.page.locator("#who-name")).to_have_text(name)


@pytest.mark.parametrize("width", ["desktop", "phone"])
def test_creating_a_workspace_keeps_the_focus_off_the_body(
    people, stack: Stack, width: str
) -> None:
    person: Person = people(f"polish-focus-{width}", viewport=WIDTHS[width], bypass_csp=True)
    person.sign_in(unique("focus"))
    page = person.page
    page.get_by_role("link", name="Create a workspace").click()

    name = page.get_by_label("New workspace name")
    expect(name).to_be_focused()
    name.fill("   ")
    page.get_by_role("button", name="Create workspace").click()
    expect(name).to_have_attribute("aria-invalid", "true")
    expect(page.locator("main").get_by_role("alert")).to_be_in_viewport()
    assert axe_violations(person) == []
    name.fill("Focus")
    name.press("Enter")

    expect(page.get_by_role("heading", name="Members of Focus")).to_be_focused()
    assert page.evaluate("() => document.activeElement !== document.body")
    assert axe_violations(person) == []
    person.screenshot(f"polish-focus-{width}")


@pytest.mark.parametrize("width", ["desktop", "phone"])
def test_the_switcher_tells_same_names_apart_and_keeps_its_choice_on_reload(
    people, stack: Stack, width: str
) -> None:
    person: Person = people(f"polish-switcher-{width}", viewport=WIDTHS[width], bypass_csp=True)
    person.sign_in(unique("switch"))
    first = create_workspace(person, "Twin")
    token = person.access_token()
    second = stack.call("POST", "/v1/workspaces", token, body={"name": "Twin"}).json()["id"]
    page = person.page
    page.reload()
    switcher = page.get_by_label("Workspace", exact=True)
    expect(switcher.locator(f'option[value="{first}"]')).to_have_text(f"Twin ({first})")
    expect(switcher.locator(f'option[value="{second}"]')).to_have_text(f"Twin ({second})")
    expect(switcher).to_have_value(first)  # create_workspace chose it; the reload kept it
    switcher.select_option(second)
    page.reload()
    expect(page.get_by_label("Workspace", exact=True)).to_have_value(second)
    no_sideways_scroll(person)
    assert axe_violations(person) == []


@pytest.mark.parametrize("width", ["desktop", "phone"])
def test_adding_a_member_is_confirmed_on_the_page(people, stack: Stack, width: str) -> None:
    friend: Person = people(f"polish-friend-{width}")
    friend_subject = unique("friend")
    friend.sign_in(friend_subject, name="Friend Person")
    person: Person = people(f"polish-adder-{width}", viewport=WIDTHS[width], bypass_csp=True)
    person.sign_in(unique("adder"))
    create_workspace(person, "Team")
    page = person.page
    page.get_by_label("Email of the new member").fill(friend.email(friend_subject))
    page.get_by_role("button", name="Add member").click()

    confirmation = page.locator("p.added")
    expect(confirmation).to_have_text("Friend Person was added to Team.")
    expect(confirmation).to_be_visible()
    assert axe_violations(person) == []
    person.screenshot(f"polish-member-added-{width}")


@pytest.mark.parametrize("width", ["desktop", "phone"])
def test_a_fresh_seven_day_key_is_not_expiring_soon_and_a_short_word_stays_whole(
    people, stack: Stack, width: str
) -> None:
    person: Person = people(f"polish-keys-{width}", viewport=WIDTHS[width], bypass_csp=True)
    person.sign_in(unique("keys"))
    workspace = create_workspace(person, "Keys")
    label = "Ångström Ångström Ångström Ångström Ångström"
    made = person.stack.call(
        "POST", "/v1/auth/api-keys", person.access_token(),
        body={"label": label, "category": "workspace", "workspaceId": workspace,
              "expiresInDays": 7},
    )
    assert made.status_code == 201, made.text
    page = person.page
    page.get_by_role("link", name="API keys").click()
    row = page.locator("tr", has_text="Ångström")
    expect(row).to_be_visible()
    expect(row.locator(".badge.soon")).to_have_count(0)
    words = row.locator(".word").evaluate_all(
        "(ws) => ws.map((w) => { const r = document.createRange(); r.selectNodeContents(w);"
        " return new Set([...r.getClientRects()].map((b) => Math.round(b.top))).size; })"
    )
    assert words and set(words) == {1}, words  # each word on one line: never broken
    page.get_by_label("Workspace", exact=True).select_option("")
    page.get_by_label("Status").select_option("expired")
    expect(page.get_by_text("No expired keys in any workspace.")).to_be_visible()
    no_sideways_scroll(person)
    assert axe_violations(person) == []


@pytest.mark.parametrize("width", ["desktop", "phone"])
def test_a_trust_subject_wraps_only_at_its_separators(
    people, stack: Stack, width: str
) -> None:
    person: Person = people(f"polish-subject-{width}", viewport=WIDTHS[width], bypass_csp=True)
    person.sign_in(unique("subject"))
    workspace = create_workspace(person, "Subjects")
    subject = "repo:acme-corporation/agents-of-the-memory-service:environment:production-east"
    made = stack.call(
        "POST", f"/v1/workspaces/{workspace}/trust-policies", person.access_token(),
        body={"name": "long", "issuer": GITHUB, "audience": AUDIENCE, "subject": subject,
              "scopes": ["memory"]},
    )
    assert made.status_code == 201, made.text
    page = person.page
    page.get_by_role("link", name="Trust policies").click()
    code = page.locator("code.token")
    expect(code).to_have_text(subject)
    # The subject is laid out in its parts (each ends at a separator): none is broken.
    parts = code.evaluate(
        "(c) => [...c.childNodes].filter((n) => n.nodeName !== 'WBR').map((n) => {"
        " const r = document.createRange(); r.selectNodeContents(n);"
        " return [n.textContent, new Set([...r.getClientRects()]"
        ".map((b) => Math.round(b.top))).size]; })"
    )
    assert "".join(text for text, _ in parts) == subject
    assert all(lines == 1 for _, lines in parts), parts
    no_sideways_scroll(person)
    assert axe_violations(person) == []


def test_head_of_the_dashboard_is_200(stack: Stack) -> None:
    answer = stack.http.head("/dashboard/")
    assert (answer.status_code, answer.content) == (200, b"")


def test_the_built_size_in_the_docs_is_what_the_build_prints(stack: Stack) -> None:
    # Measured as dashboard/build.mjs does (Node's gzip at level 9: zlib builds differ).
    measured = subprocess.run(
        ["node", "-e", SIZES, str(assets.STATIC_DIR)], capture_output=True, text=True, check=True
    ).stdout.split()
    said = (PROJECT_DIR / "docs" / "guides" / "dashboard.md").read_text()
    stated = re.search(r"([\d.]+) kB in all,\s+([\d.]+) kB gzip", said)
    assert stated is not None
    assert list(stated.groups()) == measured, (
        "docs/guides/dashboard.md: set the sizes `make dashboard` prints"
    )


SIZES = """
const fs = require("node:fs"), path = require("node:path"), zlib = require("node:zlib");
const dir = process.argv[1];
let raw = 0, zipped = 0;
for (const name of fs.readdirSync(dir)) {
  const bytes = fs.readFileSync(path.join(dir, name));
  raw += bytes.length;
  zipped += zlib.gzipSync(bytes, { level: 9 }).length;
}
console.log((raw / 1024).toFixed(1), (zipped / 1024).toFixed(1));
"""
