"""What `make run` checks before it starts anything: every problem, in one message."""

from __future__ import annotations

from local.stack import configuration_problems, port_setting

ENDPOINT, MOTO = "http://127.0.0.1:8000", "http://127.0.0.1:5000"


def test_the_stages_configuration_with_the_local_values_has_no_problem() -> None:
    assert configuration_problems("dev", ENDPOINT, MOTO, {}) == []


def test_every_bad_caller_value_is_one_line_of_the_same_answer() -> None:
    environ = {
        "ALLOWED_ORIGINS": '["http://localhost:3000/"]',
        "TRUSTED_ISSUERS": '[{"issuer": "http://id.example.com"}]',
    }

    problems = configuration_problems("dev", ENDPOINT, MOTO, environ)

    assert len(problems) == 2
    assert problems[0].startswith("TRUSTED_ISSUERS[0]")
    assert problems[1].startswith("ALLOWED_ORIGINS") and "trailing slash" in problems[1]


def test_what_the_stack_sets_itself_is_not_taken_from_the_caller() -> None:
    environ = {"LOGIN_PROVIDER": "not json", "MCP_RESOURCES": "[1]"}

    assert configuration_problems("dev", ENDPOINT, MOTO, environ) == []


def test_a_port_variable_that_is_not_a_port_is_a_problem_not_a_traceback() -> None:
    problems: list[str] = []

    ports = [
        port_setting({"PORT": "80o0"}, "PORT", 8000, problems),
        port_setting({"IDP_PORT": "70000"}, "IDP_PORT", 8001, problems),
        port_setting({"MCP_PORT": "0"}, "MCP_PORT", 8002, problems),
        port_setting({}, "SCAN_SIGNER_PORT", 8003, problems),
    ]

    assert ports == [8000, 8001, 0, 8003]
    assert [p.split("=")[0] for p in problems] == ["PORT", "IDP_PORT"]
