"""The data-plane authorizer's Lambda function, invoked as API Gateway would."""

from __future__ import annotations

from typing import Any

# The `authorize` fixture (the function in its own container) is tests/functional/conftest.py's.
from tests.functional.conftest import Invoke

__all__ = ["Invoke", "effect"]



def effect(answer: dict[str, Any]) -> str:
    (statement,) = answer["policyDocument"]["Statement"]
    return str(statement["Effect"])
