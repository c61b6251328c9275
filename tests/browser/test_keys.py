"""A workspace key's whole life in the dashboard, checked against the service over HTTP:
create it, copy it from the one-time dialog, use it, rotate it, revoke it."""

from __future__ import annotations

import re
from typing import Any

from playwright.sync_api import Locator, expect

from tests.browser.conftest import Person, Stack


def create_workspace(person: Person, name: str) -> str:
    page = person.page
    page.get_by_role("link", name="Workspaces", exact=True).click()
    page.get_by_label("New workspace name").fill(name)
    page.get_by_role("button", name="Create workspace").click()
    expect(page.get_by_role("heading", name=f"Members of {name}")).to_be_visible()
    switcher = page.get_by_label("Workspace", exact=True)
    expect(switcher.locator("option:checked")).to_have_text(name)
    return switcher.input_value()


def copy_secret(person: Person, title: str, screenshot: str) -> str:
    """Copies the key from the one-time dialog and closes it (confirming); returns the key."""
    page = person.page
    secret = person.dialog(title)
    expect(secret).to_contain_text("You will not see it again.")
    field = secret.get_by_label("API key")
    secret.get_by_role("button", name="Copy").click()
    expect(secret.get_by_role("status")).to_have_text("Copied to the clipboard.")
    copied = str(page.evaluate("() => navigator.clipboard.readText()"))
    assert copied == field.input_value()
    assert copied.startswith("sv" + "c_")
    # The plaintext never goes into a screenshot: the field is masked.
    page.screenshot(path=str(person.screenshot_path(screenshot)), mask=[field])
    secret.get_by_role("button", name="Done").click()
    confirm = page.get_by_role("alertdialog", name="Close without the key?")
    expect(confirm).to_contain_text("You will not see this key again.")
    confirm.get_by_role("button", name="Yes, close").click()
    expect(secret).to_have_count(0)
    return copied


def key_row(person: Person, text: str) -> Locator:
    return person.page.locator("tr[data-key-id]").filter(has_text=text)


def hint_row(person: Person, tail: str) -> Locator:
    """The row whose own key column ends with `tail` (a rotated pair names each other's)."""
    hint = person.page.locator('td[data-label="Key"]', has_text=tail)
    return person.page.locator("tr[data-key-id]").filter(has=hint)


def test_create_copy_use_rotate_and_revoke_a_workspace_key(people, stack: Stack) -> None:
    owner: Person = people("browser-owner")
    owner.sign_in()
    page = owner.page
    workspace_id = create_workspace(owner, "Browser team")

    page.get_by_role("link", name="API keys").click()
    page.get_by_role("button", name="Create key", exact=True).click()
    create = owner.dialog("Create an API key")
    create.get_by_label("Label").fill("browser worker")
    expect(create.get_by_label("Workspace key")).to_be_checked()
    expect(create.get_by_label("Workspace", exact=True)).to_have_value(workspace_id)
    create.get_by_role("checkbox", name="skills").uncheck()
    owner.screenshot("key-create-dialog")
    create.get_by_role("button", name="Create key").click()
    key = copy_secret(owner, "Your new API key", "key-created-once")

    # The copied key works, bound to the workspace, with the scopes chosen.
    whoami = stack.call("GET", "/v1/auth/whoami", key)
    assert whoami.status_code == 200
    assert whoami.json()["workspaceId"] == workspace_id
    assert whoami.json()["scopes"] == ["memory", "entities", "reasoning", "ontology"]
    # Once the dialog is closed, the plaintext is gone from the page.
    assert key not in page.content()
    row = key_row(owner, "browser worker")
    expect(row).to_have_count(1)
    expect(row).to_contain_text(key[-4:])
    expect(row).to_contain_text("active")
    expect(row).to_contain_text("Browser team")
    owner.screenshot("keys-table")

    row.get_by_role("button", name="Rotate").click()
    rotate = owner.dialog(re.compile("^Rotate"))
    rotate.get_by_role("button", name="Rotate key").click()
    rotated = copy_secret(owner, "Your rotated API key", "key-rotated-once")

    assert rotated != key
    assert stack.call("GET", "/v1/auth/whoami", key).status_code == 401
    assert stack.call("GET", "/v1/auth/whoami", rotated).status_code == 200
    expect(hint_row(owner, key[-4:])).to_contain_text("revoked")

    current = hint_row(owner, rotated[-4:])
    current.get_by_role("button", name="Revoke").click()
    confirm = page.get_by_role("alertdialog", name=re.compile("^Revoke"))
    expect(confirm).to_contain_text("This cannot be undone.")
    confirm.get_by_role("button", name="Cancel").click()
    assert stack.call("GET", "/v1/auth/whoami", rotated).status_code == 200

    current.get_by_role("button", name="Revoke").click()
    page.get_by_role("alertdialog", name=re.compile("^Revoke")).get_by_role(
        "button", name="Revoke key"
    ).click()
    expect(hint_row(owner, rotated[-4:])).to_contain_text("revoked")
    refused = stack.call("GET", "/v1/auth/whoami", rotated)
    assert (refused.status_code, refused.json()["code"]) == (401, "revoked_credentials")

    page.get_by_label("Status").select_option("revoked")
    expect(page.locator("tr[data-key-id]")).to_have_count(2)
    page.get_by_label("Status").select_option("active")
    expect(page.get_by_text("No active keys in Browser team.")).to_be_visible()
    assert owner.storage("localStorage") == {}
    assert owner.csp_violations() == []
    owner.screenshot("keys-after-revoke")


