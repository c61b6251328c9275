"""A lost answer never logs a user out, never loses a key, never answers 500 (in-process).

The scenarios of `tests/retry_scenarios.py`, on chalice.test.Client and moto, with the
failure injected into the services' own boto3 clients (`local/faults.py`).
"""

from __future__ import annotations

from typing import Any

import pytest

from chalicelib.runtime import Services
from local.faults import KINDS, Fault, FaultInjector
from tests.functional.conftest import Api
from tests.functional.oauth import trust
from tests.oidc_issuer import FakeIssuer
from tests.retry_scenarios import SCENARIOS, Reply, Service, every_call


class InProcess:
    """The `Service` of the scenarios, over the functional test client."""

    def __init__(self, api: Api, injector: FaultInjector, issuer: FakeIssuer):
        self._api = api
        self._injector = injector
        self._issuer = issuer
        self._users = 0

    def call(
        self,
        method: str,
        path: str,
        credential: str | None = None,
        body: Any = None,
        headers: dict[str, str] | None = None,
    ) -> Reply:
        answer = self._api.call(method, path, credential, body=body, headers=headers)
        return Reply(answer.status, answer.json, answer.headers)

    def arm(self, fault: Fault | None) -> None:
        self._injector.arm(fault)

    def fired(self) -> bool:
        return self._injector.fired

    def operations(self) -> list[str]:
        return list(self._injector.operations)

    def user_token(self) -> str:
        self._users += 1
        return self._api.token(f"usr_retry{self._users}")

    def id_token(self, subject: str) -> str:
        return self._issuer.id_token(subject)


@pytest.fixture
def injector(services: Services) -> FaultInjector:
    injector = FaultInjector()
    for client in (services.dynamodb, services.last_use_dynamodb, services.kms):
        injector.attach(client)
    return injector


@pytest.fixture
def service(api: Api, services: Services, injector: FaultInjector) -> Service:
    issuer = FakeIssuer()
    trust(services, issuer)
    return InProcess(api, injector, issuer)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_a_failure_at_any_aws_call_ends_as_one_successful_call(
    service: Service, scenario: str, kind: str
) -> None:
    covered = every_call(service, SCENARIOS[scenario], kind)
    assert covered >= 2  # every path reads or signs before it writes


def test_the_injector_reaches_every_aws_call_of_a_rotation(
    service: Service, injector: FaultInjector
) -> None:
    token = service.user_token()
    old = service.call("POST", "/v1/auth/api-keys", token, body={"label": "ci"}).body
    injector.arm(Fault(99, "lost"))
    service.call("POST", f"/v1/auth/api-keys/{old['id']}/rotate", token)
    assert injector.operations == [
        "dynamodb.GetItem",  # the caller's sign-in (the user token's decision)
        "dynamodb.GetItem",  # the old key
        "kms.Encrypt",  # the successor's plaintext, sealed
        "dynamodb.UpdateItem",  # the commit point: the old key claimed for its successor
        "dynamodb.PutItem",  # the successor's credential
        "dynamodb.PutItem",  # the successor's owner item
        "dynamodb.UpdateItem",  # the old key's owner item
        "dynamodb.PutItem",  # the key.rotated event
        "dynamodb.UpdateItem",  # the outbox cleared
    ]
