"""Trust policies: owner only (a member 403, anyone else 404), at most 20 per workspace, every
field's rule, and their audit events."""

from __future__ import annotations

import re

import pytest

from chalicelib.config import DEFAULT_LIMITS, TRUST_POLICY_LIMIT
from tests.functional.conftest import Api
from tests.functional.workloads.conftest import create_policy

POLICY_ID = re.compile(r"^tp_[0-9A-HJKMNP-TV-Z]{26}$")


def test_owner_creates_lists_gets_and_deletes_a_trust_policy(
    api: Api, alice: str, workspace: str
) -> None:
    created = create_policy(api, alice, workspace)
    policy = created.json
    listed = api.call("GET", f"/v1/workspaces/{workspace}/trust-policies", alice)
    got = api.call("GET", f"/v1/workspaces/{workspace}/trust-policies/{policy['id']}", alice)
    deleted = api.call("DELETE", f"/v1/workspaces/{workspace}/trust-policies/{policy['id']}", alice)
    after = api.call("GET", f"/v1/workspaces/{workspace}/trust-policies/{policy['id']}", alice)

    assert created.status == 201
    assert POLICY_ID.match(policy["id"])
    assert created.headers["Location"].endswith(f"/trust-policies/{policy['id']}")
    assert policy["createdBy"] == "usr_alice"
    assert policy["workspaceId"] == workspace
    assert policy["maxLifetimeSeconds"] == 900  # the default
    assert policy["claims"] == {"repository_owner": "acme"}
    assert listed.json == {"trustPolicies": [policy]}
    assert got.json == policy
    assert deleted.status == 204
    assert after.status == 404


def test_a_member_who_is_not_the_owner_gets_403(
    api: Api, alice: str, bob: str, workspace: str
) -> None:
    api.add_member(alice, workspace, "usr_bob")

    created = create_policy(api, bob, workspace)
    listed = api.call("GET", f"/v1/workspaces/{workspace}/trust-policies", bob)

    assert (created.status, created.code) == (403, "owner_required")
    assert (listed.status, listed.code) == (403, "owner_required")


def test_a_non_member_gets_404(api: Api, bob: str, workspace: str) -> None:
    created = create_policy(api, bob, workspace)
    listed = api.call("GET", f"/v1/workspaces/{workspace}/trust-policies", bob)

    assert (created.status, created.code) == (404, "not_found")
    assert (listed.status, listed.code) == (404, "not_found")


def test_an_admin_key_of_the_owner_manages_trust_policies(
    api: Api, alice: str, workspace: str
) -> None:
    admin_key = api.create_key(alice)["key"]

    created = create_policy(api, admin_key, workspace)

    assert created.status == 201


def test_a_workspace_key_cannot_manage_trust_policies(api: Api, alice: str, workspace: str) -> None:
    key = api.create_key(alice, category="workspace", workspaceId=workspace)["key"]

    created = create_policy(api, key, workspace)

    assert (created.status, created.code) == (403, "insufficient_scope")


def test_a_workspace_holds_at_most_20_trust_policies(api: Api, alice: str, workspace: str) -> None:
    limit = DEFAULT_LIMITS[TRUST_POLICY_LIMIT]  # the stage's default
    made = [create_policy(api, alice, workspace, name=f"p{i}") for i in range(limit)]
    refused = create_policy(api, alice, workspace, name="one too many")
    api.call("DELETE", f"/v1/workspaces/{workspace}/trust-policies/{made[0].json['id']}", alice)
    after_delete = create_policy(api, alice, workspace, name="room again")

    assert limit == 20
    assert [a.status for a in made] == [201] * limit
    assert (refused.status, refused.code) == (409, "limit_reached")
    assert "At most 20 trust policies per workspace (TRUST_POLICY_LIMIT)" in refused.json["detail"]
    assert after_delete.status == 201


