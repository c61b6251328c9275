"""The running local stack's connection settings: written by `make run`, read by every local tool.

`make run` writes `.local/connection.env` once the stack serves (and removes it when it
stops): shell `export` lines, so `. .local/connection.env` loads them into a shell, and the
local tools read the same file (`make import-legacy ARGS="… --local"`, `python -m
local.scan_report`, the examples under `examples/`), so each reaches the stack on whatever
ports this run uses (`PORT=0 make run`). The names are those the SDKs already read
(`MEMORY_ENDPOINT`, `MEMORY_WORKSPACE_ID`) and `MEMORY_LOCAL_*` for the rest; nothing in it
points a shell's AWS tools at moto (the tools build that environment themselves).

The file holds the development user's one-hour token (a local token, signed by moto's KMS),
so it is written with mode 0600 and the whole file appears at once. Standard library only
(and the template reader beside it): the local stack (`local/stack.py`) writes it and the
operator tools (`tools/import_legacy_keys.py`) read it, and neither imports the other.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import tempfile
from collections.abc import Mapping
from pathlib import Path

from infra.template import PROJECT_DIR, stage_environment

CONNECTION_FILE = PROJECT_DIR / ".local" / "connection.env"

LOCAL_CREDENTIALS = {
    # moto accepts any credentials; these are placeholders, not secrets.
    "AWS_ACCESS_KEY_ID": "local",
    "AWS_SECRET_ACCESS_KEY": "local",
    "AWS_DEFAULT_REGION": "us-east-1",
    "AWS_REGION": "us-east-1",
}

# The file's variables, from the stack's ready file (local/stack.py), in this order.
FIELDS = {
    "MEMORY_ENDPOINT": "endpoint",
    "MEMORY_WORKSPACE_ID": "workspaceId",
    "MEMORY_LOCAL_TOKEN": "token",
    "MEMORY_LOCAL_USER_ID": "userId",
    "MEMORY_LOCAL_IDP": "idpEndpoint",
    "MEMORY_LOCAL_MCP_RESOURCE": "mcpResource",
    "MEMORY_LOCAL_SCAN_SIGNER": "scanSignerEndpoint",
    "MEMORY_LOCAL_MOTO": "motoEndpoint",
    "MEMORY_LOCAL_STAGE": "stage",
    "MEMORY_LOCAL_PID": "pid",
}


class NoRunningStack(Exception):
    """No connection file, or the stack that wrote it has stopped; the message says what to do."""


def export_block(info: Mapping[str, object]) -> str:
    """The `export` lines for the stack described by `info` (its ready file)."""
    return "\n".join(
        f"export {name}={shlex.quote(str(info[field]))}"
        for name, field in FIELDS.items()
        if info.get(field) is not None
    )


def write_connection(path: Path, info: Mapping[str, object]) -> None:
    """The export block at `path`, readable by its owner only, whole or not at all."""
    path.parent.mkdir(parents=True, exist_ok=True)
    descriptor, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(descriptor, "w") as out:  # mkstemp's file is already 0600
            out.write("# The running local stack (make run); removed when it stops.\n")
            out.write(export_block(info) + "\n")
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)
        raise


def remove_connection(path: Path, pid: int) -> None:
    """Remove `path` if it still describes the stack `pid` (another may have replaced it)."""
    with contextlib.suppress(FileNotFoundError, NoRunningStack):
        if parse_connection(path.read_text()).get("MEMORY_LOCAL_PID") == str(pid):
            path.unlink()


def parse_connection(text: str) -> dict[str, str]:
    """The variables of an export block; any other line is ignored."""
    values: dict[str, str] = {}
    for line in text.splitlines():
        words = shlex.split(line, comments=True)
        if len(words) == 2 and words[0] == "export" and "=" in words[1]:
            name, _, value = words[1].partition("=")
            values[name] = value
    return values


def _running(pid: str) -> bool:
    try:
        os.kill(int(pid), 0)
    except (ValueError, ProcessLookupError):
        return False
    except PermissionError:  # it exists, as someone else
        return True
    return True


def read_connection(path: Path | None = None) -> dict[str, str]:
    """The running stack's settings; NoRunningStack when there is none at `path`."""
    path = path or CONNECTION_FILE
    try:
        values = parse_connection(path.read_text())
    except FileNotFoundError:
        raise NoRunningStack(
            f"{path} does not exist: start the local stack with `make run` (it writes that file)"
        ) from None
    if "MEMORY_ENDPOINT" not in values or not _running(values.get("MEMORY_LOCAL_PID", "")):
        raise NoRunningStack(
            f"the stack that wrote {path} is not running any more: start it with `make run`"
        )
    return values


def service_environment(values: Mapping[str, str]) -> dict[str, str]:
    """The service's environment against the running stack: its stage's variables, moto's
    endpoint and placeholder credentials, its issuer; for tools that use the service's code
    directly (import-legacy)."""
    env = stage_environment(values.get("MEMORY_LOCAL_STAGE", "dev"))
    env.update(LOCAL_CREDENTIALS)
    env["AWS_ENDPOINT_URL"] = values["MEMORY_LOCAL_MOTO"]
    env["TOKEN_ISSUER"] = values["MEMORY_ENDPOINT"]
    env["LOCAL_MODE"] = "1"
    env["TRUSTED_ISSUERS"] = ""  # a tool signs no one in
    return env
