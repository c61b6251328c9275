"""The data-plane authorizer's Lambda function, invoked as API Gateway would."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from chalice.test import Client

from chalicelib import runtime
from chalicelib.runtime import Services
from tests.functional.conftest import another_container

Invoke = Callable[[dict[str, Any]], dict[str, Any]]


@pytest.fixture
def authorize(services: Services) -> Iterator[Invoke]:
    """Invokes the authorizer's function as Lambda would: in its own container."""
    from app import app

    own = another_container(services)

    def invoke(event: dict[str, Any]) -> dict[str, Any]:
        runtime.use(own)
        try:
            return dict(client.lambda_.invoke("authorizer", event).payload)
        finally:
            runtime.use(services)

    with Client(app) as client:
        yield invoke


def effect(answer: dict[str, Any]) -> str:
    (statement,) = answer["policyDocument"]["Statement"]
    return str(statement["Effect"])
