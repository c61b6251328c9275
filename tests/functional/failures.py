"""Stand-ins for AWS calls that fail: every test that simulates a failing DynamoDB or KMS call
uses these, monkeypatched onto the services' boto3 clients or raised from a botocore event."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NoReturn

from botocore.exceptions import ClientError, EndpointConnectionError


def broken(*_: Any, **__: Any) -> NoReturn:
    """The endpoint cannot be reached at all."""
    raise EndpointConnectionError(endpoint_url="https://dynamodb.invalid")


def failing_with(code: str, reasons: list[str] | None = None) -> Callable[..., NoReturn]:
    """A call that DynamoDB or KMS answers with the error `code` (and cancellation reasons)."""

    def call(*_: Any, **__: Any) -> NoReturn:
        response: dict[str, Any] = {"Error": {"Code": code, "Message": code}}
        if reasons is not None:
            response["CancellationReasons"] = [{"Code": reason} for reason in reasons]
        raise ClientError(response, "Call")  # type: ignore[arg-type]

    return call


throttled = failing_with("ProvisionedThroughputExceededException")
# Another Region changed the item at the same moment (multi-Region strong consistency):
# nothing was applied, and the service may send the write again.
replicated_write_conflict = failing_with("ReplicatedWriteConflictException")
