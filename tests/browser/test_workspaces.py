"""Workspaces in the dashboard: create one, add a member who signed in elsewhere, see a
refusal's detail, remove the member behind a confirmation."""

from __future__ import annotations

import re

from playwright.sync_api import expect

from tests.browser.conftest import Person, Stack
from tests.browser.test_keys import create_workspace


def test_owner_adds_and_removes_a_member(people, stack: Stack) -> None:
    member: Person = people("browser-member")
    member_id = member.sign_in()
    owner: Person = people("browser-team-owner")
    owner_id = owner.sign_in()
    page = owner.page
    workspace_id = create_workspace(owner, "Shared space")
    members = page.locator("section.members")
    expect(members.locator("tr[data-user-id]")).to_have_count(1)
    expect(members.locator(f'tr[data-user-id="{owner_id}"]')).to_contain_text("owner")

    # A refusal shows the service's own detail.
    members.get_by_label("Email of the new member").fill("bob")
    members.get_by_role("button", name="Add member").click()
    expect(members.get_by_role("alert")).to_have_text(
        "Enter the email they sign in with, or their user id (usr_…)."
    )

    members.get_by_label("Email of the new member").fill(member_id)
    members.get_by_role("button", name="Add member").click()
    row = members.locator(f'tr[data-user-id="{member_id}"]')
    expect(row).to_contain_text("member")
    expect(members.get_by_role("alert")).to_be_hidden()
    owner.screenshot("workspace-members")

    # The member's own dashboard now offers the workspace, and the service agrees.
    member.page.reload()
    switcher = member.page.get_by_label("Workspace", exact=True)
    expect(switcher.locator("option", has_text="Shared space")).to_have_count(1)
    listed = stack.call("GET", f"/v1/workspaces/{workspace_id}/members", member.access_token())
    assert listed.status_code == 200

    row.get_by_role("button", name="Remove").click()
    confirm = page.get_by_role("alertdialog", name=re.compile("^Remove"))
    expect(confirm).to_contain_text("their keys for it stop working")
    confirm.get_by_role("button", name="Remove member").click()
    expect(row).to_have_count(0)

    refused = stack.call("GET", f"/v1/workspaces/{workspace_id}/members", member.access_token())
    assert (refused.status_code, refused.json()["code"]) == (404, "not_found")
    member.page.reload()
    expect(switcher.locator("option", has_text="Shared space")).to_have_count(0)
    # Only the owner may change members: the member's view of its own workspace says so.
    assert owner.csp_violations() == [] and member.csp_violations() == []


def test_a_member_sees_members_but_cannot_change_them(people, stack: Stack) -> None:
    member: Person = people("browser-viewer")
    member_id = member.sign_in()
    owner: Person = people("browser-viewer-owner")
    owner.sign_in()
    workspace_id = create_workspace(owner, "Read only for some")
    added = stack.call(
        "PUT", f"/v1/workspaces/{workspace_id}/members/{member_id}", owner.access_token()
    )
    assert added.status_code == 201

    member.page.reload()
    member.page.get_by_role("link", name="Workspaces", exact=True).click()
    member.page.get_by_role("button", name="Members of Read only for some").click()
    members = member.page.locator("section.members")
    expect(members.locator("tr[data-user-id]")).to_have_count(2)
    expect(
        members.get_by_text("Only the workspace's owner adds or removes members.")
    ).to_be_visible()
    expect(members.get_by_role("button", name="Add member")).to_have_count(0)
    expect(members.get_by_role("button", name=re.compile("^Remove"))).to_have_count(0)
