"""`make run`'s banner: commands a new user can paste as they are."""

from __future__ import annotations

from local.stack import banner

INFO = {
    "endpoint": "http://127.0.0.1:8000",
    "idpEndpoint": "http://127.0.0.1:8001",
    "motoEndpoint": "http://127.0.0.1:5000",
    "userId": "usr_dev",
    "workspaceId": "ws_dev",
    "mcpResource": "http://127.0.0.1:8002/mcp",
    "scanSignerEndpoint": "http://127.0.0.1:8003",
}


def test_the_mcp_client_runs_with_the_virtualenvs_python() -> None:
    lines = banner(INFO).splitlines()

    assert "  .venv/bin/python examples/mcp_client.py" in lines
    assert not [line for line in lines if " python examples/" in line]


def test_the_workload_commands_keep_their_line_breaks() -> None:
    text = banner(INFO)
    workload = text[text.index("Workload identity") : text.index("Press Ctrl-C")]

    assert max(len(line) for line in workload.splitlines()) <= 100
    assert workload.count("curl ") == 3
    # One option per line (a lost backslash would join them into one 200-character line).
    assert len([line for line in workload.splitlines() if line.strip().startswith("-")]) >= 7


def test_every_curl_that_prints_json_ends_it_with_a_newline() -> None:
    printing = [
        line for line in banner(INFO).splitlines()
        if line.strip().startswith("curl ")
    ]

    assert printing and all("-w '\\n'" in line for line in printing), printing
