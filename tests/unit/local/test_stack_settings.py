"""Under `make run`, the settings a developer exported win over the development stage's
(local/stack.py), except the names of what the stack itself creates."""

from __future__ import annotations

import pytest

from infra.template import stage_environment
from local import stack


def test_exported_limits_win_over_the_stages_config() -> None:
    stage = stage_environment("dev")
    caller = {
        "MCP_REGISTRATION_LIMIT": "3",
        "KEY_LIMIT": "7",
        "MEMBER_LIMIT": "4",
        "WORKSPACE_LIMIT": "2",
        "TRUST_POLICY_LIMIT": "1",
        "POWERTOOLS_LOG_LEVEL": "DEBUG",
    }

    chosen = stack.callers_settings(stage, caller)

    assert chosen == caller
    assert stage["KEY_LIMIT"] != "7"  # the stage says otherwise: the caller's wins


@pytest.mark.parametrize(
    "name", ["AUTH_TABLE", "TOKEN_SIGNING_KEY_ID", "TOKEN_ISSUER", "STAGE", "DASHBOARD_LOGIN"]
)
def test_the_names_of_what_the_stack_creates_stay_the_stages(name: str) -> None:
    assert stack.callers_settings(stage_environment("dev"), {name: "mine"}) == {}


def test_the_local_environment_carries_the_callers_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(stack, "_CALLERS_ENVIRONMENT", {"MEMBER_LIMIT": "4", "AUTH_TABLE": "x"})

    env = stack.local_environment("dev", "http://127.0.0.1:9", "http://127.0.0.1:10")

    assert env["MEMBER_LIMIT"] == "4"
    assert env["AUTH_TABLE"] == "memory-auth-dev"
    assert env["TOKEN_ISSUER"] == "http://127.0.0.1:9"