def test_reveal_shows_the_key_again_and_rename_shows_what_the_service_answers(
    people, stack: Stack
) -> None:
    owner: Person = people("browser-renamer")
    owner.sign_in()
    page = owner.page
    page.get_by_role("button", name="Create an admin key").click()
    create = owner.dialog("Create an API key")
    expect(create.get_by_label("Admin key")).to_be_checked()
    create.get_by_label("Label").fill("ci deploys")
    create.get_by_role("button", name="Create key").click()
    key = copy_secret(owner, "Your new API key", "admin-key-created")

    row = key_row(owner, "ci deploys")
    row.get_by_role("button", name="Reveal").click()
    revealed = owner.dialog("Reveal API key")
    assert revealed.get_by_label("API key").input_value() == key
    revealed.get_by_role("button", name="Done").click()
    page.get_by_role("alertdialog").get_by_role("button", name="Yes, close").click()
    expect(revealed).to_have_count(0)

    # What the service answers a rename (a service without PATCH answers 405), asked
    # directly with the same user's token, decides what the dialog must show.
    token = owner.access_token()
    key_id = row.get_attribute("data-key-id")
    probe = stack.call("PATCH", f"/v1/auth/api-keys/{key_id}", token, body={"label": "ci deploys"})
    row.get_by_role("button", name="Edit").click()
    rename = owner.dialog(re.compile("^Edit"))
    rename.get_by_label("Label").fill("ci deploys (prod)")
    rename.get_by_role("button", name="Save").click()
    if probe.status_code == 200:
        expect(key_row(owner, "ci deploys (prod)")).to_have_count(1)
    else:
        expect(rename.get_by_role("alert")).to_have_text(probe.json()["detail"])
        owner.screenshot("rename-refused-with-detail")
        rename.get_by_role("button", name="Cancel").click()
    assert owner.csp_violations() == []


def test_the_table_pages_through_many_keys(people, stack: Stack) -> None:
    owner: Person = people("browser-many-keys")
    owner.sign_in()
    token = owner.access_token()
    for number in range(27):
        made = stack.call("POST", "/v1/auth/api-keys", token, body={"label": f"key {number:02}"})
        assert made.status_code == 201
    page = owner.page
    page.reload()

    rows = page.locator("tr[data-key-id]")
    expect(rows).to_have_count(25)
    expect(rows.first).to_contain_text("key 26")  # newest first
    page.get_by_role("button", name="Load more keys").click()
    expect(rows).to_have_count(27)
    expect(rows.last).to_contain_text("key 00")
    expect(page.get_by_role("button", name="Load more keys")).to_be_hidden()


