"""Failures injected into the service's own AWS calls, for tests only.

The functional tests attach a `FaultInjector` to the services' boto3 clients in-process; the
local stack attaches one when started with `--faults <plan file>` (`local/stack.py`; `local/`
is never deployed), so that the end-to-end tests can make DynamoDB or KMS fail at a chosen
call of a real HTTP request. Everything happens in botocore's own events, under the code
that runs in Lambda, so botocore's retries and the service's handling are the real ones.

A `Fault` names the n-th AWS API call made after it was armed (0-based, counting every call
of the clients it is attached to, or only the calls of one `operation` such as
"dynamodb.TransactWriteItems") and what happens to that call:

  unreachable  every attempt fails to connect (EndpointConnectionError): nothing applied
  timeout      every attempt times out before it reaches AWS (ReadTimeoutError): nothing applied
  throttled    every attempt is answered ThrottlingException (HTTP 400): nothing applied
  lost         the call is applied, then its answer is lost (ReadTimeoutError after the fact):
               the service sees a failure although the write happened
  retried      the call is applied, its answer is lost once and botocore retries it: the
               retry meets the write already applied. (DynamoDB would deduplicate a retried
               transaction by its ClientRequestToken; moto does not, and nothing deduplicates
               a retried PutItem or UpdateItem.)
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from botocore.awsrequest import AWSResponse
from botocore.exceptions import EndpointConnectionError, ReadTimeoutError

KINDS = ("unreachable", "timeout", "throttled", "lost", "retried")
# Requests never sent anywhere: botocore would only look at the answer.
_NOWHERE = "https://fault.invalid/"


@dataclass(frozen=True)
class Fault:
    call: int
    kind: str
    operation: str | None = None  # "dynamodb.TransactWriteItems": count only those calls

    def __post_init__(self) -> None:
        if self.kind not in KINDS or self.call < 0:
            raise ValueError(f"not a fault: {self}")


class _ThrottlingBody:
    def __init__(self, body: bytes):
        self._body = body

    def stream(self, **_: Any) -> Iterator[bytes]:
        yield self._body


def throttling_answer(url: str) -> AWSResponse:
    body = json.dumps({"__type": "ThrottlingException", "message": "Rate exceeded"}).encode()
    headers = {"Content-Type": "application/x-amz-json-1.0", "Content-Length": str(len(body))}
    return AWSResponse(url, 400, headers, _ThrottlingBody(body))


class FaultInjector:
    """Counts the AWS calls of the clients it is attached to and fails the armed one."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._fault: Fault | None = None
        self._calls = 0  # counted calls since arming: all, or the fault's operation's
        self._this_call = threading.local()  # a call's events all run on its own thread
        self.operations: list[str] = []  # every call since arming, "dynamodb.GetItem"
        self.fired = False
        self._plan: Path | None = None
        self._plan_id: str | None = None

    def arm(self, fault: Fault | None) -> None:
        with self._lock:
            self._fault = fault
            self._calls = 0
            self.operations = []
            self.fired = False

    def follow(self, plan: Path) -> None:
        """Take faults from a plan file (the local stack's side; see `write_plan`).

        The file holds `{"id": …, "call": n, "kind": …}`, optionally with `"operation"`
        (armed), or `{"id": …}` (nothing).
        Each new `id` arms afresh. Before every call the injector's state is written next to
        it (`<plan>.state`: the plan's id, whether the fault fired, the calls since arming).
        """
        self._plan = plan

    def _read_plan(self, plan: Path) -> None:
        try:
            body = json.loads(plan.read_text() or "{}")
        except (OSError, ValueError):
            body = {}
        if body.get("id") != self._plan_id:
            self._plan_id = body.get("id")
            fault = None
            if "kind" in body:
                fault = Fault(body["call"], body["kind"], body.get("operation"))
            self.arm(fault)

    def _write_state(self, plan: Path) -> None:
        state = {"id": self._plan_id, "fired": self.fired, "operations": self.operations}
        # Atomically, like the plan: the test reads the state while the stack writes it, and
        # a half-written (empty) file would read as no JSON at all.
        temporary = plan.with_name(f"{plan.name}.state.{os.getpid()}.{threading.get_ident()}")
        temporary.write_text(json.dumps(state))
        temporary.replace(plan.with_name(plan.name + ".state"))

    def attach(self, client: Any) -> None:
        events = client.meta.events
        # First, so that a failure is raised before anything (moto's in-process mock too)
        # sees the request.
        events.register_first("before-call", self._before_call)
        events.register_first("before-send", self._before_send)
        events.register_first("needs-retry", self._needs_retry)
        events.register_first("after-call", self._after_call)

    # -- botocore events -----------------------------------------------------------------

    def _before_call(self, model: Any, **kwargs: Any) -> None:
        service = kwargs["event_name"].split(".")[1]
        if self._plan is not None:
            self._read_plan(self._plan)
        operation = f"{service}.{model.name}"
        with self._lock:
            self.operations.append(operation)
            counted = self._fault is None or self._fault.operation in (None, operation)
            index = self._calls if counted else -1
            self._calls += counted
            faulted = self._fault if self._fault and self._fault.call == index else None
            if faulted:
                self.fired = True
            if self._plan is not None:
                self._write_state(self._plan)
        self._this_call.kind = faulted.kind if faulted else None
        self._this_call.retried = False

    def _kind(self) -> str | None:
        return getattr(self._this_call, "kind", None)

    def _before_send(self, request: Any, **_: Any) -> AWSResponse | None:
        kind = self._kind()
        if kind == "unreachable":
            raise EndpointConnectionError(endpoint_url=request.url)
        if kind == "timeout":
            raise ReadTimeoutError(endpoint_url=request.url)
        if kind == "throttled":
            url = request.url
            request.url = _NOWHERE  # so that no later handler (moto's mock) applies it
            return throttling_answer(url)
        return None

    def _needs_retry(self, response: Any = None, caught_exception: Any = None, **_: Any) -> Any:
        if self._kind() != "retried" or self._this_call.retried or caught_exception is not None:
            return None
        self._this_call.retried = True
        return 0  # retry at once, as botocore does after a lost answer

    def _after_call(self, **kwargs: Any) -> None:
        kind = self._kind()
        self._this_call.kind = None
        if kind == "lost":
            raise ReadTimeoutError(endpoint_url="the answer was lost")


def write_plan(path: Path, plan_id: str, fault: Fault | None) -> None:
    """The test's side: arm `fault` (or nothing) for the stack that follows `path`.

    A new `plan_id` arms afresh (and resets the count of calls).
    """
    body = {"id": plan_id, **asdict(fault)} if fault else {"id": plan_id}
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text(json.dumps(body))
    temporary.replace(path)  # atomically: the stack never reads half a plan


def read_state(path: Path) -> dict[str, Any]:
    state = path.with_name(path.name + ".state")
    return dict(json.loads(state.read_text())) if state.exists() else {}
