"""The app through `chalice.test.Client`, on moto in-process, with a clock tests can move.

Every AWS operation the deployed code performs here is recorded and, when the session ends,
written to build/aws-operations.json for the infrastructure tests (aws_operations.py). The
file is rewritten by each run; a run that left out some functional tests marks it incomplete.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import boto3
import pytest
from chalice.test import Client
from moto import mock_aws

from chalicelib import runtime
from chalicelib.clock import FrozenClock
from chalicelib.config import Settings
from chalicelib.runtime import Services
from infra.template import stage_environment
from local.moto_server import (
    behaves_like_a_global_table,
    dynamodb_made_faster,
    kms_keys_from_a_pool,
)
from local.resources import create_all
from tests.functional.aws_operations import OPERATIONS_FILE, Recording

ISSUER = "https://auth.test.example"
FUNCTIONAL_TESTS = Path(__file__).resolve().parent
RECORDING = Recording()

# moto made faster where that changes no answer a test sees (local/moto_server.py).
dynamodb_made_faster()
kms_keys_from_a_pool()
# The store refuses transactions as a multi-Region strongly consistent replica does; tests
# set WRITE_CONFLICTS.share to make a share of conditional writes conflict.
WRITE_CONFLICTS = behaves_like_a_global_table(conflict_share=0)
_finished: set[str] = set()


@cache
def one_session() -> boto3.Session:
    """The boto3 session every test's clients come from, one per test process.

    moto's `mock_aws` sets boto3's default session to None for its duration, so each test's
    clients came from a new session that read and parsed the service models again: about
    0.3 s a test, half of the tier's time. This session's loader keeps them parsed. Its
    credentials are moto's, which every mock sets alike.
    """
    return boto3.Session()


def test_settings() -> Settings:
    """The dev stage's table and key names (.chalice/config.json), as the local stack uses."""
    env = stage_environment("dev")
    return Settings(
        table_name=env["AUTH_TABLE"],
        encryption_key_id=env["KEY_ENCRYPTION_KEY_ID"],
        signing_key_id=env["TOKEN_SIGNING_KEY_ID"],
        previous_signing_key_id=None,
        issuer=ISSUER,
        region="us-east-1",
        refresh_token_key_id=env["REFRESH_TOKEN_KEY_ID"],
        event_bus_name=env["EVENT_BUS_NAME"],
        webhook_queue_name=env["WEBHOOK_QUEUE_NAME"],
    )


# -- recording: complete only when every functional test ran ---------------------------
# Under pytest-xdist (`make test-functional` runs `-n auto`) each worker records what its
# share of the tests performed and hands it to the controller in its `workeroutput`; the
# controller, which hears of every collected and finished test, merges the shares and
# writes the one file.

WORKER_OUTPUT = "aws_operations"
_worker = False  # this process is an xdist worker: its recording goes to the controller
_collected: set[str] = set()  # the functional tests the xdist workers collected
_rootpath = Path.cwd()


def pytest_configure(config: pytest.Config) -> None:
    global _worker, _rootpath
    _worker = hasattr(config, "workerinput")
    _rootpath = config.rootpath


def pytest_collection_finish(session: pytest.Session) -> None:
    for argument in session.config.args:
        path, _, selector = argument.partition("::")
        named = (session.config.invocation_params.dir / path).resolve()
        if selector or not FUNCTIONAL_TESTS.is_relative_to(named):
            RECORDING.complete = False  # a file or test of the tier, not all of it


def pytest_deselected(items: list[pytest.Item]) -> None:
    RECORDING.complete = False  # -k, -m, --lf