def test_a_chosen_lifetime_is_sent_and_the_answer_shown(people, stack: Stack) -> None:
    owner: Person = people("browser-lifetime")
    owner.sign_in()
    page = owner.page
    page.get_by_role("button", name="Create an admin key").click()
    create = owner.dialog("Create an API key")
    create.get_by_label("Label").fill("short lived")
    create.get_by_label("Lifetime in days (optional)").fill("95")
    create.get_by_role("button", name="Create key").click()
    # Checked before any request, as the service would.
    expect(create.get_by_role("alert")).to_contain_text("from 1 to 90")

    # What the service answers a chosen lifetime decides what the page must show: the key,
    # (not yet "expires soon": that is the last half of a short lifetime), or the refusal's
    # detail from a service without lifetimes.
    probe = stack.call(
        "POST",
        "/v1/auth/api-keys",
        owner.access_token(),
        body={"label": "probe", "expiresInDays": 3},
    )
    create.get_by_label("Lifetime in days (optional)").fill("3")
    create.get_by_role("button", name="Create key").click()
    if probe.status_code == 201:
        copy_secret(owner, "Your new API key", "short-lived-key-once")
        expect(key_row(owner, "short lived")).to_be_visible()
        expect(key_row(owner, "short lived").locator(".badge.soon")).to_have_count(0)
    else:
        expect(create.get_by_role("alert")).to_have_text(probe.json()["detail"])


def test_a_slow_answer_to_an_earlier_filter_never_overwrites_the_newer_one(
    people, stack: Stack
) -> None:
    owner: Person = people("browser-filters")
    owner.sign_in()
    page = owner.page
    workspace_id = create_workspace(owner, "Filter team")
    # An active key and a revoked one: each filter's answer is a list of its own.
    token = owner.access_token()
    made = [
        stack.call(
            "POST", "/v1/auth/api-keys", token,
            body={"label": label, "category": "workspace", "workspaceId": workspace_id},
        )
        for label in ("filtered worker", "retired worker")
    ]
    assert [answer.status_code for answer in made] == [201, 201]
    retired = made[1].json()["id"]
    assert stack.call("DELETE", f"/v1/auth/api-keys/{retired}", token).status_code == 204
    page.get_by_role("link", name="API keys").click()
    expect(page.locator("tr[data-key-id]")).to_have_count(2)

    # The answer to "revoked" is held back; the answer to "active", asked for after it, is
    # received and shown first (the list is no longer busy: the newest load has drawn). Only
    # then is the held answer let go: the race is the same however late each answer comes.
    held: list[Any] = []

    def hold(route: Any) -> None:
        held.append(route)

    revoked = re.compile(r".*/v1/auth/api-keys\?.*status=revoked.*")
    active = re.compile(r".*/v1/auth/api-keys\?.*status=active.*")
    page.route(revoked, hold)
    with page.expect_request(revoked):
        page.get_by_label("Status").select_option("revoked")
    with page.expect_response(active):
        page.get_by_label("Status").select_option("active")
    expect(page.locator("div.list")).to_have_attribute("aria-busy", "false")
    expect(page.locator("tr[data-key-id]")).to_have_count(1)
    expect(key_row(owner, "filtered worker")).to_have_count(1)
    expect(page.locator("#progress")).to_be_visible()  # the "revoked" answer, still held
    assert len(held) == 1
    with page.expect_response(revoked):
        held[0].continue_()
    # The page has handled it once nothing is pending (its progress is hidden again).
    expect(page.locator("#progress")).to_be_hidden()

    expect(key_row(owner, "filtered worker")).to_have_count(1)
    expect(key_row(owner, "retired worker")).to_have_count(0)
    expect(page.get_by_text("No revoked keys")).to_have_count(0)
