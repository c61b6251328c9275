"""Webhooks in a real browser at 1280 and 390 px: the owner adds one (its signing secret shown
once, and real deliveries verify with it), edits, disables and enables it, rotates its secret
(the old one keeps signing for 24 hours), deletes it after a confirmation; its deliveries made
by the local stack's worker to a receiver on loopback are listed, and a failed one is retried
and delivered; the empty, error, outage and answer-budget states offer to try again; a member
is told why they see none; axe-core with zero findings on every state and dialog."""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from playwright.sync_api import Locator, Route, expect

from tests.browser.conftest import Person, Stack
from tests.browser.test_keys import create_workspace
from tests.browser.test_page import axe_violations
from tests.browser.test_people import WIDTHS, a_member_of, no_sideways_scroll, open_section, unique
from tests.browser.test_sessions import answer

WEBHOOKS = re.compile(r".*/v1/workspaces/[^/]+/webhooks$")
DELIVERIES = re.compile(r".*/v1/workspaces/[^/]+/webhooks/[^/]+/deliveries$")
SECRET_PREFIX = "wh" "sec_"
OUTAGE = {"code": "dependency_unavailable", "status": 503,
          "detail": "A dependency is unavailable; retry later."}
# A delivery waits about 5 s for its first retry on the local stack: what the worker does is
# waited for on the page (the list follows a delivery that is due), never slept for.
WORKER = 30_000


