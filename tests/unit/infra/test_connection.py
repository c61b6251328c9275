"""The connection settings `make run` writes and the local tools read (infra/connection.py)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from infra.connection import (
    NoRunningStack,
    parse_connection,
    read_connection,
    remove_connection,
    service_environment,
    write_connection,
)

INFO = {
    "endpoint": "http://127.0.0.1:41234",
    "workspaceId": "ws_01",
    "token": "ey" "J.local.token",  # split: not a real token, but shaped like one
    "userId": "usr_01",
    "idpEndpoint": "http://127.0.0.1:41235",
    "mcpResource": "http://127.0.0.1:41236/mcp",
    "scanSignerEndpoint": "http://127.0.0.1:41237",
    "motoEndpoint": "http://127.0.0.1:41238",
    "stage": "dev",
    "pid": os.getpid(),  # this test's process: running
}


def test_the_file_holds_the_ports_this_run_uses_and_reads_back(tmp_path: Path) -> None:
    path = tmp_path / ".local" / "connection.env"

    write_connection(path, INFO)

    values = read_connection(path)
    assert values["MEMORY_ENDPOINT"] == "http://127.0.0.1:41234"
    assert values["MEMORY_WORKSPACE_ID"] == "ws_01"
    assert values["MEMORY_LOCAL_MCP_RESOURCE"] == "http://127.0.0.1:41236/mcp"
    assert values["MEMORY_LOCAL_MOTO"] == "http://127.0.0.1:41238"


def test_the_file_is_readable_by_its_owner_only(tmp_path: Path) -> None:
    path = tmp_path / "connection.env"

    write_connection(path, INFO)

    assert path.stat().st_mode & 0o777 == 0o600


def test_a_shell_that_sources_the_file_gets_the_same_values(tmp_path: Path) -> None:
    path = tmp_path / "connection.env"
    write_connection(path, {**INFO, "workspaceId": "ws_it's"})

    shell = subprocess.run(
        ["bash", "-c", f'. "{path}" && printf "%s|%s" "$MEMORY_ENDPOINT" "$MEMORY_WORKSPACE_ID"'],
        capture_output=True, text=True, check=True, env={"PATH": os.environ["PATH"]},
    )

    assert shell.stdout == "http://127.0.0.1:41234|ws_it's"
    assert "AWS_ENDPOINT_URL" not in path.read_text()  # a sourcing shell's aws stays on AWS


def test_without_a_file_the_tools_say_to_start_the_stack(tmp_path: Path) -> None:
    with pytest.raises(NoRunningStack) as raised:
        read_connection(tmp_path / "connection.env")

    assert "make run" in str(raised.value)


def test_a_file_left_by_a_stopped_stack_is_not_used(tmp_path: Path) -> None:
    path = tmp_path / "connection.env"
    ended = subprocess.Popen(["true"])
    ended.wait()
    write_connection(path, {**INFO, "pid": ended.pid})

    with pytest.raises(NoRunningStack) as raised:
        read_connection(path)

    assert "not running" in str(raised.value)


def test_a_stopping_stack_removes_only_its_own_file(tmp_path: Path) -> None:
    path = tmp_path / "connection.env"
    write_connection(path, {**INFO, "pid": 4242})

    remove_connection(path, pid=4343)
    kept = path.exists()
    remove_connection(path, pid=4242)

    assert kept and not path.exists()


def test_the_service_environment_points_at_moto_with_the_stages_names() -> None:
    values = parse_connection(
        "export MEMORY_ENDPOINT=http://127.0.0.1:9\n"
        "export MEMORY_LOCAL_MOTO=http://127.0.0.1:10\nexport MEMORY_LOCAL_STAGE=dev\n"
    )

    env = service_environment(values)

    assert env["AWS_ENDPOINT_URL"] == "http://127.0.0.1:10"
    assert env["TOKEN_ISSUER"] == "http://127.0.0.1:9"
    assert env["AUTH_TABLE"] == "memory-auth-dev"
    assert env["AWS_ACCESS_KEY_ID"] == "local"
