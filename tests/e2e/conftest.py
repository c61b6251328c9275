"""The local stack of `make run`, started once per session on free ports, over real HTTP."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

PROJECT_DIR = Path(__file__).resolve().parents[2]


class Stack:
    def __init__(self, info: dict[str, Any], log: Path):
        self.info = info
        self.endpoint: str = info["endpoint"]
        self.token: str = info["token"]
        self.user_id: str = info["userId"]
        self.workspace_id: str = info["workspaceId"]
        self.log = log
        self.http = httpx.Client(base_url=self.endpoint, timeout=30)

    def call(
        self,
        method: str,
        path: str,
        credential: str | None = None,
        workspace: str | None = None,
        body: Any = None,
        **kwargs: Any,
    ) -> httpx.Response:
        headers = dict(kwargs.pop("headers", {}))
        if credential is not None:
            headers["Authorization"] = f"Bearer {credential}"
        if workspace is not None:
            headers["X-Workspace-Id"] = workspace
        return self.http.request(method, path, headers=headers, json=body, **kwargs)

    def mint_token(self, user_id: str) -> str:
        """A user token for any user, signed by the stack's KMS key (as the exchange would)."""
        from chalicelib.config import Settings
        from chalicelib.runtime import Services
        from local.stack import stage_environment

        # The stack's table and key names: the dev stage's (.chalice/config.json).
        env = {**stage_environment("dev"), "TOKEN_ISSUER": self.endpoint, "TRUSTED_ISSUERS": ""}
        previous = os.environ.get("AWS_ENDPOINT_URL")
        os.environ["AWS_ENDPOINT_URL"] = self.info["motoEndpoint"]
        try:
            return Services(Settings.from_env(env)).signer.mint(user_id).token
        finally:
            if previous is None:
                os.environ.pop("AWS_ENDPOINT_URL", None)
            else:
                os.environ["AWS_ENDPOINT_URL"] = previous


def start_stack(
    workdir: Path, extra_args: list[str] | None = None
) -> tuple[subprocess.Popen[bytes], dict[str, Any], Path]:
    ready = workdir / "ready.json"
    log = workdir / "stack.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "local.stack",
                "--port",
                "0",
                "--quiet",
                "--ready-file",
                str(ready),
                *(extra_args or []),
            ],
            cwd=PROJECT_DIR,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    deadline = time.monotonic() + 90
    while not ready.exists():
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            raise RuntimeError("local stack did not start:\n" + log.read_text()[-3000:])
        time.sleep(0.1)
    return process, json.loads(ready.read_text()), log


def stop_stack(process: subprocess.Popen[bytes]) -> None:
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=15)
    except subprocess.TimeoutExpired:
        process.kill()


@pytest.fixture(scope="session")
def stack() -> Iterator[Stack]:
    with tempfile.TemporaryDirectory() as tmp:
        process, info, log = start_stack(Path(tmp))
        try:
            yield Stack(info, log)
        finally:
            stop_stack(process)
