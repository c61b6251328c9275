"""The examples under examples/, and the local tools, run as a person runs them: a fresh
process whose only settings are the connection file the stack wrote (`make run` writes
.local/connection.env; these tests' stack writes its own, infra/connection.py)."""

from __future__ import annotations

import json
import os
import re
import secrets
import subprocess
import sys
from pathlib import Path

from infra.connection import parse_connection
from infra.template import PROJECT_DIR
from tests.e2e.conftest import Stack

EXAMPLES = PROJECT_DIR / "examples"


def connection_file(stack: Stack) -> Path:
    return Path(stack.info["connectionFile"])


def run(stack: Stack, *command: str) -> subprocess.CompletedProcess[str]:
    """`command` with the connection file's variables and nothing else of ours, as after
    `. .local/connection.env` in a new shell."""
    environment = {"PATH": os.environ["PATH"], "HOME": os.environ.get("HOME", "/tmp")}
    environment["PYTHONPATH"] = str(PROJECT_DIR / "sdks" / "python" / "src")  # as documented
    environment.update(parse_connection(connection_file(stack).read_text()))
    return subprocess.run(  # noqa: S603 - our interpreter, our scripts
        [sys.executable, *command], cwd=PROJECT_DIR, env=environment,
        capture_output=True, text=True, timeout=120, check=False,
    )


def test_the_stack_writes_the_connection_settings_of_the_ports_it_uses(stack: Stack) -> None:
    values = parse_connection(connection_file(stack).read_text())

    assert values["MEMORY_ENDPOINT"] == stack.endpoint
    assert values["MEMORY_WORKSPACE_ID"] == stack.workspace_id
    assert values["MEMORY_LOCAL_MCP_RESOURCE"] == stack.info["mcpResource"]
    assert values["MEMORY_LOCAL_MOTO"] == stack.info["motoEndpoint"]


def test_the_headless_mcp_client_signs_in_and_calls_the_tools(stack: Stack) -> None:
    result = run(stack, str(EXAMPLES / "mcp_client.py"))

    assert result.returncode == 0, result.stderr[-3000:]
    echoed, who = result.stdout.split("\n", 1)
    assert echoed == "hello"
    principal = json.loads(who)
    assert principal["credential"] == "mcp_token"
    assert principal["workspaceId"] == stack.workspace_id
    assert principal["userId"] == stack.user_id


def test_the_id_jag_mcp_client_gets_a_token_from_the_enterprise_idp_and_calls_the_tools(
    stack: Stack,
) -> None:
    result = run(stack, str(EXAMPLES / "mcp_id_jag.py"))

    assert result.returncode == 0, result.stderr[-3000:]
    granted, who = result.stdout.split("\n", 1)
    assert granted.startswith("granted memory for ")
    principal = json.loads(who)
    assert principal["credential"] == "mcp_token"
    assert principal["workspaceId"] == stack.workspace_id
    assert principal["userId"] == stack.user_id


def test_key_rotation_keeps_the_old_key_for_the_grace_period_then_revokes_it(
    stack: Stack,
) -> None:
    result = run(stack, str(EXAMPLES / "key_rotation.py"))

    assert result.returncode == 0, result.stderr[-3000:]
    created, rotated, old, new, revoked = result.stdout.strip().splitlines()
    old_id = re.search(r"created (key_\w+)", created)[1]  # type: ignore[index]
    new_id = re.search(r"rotated to (key_\w+)", rotated)[1]  # type: ignore[index]
    assert old.strip() == f"old key: accepted as {old_id}"
    assert new.strip() == f"new key: accepted as {new_id}"
    assert revoked == (
        f"revoked {old_id}: old key refused (revoked_credentials), new key accepted as {new_id}"
    )
    # Hints only: no plaintext key in what it prints.
    assert not re.search(r"svc_[A-Za-z0-9]{8}", result.stdout)


def test_the_leaked_key_replay_finds_the_stack_without_being_told_where(stack: Stack) -> None:
    key = stack.call(
        "POST", "/v1/auth/api-keys", stack.token, body={"label": "leaked"}
    ).json()["key"]

    result = run(
        stack, "-m", "local.scan_report", "--token", key,
        "--connection-file", str(connection_file(stack)),
    )

    assert result.returncode == 0, result.stderr[-2000:]
    assert json.loads(result.stdout)["status"] == 200
    assert stack.call("GET", "/v1/auth/whoami", key).status_code == 401


def test_import_legacy_reaches_the_local_stack_with_one_option(
    stack: Stack, tmp_path: Path
) -> None:
    keys = tmp_path / "keys.jsonl"
    plaintext = "legacy_" + secrets.token_hex(16)  # random: never a literal key
    keys.write_text(
        json.dumps({"ownerId": stack.user_id, "label": "legacy", "key": plaintext}) + "\n"
    )

    result = run(
        stack, "-m", "tools.import_legacy_keys", str(keys), "--local", str(connection_file(stack))
    )

    assert result.returncode == 0, result.stderr[-2000:]
    assert "imported 1, skipped 0" in result.stdout
    assert stack.call("GET", "/v1/auth/whoami", plaintext).status_code == 200


def readme_recipe(heading: str) -> str:
    """The first shell block under `### heading` in the README, as a reader copies it."""
    section = (PROJECT_DIR / "README.md").read_text().split(f"### {heading}\n", 1)[1]
    return section.split("```sh\n", 1)[1].split("```", 1)[0]


def test_the_readmes_curl_recipe_works_verbatim_on_the_ports_this_stack_uses(
    stack: Stack,
) -> None:
    recipe = readme_recipe("A workspace key with curl")
    assert ". .local/connection.env" in recipe
    create, _ = recipe.rsplit("curl -s $MEMORY_ENDPOINT/v1/auth/whoami", 1)
    script = create.replace(".local/connection.env", str(connection_file(stack)))

    shell = subprocess.run(  # noqa: S603 - bash, the README's own lines
        ["bash", "-c", "set -eo pipefail\n" + script], capture_output=True, text=True,
        timeout=60, check=False, env={"PATH": os.environ["PATH"]},
    )

    assert shell.returncode == 0, shell.stderr
    created = json.loads(shell.stdout)
    assert created["category"] == "workspace"
    assert created["workspaceId"] == stack.workspace_id
    assert stack.call("GET", "/v1/auth/whoami", created["key"]).status_code == 200


def test_the_webhook_receiver_verifies_a_delivery_of_the_workspaces_event(stack: Stack) -> None:
    result = run(stack, str(EXAMPLES / "webhook_receiver.py"), "--once")

    assert result.returncode == 0, result.stderr[-3000:]
    lines = result.stdout.splitlines()
    assert lines[0].startswith("subscribed whk_")
    assert re.fullmatch(r"verified key\.(created|revoked) evt_[0-9A-Z]{26}", lines[1])
    assert "the key in it: True" in lines
