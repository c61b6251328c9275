"""Maximum counts per stage (KEY_LIMIT, WORKSPACE_LIMIT, MEMBER_LIMIT, TRUST_POLICY_LIMIT):
409 limit_reached, the detail naming the limit and its value."""

from __future__ import annotations

from copy import replace
from typing import Any

import pytest

from chalicelib.config import DEFAULT_LIMITS, ConfigurationError, Settings
from chalicelib.runtime import Services
from tests.functional.conftest import Api

KEYS = "/v1/auth/api-keys"


def limited(services: Services, **limits: int) -> None:
    """This stage's settings with lower limits (before the services that read them exist)."""
    vars(services)["settings"] = replace(services.settings, **limits)
    for built in ("key_service", "workspace_service", "trust_policies", "trust_policy_service"):
        vars(services).pop(built, None)


def test_a_user_at_the_key_limit_gets_limit_reached_until_one_is_revoked(
    api: Api, alice: str, services: Services
) -> None:
    limited(services, key_limit=2)
    first = api.create_key(alice)
    api.create_key(alice)

    refused = api.call("POST", KEYS, alice, body={"label": "third"})
    api.call("DELETE", f"{KEYS}/{first['id']}", alice)
    after_revoking = api.call("POST", KEYS, alice, body={"label": "third"})

    assert refused.status == 409 and refused.code == "limit_reached"
    assert "At most 2 keys" in refused.json["detail"] and "KEY_LIMIT" in refused.json["detail"]
    assert after_revoking.status == 201


def test_the_key_limit_is_per_user(api: Api, alice: str, bob: str, services: Services) -> None:
    limited(services, key_limit=1)
    api.create_key(alice)

    answer = api.call("POST", KEYS, bob, body={"label": "bob's"})

    assert answer.status == 201


def test_a_user_owning_the_workspace_limit_gets_limit_reached(
    api: Api, alice: str, bob: str, services: Services
) -> None:
    limited(services, workspace_limit=1)
    api.workspace(alice)
    bobs = api.workspace(bob)
    api.add_member(bob, bobs, "usr_alice")  # a membership is not an owned workspace

    refused = api.call("POST", "/v1/workspaces", alice, body={"name": "second"})

    assert refused.status == 409 and refused.code == "limit_reached"
    assert "At most 1 workspaces owned per user (WORKSPACE_LIMIT)" in refused.json["detail"]


def test_a_full_workspace_gets_limit_reached_but_a_member_added_again_is_not(
    api: Api, alice: str, services: Services
) -> None:
    limited(services, member_limit=2)
    ws = api.workspace(alice)
    api.add_member(alice, ws, "usr_bob")
    api.token("usr_carol")

    refused = api.call("PUT", f"/v1/workspaces/{ws}/members/usr_carol", alice)
    again = api.call("PUT", f"/v1/workspaces/{ws}/members/usr_bob", alice)

    assert refused.status == 409 and refused.code == "limit_reached"
    assert "At most 2 members per workspace (MEMBER_LIMIT)" in refused.json["detail"]
    assert again.status == 200



def test_a_workspace_at_the_trust_policy_limit_gets_limit_reached(
    api: Api, alice: str, services: Services
) -> None:
    limited(services, trust_policy_limit=2)
    ws = api.workspace(alice)
    path = f"/v1/workspaces/{ws}/trust-policies"
    made = [api.call("POST", path, alice, body=trust_policy(f"p{i}")) for i in range(2)]

    refused = api.call("POST", path, alice, body=trust_policy("third"))

    assert [a.status for a in made] == [201, 201]
    assert refused.status == 409 and refused.code == "limit_reached"
    assert "At most 2 trust policies per workspace (TRUST_POLICY_LIMIT)" in refused.json["detail"]


def trust_policy(name: str) -> dict[str, Any]:
    return {
        "name": name,
        "issuer": "https://token.actions.githubusercontent.com",
        "audience": "memory-auth",
        "subject": "repo:acme/agents:ref:refs/heads/main",
        "scopes": ["memory"],
    }

def environment(**extra: str) -> dict[str, Any]:
    return {
        "AUTH_TABLE": "t", "KEY_ENCRYPTION_KEY_ID": "k", "TOKEN_SIGNING_KEY_ID": "s",
        "TOKEN_ISSUER": "https://auth.example.com", "REFRESH_TOKEN_KEY_ID": "r", **extra,
    }


def test_the_limits_default_to_the_decisions_and_are_read_from_the_stage() -> None:
    default = Settings.from_env(environment())
    set_ = Settings.from_env(environment(KEY_LIMIT="5", TRUST_POLICY_LIMIT="3"))

    assert (default.key_limit, default.workspace_limit, default.member_limit) == (1000, 100, 1000)
    assert default.trust_policy_limit == 20 == DEFAULT_LIMITS["TRUST_POLICY_LIMIT"]
    assert (set_.key_limit, set_.trust_policy_limit) == (5, 3)


@pytest.mark.parametrize("value", ["0", "-1", "ten", "1000001"])
def test_a_limit_that_is_not_a_whole_number_in_range_stops_the_start(value: str) -> None:
    with pytest.raises(ConfigurationError) as raised:
        Settings.from_env(environment(MEMBER_LIMIT=value))

    assert "MEMBER_LIMIT must be a whole number from 1 to 1000000" in str(raised.value)


def test_usage_flush_seconds_is_read_in_local_mode_only() -> None:
    local = Settings.from_env(environment(LOCAL_MODE="1", USAGE_FLUSH_SECONDS="2"))
    deployed = Settings.from_env(environment(USAGE_FLUSH_SECONDS="2"))

    assert local.usage_flush_seconds == 2
    assert deployed.usage_flush_seconds == 300