def pytest_runtest_logfinish(nodeid: str) -> None:
    _finished.add(nodeid)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_node_collection_finished(node: Any, ids: list[str]) -> None:
    for nodeid in ids:
        if (_rootpath / nodeid.partition("::")[0]).is_relative_to(FUNCTIONAL_TESTS):
            _collected.add(nodeid)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: Any) -> None:
    share = getattr(node, "workeroutput", {}).get(WORKER_OUTPUT)
    if share is None:
        return  # the worker crashed, or ran no functional test
    RECORDING.complete = RECORDING.complete and share["complete"]
    for function, entries in share["functions"].items():
        RECORDING.functions.setdefault(function, set()).update(tuple(e) for e in entries)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if _worker:
        functions = {name: sorted(ops) for name, ops in RECORDING.functions.items()}
        share = {"complete": RECORDING.complete, "functions": functions}
        session.config.workeroutput[WORKER_OUTPUT] = share  # type: ignore[attr-defined]
        return
    functional = _collected or {
        i.nodeid for i in session.items if i.path.is_relative_to(FUNCTIONAL_TESTS)
    }
    ran = functional & _finished
    if not ran:
        return  # collected only, or no functional test at all: keep the last run's record
    if ran != functional:
        RECORDING.complete = False  # stopped early (-x, --maxfail, Ctrl-C)
    RECORDING.write(OPERATIONS_FILE)


@pytest.fixture
def clock() -> FrozenClock:
    return FrozenClock()


@pytest.fixture
def services(clock: FrozenClock) -> Iterator[Services]:
    with mock_aws():
        boto3.DEFAULT_SESSION = one_session()  # restored when the mock stops
        svc = Services(test_settings(), clock)
        create_all(svc.dynamodb, svc.kms, "dev", svc.events_client, sqs=svc.sqs)
        for client in (svc.dynamodb, svc.kms, svc.last_use_dynamodb, svc.events_client, svc.sqs):
            RECORDING.watch(client)
        runtime.use(svc)
        try:
            yield svc
        finally:
            runtime.use(None)


def another_container(services: Services) -> Services:
    """The services of another Lambda function's container: the same AWS clients (so the
    same recorder, and the hooks tests register on them), but its own caches.

    The API handler and the authorizer never share a container, so neither may rely on what
    the other fetched: the authorizer fetches the signing keys' public halves itself.
    """
    other = Services(services.settings, services.clock)
    vars(other).update(  # cached_property slots
        dynamodb=services.dynamodb,
        kms=services.kms,
        last_use_dynamodb=services.last_use_dynamodb,
        events_client=services.events_client,
        sqs=services.sqs,
    )
    return other


# The data-plane authorizer's function invoked with an API Gateway event: its answer.
Invoke = Callable[[dict[str, Any]], dict[str, Any]]


@contextmanager
def authorizer(services: Services) -> Iterator[Invoke]:
    """Invokes the authorizer's function as Lambda would: in a container of its own
    (`another_container`), the test's services back in place after each call."""
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


@pytest.fixture
def authorize(services: Services) -> Iterator[Invoke]:
    with authorizer(services) as invoke:
        yield invoke


@dataclass
class Answer:
    status: int
    headers: dict[str, str]
    body: bytes

    @property
    def json(self) -> Any:
        return json.loads(self.body) if self.body else None

    @property
    def code(self) -> str | None:
        data = self.json
        return data.get("code") if isinstance(data, dict) else None


