"""SnapStart's hooks, called as Lambda's Python runtime calls them: from the registries of
`snapshot_restore_py`, before-snapshot hooks in reverse order of registration, after-restore
hooks in order. One process plays the snapshotted copy and then, by putting back the state the
snapshot held, a second copy restored from the same snapshot."""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from moto import mock_aws
from snapshot_restore_py import get_after_restore, get_before_snapshot

from chalicelib import runtime, snapstart
from chalicelib.access.principal import Principal
from chalicelib.access.scopes import ALL_SCOPES
from chalicelib.keys.service import NewKey
from chalicelib.workspaces.model import Workspace
from local.resources import create_all
from local.stack import LOCAL_CREDENTIALS, stage_environment
from tests.fixtures.events import bearer, request_event


def snapshot() -> None:
    for hook, args, kwargs in reversed(get_before_snapshot()):
        hook(*args, **kwargs)


def restore() -> None:
    for hook, args, kwargs in get_after_restore():
        hook(*args, **kwargs)


@pytest.fixture
def function_environment(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The authorizer's Lambda environment, on moto, with the process's AWS state put back
    afterwards (the hooks replace boto3's default session and the services)."""
    env = {**stage_environment("dev"), **LOCAL_CREDENTIALS, "TOKEN_ISSUER": "https://t.example"}
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("AWS_ENDPOINT_URL", raising=False)
    monkeypatch.setattr(boto3, "DEFAULT_SESSION", None)
    monkeypatch.setattr(snapstart, "_session", None)
    runtime.use(None)
    with mock_aws():
        try:
            yield
        finally:
            runtime.use(None)


def test_the_app_registers_both_hooks_with_the_runtime() -> None:
    import app  # noqa: F401 (registering is a side effect of importing the handler's module)

    assert (snapstart.prepare_snapshot, (), {}) in get_before_snapshot()
    assert (snapstart.after_restore, (), {}) in get_after_restore()


def test_copies_restored_from_one_snapshot_draw_different_random_numbers(
    function_environment: None,
) -> None:
    snapshot()
    held = random.getstate()  # what every copy would resume with

    restore()
    first = [random.random() for _ in range(4)]
    random.setstate(held)
    restore()
    second = [random.random() for _ in range(4)]

    assert first != second


def test_a_restored_copy_has_new_clients_credentials_and_caches_but_keeps_loaded_models(
    function_environment: None,
) -> None:
    snapshot()
    before = runtime.services()
    client, signing_keys = before.dynamodb, before.signing_keys
    credentials = boto3.DEFAULT_SESSION.get_credentials()
    assert snapstart._session is not None
    loader = snapstart._session.get_component("data_loader")

    restore()
    after = runtime.services()

    assert after is not before
    assert after.dynamodb is not client  # and so its own connection pool
    assert after.signing_keys is not signing_keys
    assert boto3.DEFAULT_SESSION.get_credentials() is not credentials
    assert snapstart._session.get_component("data_loader") is loader


def test_a_restored_copy_decides(function_environment: None) -> None:
    import app

    snapshot()
    svc = runtime.services()
    create_all(svc.dynamodb, svc.kms, "dev")
    workspace = Workspace("ws_01HZY3K9R2S4T6V8W0X2Y4Z6AB", "Team", "usr_alice", svc.clock.now())
    svc.workspace_store.create(workspace)
    owner = Principal("usr_alice", "user_token", frozenset(ALL_SCOPES))
    issued = svc.key_service.create(
        owner, NewKey(label="restored", category="workspace", workspace_id=workspace.id)
    )

    restore()
    answer: dict[str, Any] = app.authorizer(
        request_event(authorization=bearer(issued.plaintext)), None
    )

    assert answer["policyDocument"]["Statement"][0]["Effect"] == "Allow"
    assert answer["context"]["workspaceId"] == workspace.id