@pytest.mark.parametrize(
    ("field", "value", "code", "said"),
    [
        ("issuer", "http://issuer.example", "invalid_trust_policy", "https"),
        ("issuer", "http://127.0.0.1:8001", "invalid_trust_policy", "https"),  # not local mode
        ("issuer", "ftp://issuer.example", "invalid_trust_policy", "https"),
        ("issuer", "https://issuer.example?x=1", "invalid_trust_policy", "query"),
        ("subject", "*", "invalid_trust_policy", "every workload"),
        ("subject", "repo:*", "invalid_trust_policy", "no fixed prefix"),
        ("subject", "acmeagents*", "invalid_trust_policy", "no fixed prefix"),
        ("subject", "repo:acme/*/main", "invalid_trust_policy", "at its end"),
        ("claims", {f"c{i}": "v" for i in range(11)}, "invalid_trust_policy", "at most 10"),
        ("claims", {"sub": "x"}, "invalid_trust_policy", "policy's own fields"),
        ("claims", {"owner": 1}, "invalid_trust_policy", "claims"),
        ("scopes", ["workspace:admin"], "invalid_scope", "workspace-key scopes"),
        ("scopes", [], "invalid_scope", "workspace-key scopes"),
        ("maxLifetimeSeconds", 59, "invalid_trust_policy", "60 to 3600"),
        ("maxLifetimeSeconds", 3601, "invalid_trust_policy", "60 to 3600"),
        ("maxLifetimeSeconds", True, "invalid_trust_policy", "maxLifetimeSeconds"),
        ("audience", "", "invalid_trust_policy", "audience"),
        ("name", "", "invalid_name", "name"),
    ],
)
def test_a_policy_breaking_a_rule_is_refused_saying_why(
    api: Api, alice: str, workspace: str, field: str, value: object, code: str, said: str
) -> None:
    answer = create_policy(api, alice, workspace, **{field: value})

    assert (answer.status, answer.code) == (400, code)
    assert said in answer.json["detail"]


@pytest.mark.parametrize(
    "issuer",
    [
        "https://10.0.0.1",
        "https://169.254.169.254",
        "https://2130706433",
        "https://0x7f000001",
        "https://0177.0.0.1",
        "https://127.1",
        "https://10.0.0.1.",
        "https://10.0.0.1:8443/tenant",
        "https://[::1]",
        "https://[::ffff:169.254.169.254]",
        "https://[64:ff9b::a9fe:a9fe]",
    ],
)
def test_an_issuer_naming_an_ip_address_in_any_spelling_is_400_invalid_trust_policy(
    api: Api, alice: str, workspace: str, issuer: str
) -> None:
    answer = create_policy(api, alice, workspace, issuer=issuer)
    listed = api.call("GET", f"/v1/workspaces/{workspace}/trust-policies", alice)

    assert (answer.status, answer.code) == (400, "invalid_trust_policy")
    if "[" not in issuer:  # a bracket was never a host name's: refused as not https of a host
        assert "issuer must name a host, not an IP address" in answer.json["detail"]
    assert listed.json["trustPolicies"] == []


def test_a_policy_with_an_exact_subject_and_a_lifetime_is_kept_as_sent(
    api: Api, alice: str, workspace: str
) -> None:
    answer = create_policy(
        api,
        alice,
        workspace,
        subject="system:serviceaccount:agents:runner",
        maxLifetimeSeconds=3600,
        claims=None,
    )

    assert answer.status == 201
    assert answer.json["subject"] == "system:serviceaccount:agents:runner"
    assert answer.json["maxLifetimeSeconds"] == 3600
    assert answer.json["claims"] == {}


def test_creating_and_deleting_a_policy_are_audit_events(
    api: Api, alice: str, workspace: str
) -> None:
    policy = create_policy(api, alice, workspace).json
    api.call("DELETE", f"/v1/workspaces/{workspace}/trust-policies/{policy['id']}", alice)

    found = api.call("GET", "/v1/auth/events", alice).json["events"]

    types = [(e["type"], e["data"].get("policyId")) for e in found]
    assert ("trust_policy.created", policy["id"]) in types
    assert ("trust_policy.deleted", policy["id"]) in types
