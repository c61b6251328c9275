"""Shared fixtures: a clean configuration environment and the anyio backend."""

from __future__ import annotations

import os

import pytest

# Every variable the SDK reads; tests set them explicitly, never inherit them.
SDK_VARIABLE_PREFIXES = ("MEMORY_", "NAM_")
SDK_VARIABLES = ("GRAPHDB_PASSWORD",)


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.upper().startswith(SDK_VARIABLE_PREFIXES) or name.upper() in SDK_VARIABLES:
            monkeypatch.delenv(name)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
