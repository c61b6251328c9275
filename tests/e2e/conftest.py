"""The local stack of `make run`, started once per session on free ports, over real HTTP."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from infra.template import stage_environment
from local.running import running_stack


class Stack:
    def __init__(self, info: dict[str, Any]):
        self.info = info
        self.endpoint: str = info["endpoint"]
        self.token: str = info["token"]
        self.user_id: str = info["userId"]
        self.workspace_id: str = info["workspaceId"]
        # The service's stdout (its JSON log lines), when the stack was started to keep it.
        self.log: Path | None = Path(info["output"]) if "output" in info else None
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
        """A user token for any user, of a new sign-in of theirs (as the exchange would)."""
        from chalicelib.config import Settings
        from chalicelib.runtime import Services

        # The stack's table and key names: the dev stage's (.chalice/config.json).
        env = {**stage_environment("dev"), "TOKEN_ISSUER": self.endpoint, "TRUSTED_ISSUERS": ""}
        previous = os.environ.get("AWS_ENDPOINT_URL")
        os.environ["AWS_ENDPOINT_URL"] = self.info["motoEndpoint"]
        try:
            return Services(Settings.from_env(env)).session_service.start(user_id).access.token
        finally:
            if previous is None:
                os.environ.pop("AWS_ENDPOINT_URL", None)
            else:
                os.environ["AWS_ENDPOINT_URL"] = previous


@pytest.fixture(scope="session")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    # As `make run` does: the connection settings the local tools and examples read.
    connection = tmp_path_factory.mktemp("connection") / "connection.env"
    with running_stack("--connection-file", str(connection), keep_output=True) as info:
        running = Stack({**info, "connectionFile": str(connection)})
        yield running
        running.http.close()
