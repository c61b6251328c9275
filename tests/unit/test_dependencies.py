"""Which exceptions mean "a dependency failed" (503) and which are our own bugs (500)."""

from __future__ import annotations

import http.client
import socket
import ssl
from typing import Any
from urllib.error import URLError

import pytest
from botocore.exceptions import (
    ClientError,
    ConnectionClosedError,
    ConnectTimeoutError,
    EndpointConnectionError,
    NoCredentialsError,
    ParamValidationError,
    ReadTimeoutError,
)

from chalicelib.dependencies import failures_of, is_dependency_failure, is_lost_race
from chalicelib.errors import DependencyUnavailable


def client_error(code: str, reasons: list[str] | None = None) -> ClientError:
    response: dict[str, Any] = {"Error": {"Code": code, "Message": code}}
    if reasons is not None:
        response["CancellationReasons"] = [{"Code": reason} for reason in reasons]
    return ClientError(response, "Call")  # type: ignore[arg-type]


URL = "https://dynamodb.us-east-1.amazonaws.com"

DEPENDENCY_FAILURES = {
    "unreachable": EndpointConnectionError(endpoint_url=URL),
    "connect timeout": ConnectTimeoutError(endpoint_url=URL),
    "read timeout": ReadTimeoutError(endpoint_url=URL),
    "connection closed": ConnectionClosedError(endpoint_url=URL),
    "no credentials": NoCredentialsError(),
    "throttled": client_error("ThrottlingException"),
    "provisioned throughput": client_error("ProvisionedThroughputExceededException"),
    "internal server error": client_error("InternalServerError"),
    "kms key disabled": client_error("DisabledException"),
    "access denied": client_error("AccessDeniedException"),
    "transaction throttled": client_error(
        "TransactionCanceledException", ["None", "ThrottlingError"]
    ),
    "url error": URLError("refused"),
    "connection reset": ConnectionResetError(),
    "socket timeout": TimeoutError(),
    "dns": socket.gaierror(),
    "tls": ssl.SSLError(),
    "incomplete read": http.client.IncompleteRead(b""),
    "named": DependencyUnavailable("KMS"),
}

BUGS = {
    "parameter validation": ParamValidationError(report="bad"),
    "validation exception": client_error("ValidationException"),
    "serialization": client_error("SerializationException"),
    "transaction member invalid": client_error(
        "TransactionCanceledException", ["ValidationError", "None"]
    ),
    "condition failed": client_error("ConditionalCheckFailedException"),
    "transaction lost a race": client_error(
        "TransactionCanceledException", ["ConditionalCheckFailed", "None"]
    ),
    "a plain bug": RuntimeError("bug"),
    "a missing file": FileNotFoundError("static/app.js"),
    "a key error": KeyError("x"),
}


@pytest.mark.parametrize("error", DEPENDENCY_FAILURES.values(), ids=DEPENDENCY_FAILURES)
def test_a_dependency_failure_is_one(error: BaseException) -> None:
    assert is_dependency_failure(error)


@pytest.mark.parametrize("error", BUGS.values(), ids=BUGS)
def test_our_own_mistakes_and_lost_races_are_not_dependency_failures(error: BaseException) -> None:
    assert not is_dependency_failure(error)


@pytest.mark.parametrize(
    ("error", "lost"),
    [
        (client_error("ConditionalCheckFailedException"), True),
        (client_error("TransactionCanceledException", ["ConditionalCheckFailed", "None"]), True),
        (client_error("TransactionCanceledException", ["TransactionConflict"]), True),
        (
            client_error("TransactionCanceledException", ["ConditionalCheckFailed", "Throttling"]),
            False,
        ),
        (client_error("TransactionCanceledException", []), False),
        (client_error("ThrottlingException"), False),
    ],
    ids=[
        "condition",
        "transaction condition",
        "conflict",
        "mixed with throttling",
        "no reason",
        "other",
    ],
)
def test_a_lost_race_is_a_condition_or_a_conflict_only(error: ClientError, lost: bool) -> None:
    assert is_lost_race(error) is lost


def test_failures_of_names_the_dependency_and_drops_the_cause() -> None:
    with pytest.raises(DependencyUnavailable) as raised, failures_of("KMS"):
        raise ReadTimeoutError(endpoint_url=URL)
    assert raised.value.dependency == "KMS"
    assert raised.value.status == 503
    assert raised.value.__cause__ is None and raised.value.__suppress_context__


def test_failures_of_lets_a_lost_race_through_for_its_store_to_settle() -> None:
    lost = client_error("ConditionalCheckFailedException")
    with pytest.raises(ClientError) as raised, failures_of("DynamoDB"):
        raise lost
    assert raised.value is lost


def test_failures_of_keeps_a_more_precise_dependency_failure() -> None:
    precise = DependencyUnavailable("DynamoDB", "The rotation may have happened.")
    with pytest.raises(DependencyUnavailable) as raised, failures_of("KMS"):
        raise precise
    assert raised.value is precise
