"""The local stack of `make run`, started once per session on free ports, over real HTTP."""

from __future__ import annotations

import os
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest

from infra.template import stage_environment
from local.running import running_stack
from local.stack import LOCAL_USAGE_FLUSH_SECONDS
from tests.e2e.waiting import StackLog, clock_passes, says


class Stack:
    def __init__(self, info: dict[str, Any], log: StackLog | None = None):
        self.info = info
        self.endpoint: str = info["endpoint"]
        self.token: str = info["token"]
        self.user_id: str = info["userId"]
        self.workspace_id: str = info["workspaceId"]
        # The service's stdout (its JSON log lines), when the stack was started to hand them.
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

    def flush_usage(self, key: str, key_id: str) -> list[int]:
        """Requests of `key`, one in each next usage flush window (LOCAL_USAGE_FLUSH_SECONDS),
        until the stack has written every request it counted for the key: the first request
        of a window sends what was counted before it (and itself), and the stack's line says
        how that went. A send whose outcome is unknown (moto slow: it may have landed) is sent
        again in the next window, and what was counted meanwhile in the one after: so the
        counts are all written once a send is written right after one that was not unknown.
        Returns the statuses of the requests it made (each counted too)."""
        assert self.log is not None, "a stack started with a StackLog"
        wanted = says("api key use recorded", key_id=key_id)
        window = int(LOCAL_USAGE_FLUSH_SECONDS)
        statuses: list[int] = []
        while True:
            turns = (int(datetime.now(UTC).timestamp()) // window + 1) * window
            clock_passes(datetime.fromtimestamp(turns, UTC))
            mark = self.log.mark()
            statuses.append(self.call("GET", "/v1/auth/whoami", key).status_code)
            self.log.wait_for(wanted, since=mark)
            outcomes = [record["outcome"] for record in self.log.records() if wanted(record)]
            if outcomes[-1] != "unknown" and outcomes[-2:-1] != ["unknown"]:
                return statuses
            assert len(statuses) < 5, f"the key's usage not written in 5 windows: {outcomes}"

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
    log = StackLog()
    # A failed webhook delivery's first retry after 1 s, not about 5 (tests/e2e/test_webhooks.py).
    with running_stack(
        "--connection-file", str(connection), on_output=log.append,
        environment={"WEBHOOK_FIRST_RETRY_SECONDS": "1"},
    ) as info:
        running = Stack({**info, "connectionFile": str(connection)}, log)
        yield running
        running.http.close()