class Api:
    """A thin HTTP caller over chalice's test client, plus fixtures' shortcuts."""

    def __init__(self, client: Client, services: Services):
        self._client = client
        self.services = services

    def call(
        self,
        method: str,
        path: str,
        credential: str | None = None,
        workspace: str | None = None,
        body: Any = None,
        raw: bytes | None = None,
        headers: dict[str, str] | None = None,
    ) -> Answer:
        sent = {"Content-Type": "application/json"} if (body is not None or raw) else {}
        if credential is not None:
            sent["Authorization"] = f"Bearer {credential}"
        if workspace is not None:
            sent["X-Workspace-Id"] = workspace
        sent.update(headers or {})
        payload = (
            raw if raw is not None else (json.dumps(body).encode() if body is not None else b"")
        )
        response = self._client.http.request(method, path, headers=sent, body=payload)
        return Answer(response.status_code, dict(response.headers), response.body)

    # -- shortcuts -------------------------------------------------------------------------

    def token(self, user_id: str) -> str:
        """A user token minted now, by the wall clock: PyJWT judges exp and iat by real time,
        whatever the frozen clock that drives key expiry says. The user exists from then on,
        as after a first login (so it can be added to workspaces)."""
        from chalicelib.clock import Clock
        from chalicelib.sessions.access_tokens import TokenSigner

        register_user(self.services, user_id)
        session_id = sign_in(self.services, user_id)
        signer = TokenSigner(
            self.services.kms, self.services.signing_keys, self.services.settings.issuer, Clock()
        )
        return signer.mint(user_id, extra={"sid": session_id}).token

    def workspace(self, owner_token: str, name: str = "Team") -> str:
        answer = self.call("POST", "/v1/workspaces", owner_token, body={"name": name})
        assert answer.status == 201, answer.body
        return str(answer.json["id"])

    def add_member(self, owner_token: str, workspace_id: str, user_id: str) -> None:
        """Adds someone who is not a member yet (201; 200 would mean they already were)."""
        register_user(self.services, user_id)  # only users who signed in can be added
        answer = self.call("PUT", f"/v1/workspaces/{workspace_id}/members/{user_id}", owner_token)
        assert answer.status == 201, answer.body

    def create_key(self, credential: str, **fields: Any) -> dict[str, Any]:
        fields.setdefault("label", "test key")
        answer = self.call("POST", "/v1/auth/api-keys", credential, body=fields)
        assert answer.status == 201, answer.body
        return dict(answer.json)


def register_user(services: Services, user_id: str) -> None:
    """The profile item a first login writes, for a user the tests name themselves."""
    from chalicelib import items
    from chalicelib.clock import rfc3339
    from chalicelib.table import to_item

    item = to_item(
        {
            "userId": user_id,
            "issuer": ISSUER,
            "subject": user_id,
            "createdAt": rfc3339(services.clock.now()),
        }
    )
    item.update(items.profile(user_id))
    services.dynamodb.put_item(TableName=services.settings.table_name, Item=item)


def sign_in(services: Services, user_id: str) -> str:
    """A live sign-in of `user_id` (its listed item and its refresh family, as a login
    writes them), which no move of the tests' clock ends: the id its tokens carry in `sid`."""
    from datetime import timedelta

    from chalicelib import ids, items
    from chalicelib.clock import epoch, rfc3339
    from chalicelib.table import TTL_ATTRIBUTE, to_item

    now = services.clock.now()
    session_id = ids.ulid(now)
    services.sign_ins.listed(user_id, session_id, now, None)
    family = to_item(
        {
            "userId": user_id,
            "familyId": session_id,
            "createdAt": rfc3339(now),
            TTL_ATTRIBUTE: epoch(now + timedelta(days=3650)),
        }
    )
    family.update(items.refresh_family(session_id))
    services.dynamodb.put_item(TableName=services.settings.table_name, Item=family)
    return session_id


@pytest.fixture
def api(services: Services) -> Iterator[Api]:
    from app import app

    with Client(app) as client:
        yield Api(client, services)


@pytest.fixture
def alice(api: Api) -> str:
    """A user token for usr_alice."""
    return api.token("usr_alice")


@pytest.fixture
def bob(api: Api) -> str:
    return api.token("usr_bob")


@pytest.fixture
def one_request_at_a_time() -> Iterator[None]:
    """moto answers one request at a time, as DynamoDB applies each item's writes in order
    (moto's own backend is not thread-safe); the service's threads run concurrently."""
    from moto.dynamodb.responses import DynamoHandler

    lock = threading.Lock()
    call_action = DynamoHandler.call_action

    def serialized(self: Any) -> Any:
        with lock:
            return call_action(self)

    DynamoHandler.call_action = serialized  # type: ignore[method-assign]
    try:
        yield
    finally:
        DynamoHandler.call_action = call_action  # type: ignore[method-assign]
