"""Which exceptions mean "a dependency failed": the one place that decides a 503.

DynamoDB, KMS and an identity provider's JWKS endpoint are the service's dependencies. When
one of them fails (unreachable, too slow, throttling us after botocore's retries, refusing
us, or answering garbage), the caller gets 503 and may retry; nothing is ever allowed on a
failed dependency. Each store names its dependency with `failures_of(...)`; the HTTP edge
asks `is_dependency_failure` about anything that escaped, so a failure family nobody
anticipated still answers 503 instead of a 500.

What is *not* a dependency failure, and stays a bug (500) wherever it escapes: a request we
built wrongly (botocore's parameter validation, DynamoDB's ValidationException), and a
conditional write that lost a race, which the store that made it must settle itself.

Standard library and botocore only: the authorizer's cold-start path imports this module.
"""

from __future__ import annotations

import http.client
import socket
import ssl
from collections.abc import Iterator
from contextlib import contextmanager
from urllib.error import URLError

from botocore.exceptions import BotoCoreError, ClientError, ParamValidationError

from chalicelib.errors import DependencyUnavailable

# Mistakes in what we sent: retrying cannot help, so they must never be answered as a 503.
REQUEST_ERROR_CODES = frozenset({"ValidationException", "SerializationException"})

# Reasons for which DynamoDB cancels a transaction because of what other writers did: a
# condition that no longer holds, or another transaction on one of the items at the same
# moment (TransactionConflict, which botocore does not retry). Either way the caller lost a
# race and must re-read; neither is a failure of DynamoDB itself.
_LOST_RACE = frozenset({"ConditionalCheckFailed", "TransactionConflict"})
# A transaction cancelled because a member was malformed: our bug, like ValidationException.
_INVALID_MEMBER = "ValidationError"

# The network under the JWKS fetch (urllib): refused, reset, timed out, TLS, DNS, or an
# HTTP answer cut short. Named one by one: other OSErrors (a file that is not there) are
# bugs. (botocore wraps the same failures in BotoCoreError subclasses.)
_NETWORK_FAILURES = (
    URLError,
    ConnectionError,
    TimeoutError,
    socket.gaierror,
    ssl.SSLError,
    http.client.HTTPException,
)


def cancellation_reasons(error: ClientError) -> list[str]:
    return [r.get("Code", "None") for r in error.response.get("CancellationReasons", [])]


def is_lost_race(error: ClientError) -> bool:
    """True when a conditional write or transaction lost a race (see _LOST_RACE)."""
    code = error.response.get("Error", {}).get("Code")
    if code == "ConditionalCheckFailedException":
        return True
    if code == "TransactionCanceledException":
        reasons = set(cancellation_reasons(error))
        return bool(reasons & _LOST_RACE) and reasons <= _LOST_RACE | {"None"}
    return False


def is_dependency_failure(error: BaseException) -> bool:
    """True when `error` means a dependency failed (answer 503), False for our own bugs."""
    if isinstance(error, DependencyUnavailable):
        return True
    if isinstance(error, ClientError):
        code = error.response.get("Error", {}).get("Code")
        if code in REQUEST_ERROR_CODES or is_lost_race(error):
            return False
        return _INVALID_MEMBER not in cancellation_reasons(error)
    if isinstance(error, BotoCoreError):
        # Connection, timeout, credential and endpoint failures; not a request we built wrongly.
        return not isinstance(error, ParamValidationError)
    return isinstance(error, _NETWORK_FAILURES)


@contextmanager
def failures_of(dependency: str) -> Iterator[None]:
    """Every dependency failure raised inside becomes `DependencyUnavailable(dependency)`.

    Anything else (a lost race, a bug) passes through unchanged for the caller to settle.
    """
    try:
        yield
    except DependencyUnavailable:
        raise
    except Exception as error:
        if is_dependency_failure(error):
            raise DependencyUnavailable(dependency) from None
        raise