class Receiver:
    """A webhook receiver on loopback: answers each POST with the next of `statuses` (200
    once they run out) and keeps what it was sent; `wait_for` waits on its arrivals."""

    def __init__(self, statuses: list[int]):
        self.statuses = statuses
        self.received: list[tuple[dict[str, str], bytes]] = []
        self.arrived = threading.Condition()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                self.send_response(outer.statuses.pop(0) if outer.statuses else 200)
                self.end_headers()
                with outer.arrived:
                    outer.received.append(({k.lower(): v for k, v in self.headers.items()}, body))
                    outer.arrived.notify_all()

            def log_message(self, *_: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"

    def wait_for(self, count: int) -> list[tuple[dict[str, str], bytes]]:
        with self.arrived:
            self.arrived.wait_for(lambda: len(self.received) >= count, timeout=WORKER / 1000)
            assert len(self.received) >= count, f"{len(self.received)} of {count} deliveries"
            return list(self.received)


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    receiver = Receiver([])
    thread = threading.Thread(target=receiver.server.serve_forever, daemon=True)
    thread.start()
    yield receiver
    receiver.server.shutdown()
    receiver.server.server_close()


def open_webhooks(person: Person) -> Locator:
    """Shows the Webhooks section; answers its rows once they are listed."""
    open_section(person, "Webhooks")
    return person.page.locator("tr[data-webhook-id]")


def an_owner(people: Any, name: str, width: str, workspace_name: str) -> tuple[Person, str]:
    """A person signed in at `width` with a workspace of their own; answers them and its id."""
    person: Person = people(name, viewport=WIDTHS[width])
    person.sign_in(unique(name))
    return person, create_workspace(person, workspace_name)


def add_webhook(stack: Stack, person: Person, workspace: str, url: str, **more: Any) -> Any:
    body = {"url": url, "events": ["key.created"], **more}
    made = stack.call("POST", f"/v1/workspaces/{workspace}/webhooks", person.access_token(),
                      body=body)
    assert made.status_code == 201, made.text
    return made.json()


def listed(stack: Stack, person: Person, workspace: str) -> list[dict[str, Any]]:
    found = stack.call("GET", f"/v1/workspaces/{workspace}/webhooks", person.access_token())
    assert found.status_code == 200, found.text
    return list(found.json()["webhooks"])


def make_key(stack: Stack, person: Person, workspace: str, label: str) -> None:
    made = stack.call("POST", "/v1/auth/api-keys", person.access_token(),
                      body={"label": label, "category": "workspace", "workspaceId": workspace})
    assert made.status_code == 201, made.text


def verifies(secret: str, headers: dict[str, str], body: bytes) -> bool:
    """Standard Webhooks: v1, base64 HMAC-SHA256 of id.timestamp.body under the secret."""
    key = base64.b64decode(secret.removeprefix(SECRET_PREFIX))
    signed = f"{headers['webhook-id']}.{headers['webhook-timestamp']}.".encode() + body
    expected = "v1," + base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()
    return any(hmac.compare_digest(s, expected) for s in headers["webhook-signature"].split())


def copy_signing_secret(person: Person, title: str) -> str:
    """Copies the secret from its one-time dialog, closes it (confirming); returns it."""
    page = person.page
    dialog = person.dialog(title)
    expect(dialog).to_contain_text("You will not see it again.")
    field = dialog.get_by_label("Signing secret")
    expect(field).to_be_focused()
    dialog.get_by_role("button", name="Copy").click()
    expect(dialog.get_by_role("status")).to_have_text("Copied to the clipboard.")
    copied = str(page.evaluate("() => navigator.clipboard.readText()"))
    assert copied == field.input_value() and copied.startswith(SECRET_PREFIX)
    dialog.get_by_role("button", name="Done").click()
    confirm = page.get_by_role("alertdialog", name="Close without the signing secret?")
    confirm.get_by_role("button", name="Yes, close").click()
    expect(page.locator("input.secret")).to_have_count(0)
    return copied


@pytest.mark.parametrize("width", ["desktop", "phone"])
def test_adding_a_webhook_shows_its_secret_once_and_lists_it_and_deliveries_verify_with_it(
    people, stack: Stack, receiver: Receiver, width: str
) -> None:
    person: Person = people(f"webhooks-add-{width}", viewport=WIDTHS[width])
    person.sign_in(unique("hooks"))
    page = person.page
    open_webhooks(person)
    expect(page.get_by_role("heading", name="No workspace of yours")).to_be_visible()
    workspace = create_workspace(person, "Hooks")
    rows = open_webhooks(person)
    expect(page.get_by_role("heading", name="No webhooks yet")).to_be_visible()
    person.screenshot(f"webhooks-empty-{width}")

    page.get_by_role("button", name="Add webhook").click()
    dialog = person.dialog("Add a webhook to Hooks")
    expect(dialog.get_by_label("URL")).to_be_focused()
    dialog.get_by_label("URL").fill("https://10.0.0.1/hook")
    dialog.get_by_role("button", name="Add webhook").click()
    expect(dialog.get_by_role("alert")).to_contain_text("The URL must be an https URL")
    dialog.get_by_label("URL").fill(receiver.url)
    dialog.get_by_label("Description (optional)").fill("alerts to the team")
    dialog.get_by_label("Only the types chosen below").check()
    dialog.get_by_role("button", name="Add webhook").click()
    expect(dialog.get_by_role("alert")).to_contain_text("Choose at least one event type")
    dialog.get_by_label("Key created").check()
    no_sideways_scroll(person)
    person.screenshot(f"webhooks-add-dialog-{width}")
    dialog.get_by_role("button", name="Add webhook").click()

    secret = person.dialog("The webhook's signing secret")
    expect(secret).to_contain_text(f"Deliveries to {receiver.url} are signed with this secret")
    person.screenshot(f"webhooks-secret-{width}")
    shown = copy_signing_secret(person, "The webhook's signing secret")

    expect(rows).to_have_count(1)
    expect(page.locator("main table")).to_be_focused()
    expect(rows.locator("th")).to_have_text(receiver.url)
    expect(rows.locator('td[data-label="Description"]')).to_have_text("alerts to the team")
    expect(rows.locator('td[data-label="Events"]')).to_have_text("Key created")
    expect(rows.locator('td[data-label="Status"]')).to_have_text("Enabled")
    (webhook,) = listed(stack, person, workspace)
    assert rows.get_attribute("data-webhook-id") == webhook["id"]
    assert (webhook["url"], webhook["events"], "secret" in webhook) == (
        receiver.url, ["key.created"], False
    )
    # Shown once: nothing on the page holds it any longer, and it is the one that signs.
    assert shown not in page.content()
    make_key(stack, person, workspace, "hooked")
    ((headers, body),) = receiver.wait_for(1)
    assert verifies(shown, headers, body)
    no_sideways_scroll(person)
    person.screenshot(f"webhooks-list-{width}")
    assert person.csp_violations() == []


@pytest.mark.parametrize("width", ["desktop", "phone"])
def test_a_webhook_is_edited_disabled_enabled_and_its_secret_rotated_then_deleted(
    people, stack: Stack, width: str
) -> None:
    person, workspace = an_owner(people, f"webhooks-manage-{width}", width, "Managed")
    page = person.page
    made = add_webhook(stack, person, workspace, "https://hooks.example.com/memory")
    rows = open_webhooks(person)
    expect(rows).to_have_count(1)
    row = rows.first

    row.get_by_role("button", name="Edit webhook https://hooks.example.com/memory").click()
    dialog = person.dialog("Edit webhook https://hooks.example.com/memory")
    expect(dialog.get_by_label("Key created")).to_be_checked()
    dialog.get_by_role("button", name="Save changes").click()
    expect(dialog.get_by_role("alert")).to_have_text("Nothing to change.")
    dialog.get_by_label("URL").fill("https://hooks.example.com/v2")
    dialog.get_by_label("Every event, also types added later").check()
    dialog.get_by_role("button", name="Save changes").click()
    expect(row.locator("th")).to_have_text("https://hooks.example.com/v2")
    expect(row.locator('td[data-label="Events"]')).to_have_text("Every event")
    expect(row.get_by_role("button", name="Edit")).to_be_focused()
    assert [(w["url"], w["events"]) for w in listed(stack, person, workspace)] == [
        ("https://hooks.example.com/v2", ["*"])
    ]

    row.get_by_role("button", name="Disable").click()
    confirm = page.get_by_role("alertdialog", name=re.compile("^Disable webhook"))
    expect(confirm).to_contain_text("Nothing more is delivered to it")
    expect(confirm.get_by_role("button", name="Cancel")).to_be_focused()
    person.screenshot(f"webhooks-disable-confirmation-{width}")
    confirm.get_by_role("button", name="Disable webhook").click()
    expect(row.locator('td[data-label="Status"]')).to_contain_text("Disabled")
    expect(row.get_by_role("button", name="Enable")).to_be_focused()
    assert listed(stack, person, workspace)[0]["enabled"] is False
    row.get_by_role("button", name="Enable").click()
    expect(row.locator('td[data-label="Status"]')).to_contain_text("Enabled")
    expect(row.get_by_role("button", name="Disable")).to_be_focused()
    assert listed(stack, person, workspace)[0]["enabled"] is True

    row.get_by_role("button", name="Rotate secret").click()
    confirm = page.get_by_role("alertdialog", name=re.compile("^Rotate the signing secret"))
    expect(confirm).to_contain_text("keeps working beside it for 24 hours")
    confirm.get_by_role("button", name="Rotate secret").click()
    secret = person.dialog("The webhook's new signing secret")
    expect(secret).to_contain_text("The old secret keeps working for 24 hours (until ")
    person.screenshot(f"webhooks-rotated-{width}")
    rotated = copy_signing_secret(person, "The webhook's new signing secret")
    assert not hmac.compare_digest(rotated, made["secret"])
    expect(row.locator('td[data-label="Status"]')).to_contain_text("The old secret signs too until")
    expect(row.get_by_role("button", name="Rotate secret")).to_be_focused()
    assert listed(stack, person, workspace)[0]["previousSecretExpiresAt"] is not None
    no_sideways_scroll(person)

    row.get_by_role("button", name="Delete").click()
    confirm = page.get_by_role("alertdialog", name=re.compile("^Delete webhook"))
    confirm.get_by_role("button", name="Cancel").click()
    expect(rows).to_have_count(1)
    row.get_by_role("button", name="Delete").click()
    confirm.get_by_role("button", name="Delete webhook").click()
    expect(page.get_by_role("heading", name="No webhooks yet")).to_be_visible()
    assert listed(stack, person, workspace) == []

    page.get_by_role("link", name="Activity").click()
    activity = page.locator("main")
    for said in ("Webhook added", "Webhook changed", "Webhook signing secret rotated",
                 "Webhook deleted"):
        expect(activity).to_contain_text(said)
    assert person.csp_violations() == []


@pytest.mark.parametrize("width", ["desktop", "phone"])
def test_deliveries_are_listed_and_a_failed_one_is_retried_and_delivered(
    people, stack: Stack, receiver: Receiver, width: str
) -> None:
    person, workspace = an_owner(people, f"webhooks-deliveries-{width}", width, "Delivered")
    page = person.page
    receiver.statuses.append(500)  # the first delivery is refused, the rest taken
    add_webhook(stack, person, workspace, receiver.url)
    rows = open_webhooks(person)
    row = rows.first
    make_key(stack, person, workspace, "first event")
    receiver.wait_for(1)  # answered 500: due again in about 5 s

    row.get_by_role("button", name="Deliveries").click()
    dialog = person.dialog(f"Deliveries to {receiver.url}")
    delivery = dialog.locator("tr[data-delivery-id]")
    expect(delivery).to_have_count(1)
    expect(delivery.locator("th")).to_have_text("Key created")
    expect(delivery.locator('td[data-label="Last response"]')).to_have_text("500")
    expect(delivery.locator('td[data-label="Attempts"]')).to_have_text("1")
    expect(delivery).to_have_attribute("data-state", "pending")
    expect(delivery.get_by_role("button", name=re.compile("^Retry"))).to_have_count(0)
    person.screenshot(f"webhooks-deliveries-pending-{width}")
    dialog.get_by_role("button", name="Close").click()
    expect(row.get_by_role("button", name="Deliveries")).to_be_focused()
    page.get_by_role("link", name="API keys").click()
    expect(open_webhooks(person).first.locator('td[data-label="Status"]')).to_contain_text(
        "Failing since"
    )

    # Disabled, the delivery's next attempt fails without a POST.
    row.get_by_role("button", name="Disable").click()
    page.get_by_role("alertdialog").get_by_role("button", name="Disable webhook").click()
    expect(row.locator('td[data-label="Status"]')).to_contain_text("Disabled")
    row.get_by_role("button", name="Deliveries").click()
    expect(delivery).to_have_attribute("data-state", "failed", timeout=WORKER)
    expect(delivery.locator('td[data-label="Status"]')).to_have_text("Failed")
    dialog.get_by_role("button", name="Close").click()

    row.get_by_role("button", name="Enable").click()
    expect(row.locator('td[data-label="Status"]')).to_have_text("Enabled")
    row.get_by_role("button", name="Deliveries").click()
    retry = delivery.get_by_role("button", name=re.compile("^Retry the delivery of Key created"))
    no_sideways_scroll(person)
    person.screenshot(f"webhooks-deliveries-failed-{width}")
    retry.click()
    expect(delivery).to_have_attribute("data-state", "delivered", timeout=WORKER)
    expect(delivery.locator('td[data-label="Last response"]')).to_have_text("200")
    expect(delivery.get_by_role("button")).to_have_count(0)
    (first_headers, first_body), (headers, body) = receiver.wait_for(2)
    assert (headers["webhook-id"], body) == (first_headers["webhook-id"], first_body)
    hook_id = row.get_attribute("data-webhook-id")
    found = stack.call(
        "GET", f"/v1/workspaces/{workspace}/webhooks/{hook_id}/deliveries", person.access_token()
    ).json()["deliveries"]
    assert [(d["state"], d["lastStatusCode"]) for d in found] == [("delivered", 200)]
    expect(delivery.locator('td[data-label="Attempts"]')).to_have_text(str(found[0]["attempts"]))
    person.screenshot(f"webhooks-deliveries-retried-{width}")
    assert person.csp_violations() == []


@pytest.mark.parametrize("width", ["desktop", "phone"])
def test_the_empty_error_outage_and_budget_states_say_what_happened_and_offer_a_retry(
    people, stack: Stack, width: str
) -> None:
    person: Person = people(f"webhooks-states-{width}", viewport=WIDTHS[width])
    page = person.page
    page.clock.install()
    person.sign_in(unique("states"))
    workspace = create_workspace(person, "States")
    alert = page.locator("main").get_by_role("alert")

    page.route(WEBHOOKS, answer(500, {"code": "internal_error", "status": 500}))
    open_webhooks(person)
    expect(alert).to_contain_text("Something went wrong on our side.")
    expect(page.get_by_role("button", name="Add webhook")).to_have_count(0)
    person.screenshot(f"webhooks-error-{width}")
    page.unroute(WEBHOOKS)
    alert.get_by_role("button", name="Try again").click()
    expect(page.get_by_role("heading", name="No webhooks yet")).to_be_visible()
    expect(page.get_by_role("button", name="Add webhook")).to_be_visible()

    page.route(WEBHOOKS, answer(503, OUTAGE))
    page.get_by_role("link", name="API keys").click()
    open_webhooks(person)
    expect(alert).to_contain_text("The service is having trouble right now.")
    person.screenshot(f"webhooks-outage-{width}")
    page.unroute(WEBHOOKS)

    # No answer: given up after the answer budget (10 s on the page's clock), with Try again.
    held: list[Route] = []

    def hold(route: Route) -> None:
        held.append(route)

    page.route(WEBHOOKS, hold)
    alert.get_by_role("button", name="Try again").click()
    expect(page.locator("#progress")).to_be_visible()
    page.clock.run_for(10_000)
    expect(alert).to_contain_text("did not answer in time")
    assert held
    page.unroute(WEBHOOKS)
    alert.get_by_role("button", name="Try again").click()
    expect(page.get_by_role("heading", name="No webhooks yet")).to_be_visible()

    # The deliveries' own outage, in their dialog.
    add_webhook(stack, person, workspace, "https://hooks.example.com/memory")
    page.get_by_role("link", name="API keys").click()
    rows = open_webhooks(person)
    page.route(DELIVERIES, answer(503, OUTAGE))
    rows.first.get_by_role("button", name="Deliveries").click()
    dialog = person.dialog("Deliveries to https://hooks.example.com/memory")
    expect(dialog.get_by_role("alert")).to_contain_text("The service is having trouble right now.")
    page.unroute(DELIVERIES)
    dialog.get_by_role("button", name="Try again").click()
    expect(dialog).to_contain_text("No deliveries yet.")
    assert person.csp_violations() == []


def test_a_member_sees_why_they_cannot_manage_webhooks(people, stack: Stack) -> None:
    member, workspace = a_member_of(people, "Shared hooks", "webhooks")
    page = member.page
    open_webhooks(member)

    expect(
        page.get_by_role("heading", name="Only the owner of Shared hooks manages its webhooks")
    ).to_be_visible()
    expect(page.get_by_role("button", name="Add webhook")).to_have_count(0)
    refused = stack.call("GET", f"/v1/workspaces/{workspace}/webhooks", member.access_token())
    assert (refused.status_code, refused.json()["code"]) == (403, "owner_required")
    member.screenshot("webhooks-member-not-owner")


@pytest.mark.parametrize("width", ["desktop", "phone"])
def test_no_accessibility_findings_on_the_webhooks_section(
    people, stack: Stack, receiver: Receiver, width: str
) -> None:
    person: Person = people(f"webhooks-axe-{width}", viewport=WIDTHS[width], bypass_csp=True)
    person.sign_in(unique("axe-hooks"), name="Ada Lovelace")
    page = person.page
    found: dict[str, list[dict[str, Any]]] = {}

    open_webhooks(person)
    found["no workspace"] = axe_violations(person)
    workspace = create_workspace(person, "Hooks")
    open_webhooks(person)
    expect(page.get_by_role("heading", name="No webhooks yet")).to_be_visible()
    found["empty"] = axe_violations(person)
    page.get_by_role("button", name="Add webhook").click()
    dialog = person.dialog("Add a webhook to Hooks")
    dialog.get_by_label("Only the types chosen below").check()
    found["add dialog"] = axe_violations(person)
    dialog.get_by_label("URL").fill(receiver.url)
    dialog.get_by_label("Key created").check()
    dialog.get_by_role("button", name="Add webhook").click()
    expect(person.dialog("The webhook's signing secret")).to_be_visible()
    found["secret dialog"] = axe_violations(person)
    copy_signing_secret(person, "The webhook's signing secret")
    rows = page.locator("tr[data-webhook-id]")
    expect(rows).to_have_count(1)
    found["list"] = axe_violations(person)
    make_key(stack, person, workspace, "axe")
    receiver.wait_for(1)
    rows.get_by_role("button", name="Deliveries").click()
    deliveries = person.dialog(f"Deliveries to {receiver.url}")
    expect(deliveries.locator("tr[data-delivery-id]")).to_have_attribute(
        "data-state", "delivered", timeout=WORKER
    )
    found["deliveries"] = axe_violations(person)
    deliveries.get_by_role("button", name="Close").click()
    rows.get_by_role("button", name="Rotate secret").click()
    found["rotate confirmation"] = axe_violations(person)
    page.get_by_role("alertdialog").get_by_role("button", name="Cancel").click()
    rows.get_by_role("button", name="Delete").click()
    found["delete confirmation"] = axe_violations(person)
    page.get_by_role("alertdialog").get_by_role("button", name="Cancel").click()
    page.route(WEBHOOKS, answer(503, OUTAGE))
    page.get_by_role("link", name="API keys").click()
    page.get_by_role("link", name="Webhooks").click()
    expect(page.locator("main").get_by_role("button", name="Try again")).to_be_visible()
    found["outage"] = axe_violations(person)
    print(f"axe-core, {width}: {len(found)} screens, findings: {found}")

    assert {screen: v for screen, v in found.items() if v} == {}
