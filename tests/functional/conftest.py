"""The app through `chalice.test.Client`, on moto in-process, with a clock tests can move.

Every AWS operation the app performs here is recorded (botocore's `before-parameter-build`
event) and written to build/aws-operations.json when the session ends, so that the
infrastructure tests can hold each function's IAM policy against what its code really calls.
Only calls made by the deployed code (`app.py`, `chalicelib/`) count: a test reading the table
directly, or an operator tool, does not run with the service's roles. Each operation is
attributed to the Lambda function that would perform it: to `Authorizer` while the
authorizer's handler (`app.authorizer`, `chalicelib/authorizer.py`) is on the call stack, to
`APIHandler` otherwise. The file reads

    {"format": "per-function",
     "functions": {"APIHandler": [["dynamodb", "GetItem"], ...], "Authorizer": [...]}}

with, per function, (service, operation) pairs plus (service, operation, member) for each
kind of transaction member. An older file (one list, no attribution) is replaced, never
merged: its operations cannot be attributed.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from chalice.test import Client
from moto import mock_aws

from chalicelib import runtime
from chalicelib.clock import FrozenClock
from chalicelib.config import Settings
from chalicelib.runtime import Services
from local.resources import create_all
from local.stack import stage_environment

ISSUER = "https://auth.test.example"
PROJECT_DIR = Path(__file__).resolve().parents[2]
OPERATIONS_FILE = PROJECT_DIR / "build" / "aws-operations.json"
APP_MODULE = str(PROJECT_DIR / "app.py")
AUTHORIZER_MODULE = str(PROJECT_DIR / "chalicelib" / "authorizer.py")
DEPLOYED_CODE = (str(PROJECT_DIR / "chalicelib") + "/", APP_MODULE)
# The Lambda functions, by their logical ids in the packaged template.
API_HANDLER = "APIHandler"
AUTHORIZER = "Authorizer"
FORMAT = "per-function"
# function → (service, operation), plus (service, operation, member) for each kind of
# transaction member, e.g. ("dynamodb", "TransactWriteItems", "ConditionCheck"): IAM
# authorizes those.
RECORDED: dict[str, set[tuple[str, ...]]] = {}


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
    )


def calling_function() -> str | None:
    """The Lambda function whose code makes the current AWS call; None if no deployed code does.

    The authorizer's function runs only `app.authorizer` and what it calls; an operation
    with the authorizer's handler anywhere on the stack is the authorizer's, any other one
    the deployed code makes is the API handler's.
    """
    frame = sys._getframe(1)
    deployed = False
    while frame is not None:
        code = frame.f_code
        if code.co_filename == AUTHORIZER_MODULE or (
            code.co_filename == APP_MODULE and code.co_name == "authorizer"
        ):
            return AUTHORIZER
        deployed = deployed or code.co_filename.startswith(DEPLOYED_CODE)
        frame = frame.f_back  # type: ignore[assignment]
    return API_HANDLER if deployed else None


def record_operations(client: Any) -> None:
    service = client.meta.service_model.signing_name

    def before_parameter_build(params: dict[str, Any], model: Any, **_: Any) -> None:
        function = calling_function()
        if function is None:
            return
        recorded = RECORDED.setdefault(function, set())
        recorded.add((service, model.name))
        for member in params.get("TransactItems", []):
            recorded.update((service, model.name, kind) for kind in member)

    client.meta.events.register("before-parameter-build", before_parameter_build)


def previously_recorded() -> dict[str, set[tuple[str, ...]]]:
    """What an earlier session wrote, if it attributed its operations to functions."""
    if not OPERATIONS_FILE.exists():
        return {}
    data = json.loads(OPERATIONS_FILE.read_text())
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        return {}  # the old single list: unattributable, so replaced
    return {
        function: {tuple(op) for op in operations}
        for function, operations in data["functions"].items()
    }


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if RECORDED:
        OPERATIONS_FILE.parent.mkdir(exist_ok=True)
        merged = previously_recorded()
        for function, operations in RECORDED.items():
            merged.setdefault(function, set()).update(operations)
        functions = {function: sorted(ops) for function, ops in sorted(merged.items())}
        OPERATIONS_FILE.write_text(
            json.dumps({"format": FORMAT, "functions": functions}, indent=1) + "\n"
        )


@pytest.fixture
def clock() -> FrozenClock:
    return FrozenClock()


@pytest.fixture
def services(clock: FrozenClock) -> Iterator[Services]:
    with mock_aws():
        svc = Services(test_settings(), clock)
        create_all(svc.dynamodb, svc.kms, "dev")
        record_operations(svc.dynamodb)
        record_operations(svc.kms)
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
    vars(other).update(dynamodb=services.dynamodb, kms=services.kms)  # cached_property slots
    return other


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
        from chalicelib.login.access_tokens import TokenSigner

        register_user(self.services, user_id)

        signer = TokenSigner(
            self.services.kms, self.services.signing_keys, self.services.settings.issuer, Clock()
        )
        return signer.mint(user_id).token

    def workspace(self, owner_token: str, name: str = "Team") -> str:
        answer = self.call("POST", "/v1/workspaces", owner_token, body={"name": name})
        assert answer.status == 201, answer.body
        return str(answer.json["id"])

    def add_member(self, owner_token: str, workspace_id: str, user_id: str) -> None:
        register_user(self.services, user_id)  # only users who signed in can be added
        answer = self.call("PUT", f"/v1/workspaces/{workspace_id}/members/{user_id}", owner_token)
        assert answer.status in (200, 201), answer.body

    def create_key(self, credential: str, **fields: Any) -> dict[str, Any]:
        fields.setdefault("label", "test key")
        answer = self.call("POST", "/v1/auth/api-keys", credential, body=fields)
        assert answer.status == 201, answer.body
        return dict(answer.json)


def register_user(services: Services, user_id: str) -> None:
    """The profile item a first login writes, for a user the tests name themselves."""
    from chalicelib.clock import rfc3339
    from chalicelib.login.users import PROFILE_SK
    from chalicelib.table import key, to_item, user_pk

    item = to_item(
        {
            "userId": user_id,
            "issuer": ISSUER,
            "subject": user_id,
            "createdAt": rfc3339(services.clock.now()),
        }
    )
    item.update(key(user_pk(user_id), PROFILE_SK))
    services.dynamodb.put_item(TableName=services.settings.table_name, Item=item)


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
