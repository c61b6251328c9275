"""`POST /v1/auth/credentials/revoke`: no oracle, live keys revoked as leaks, rate limited."""

from __future__ import annotations

from typing import Any

import pytest

from chalicelib.keys.plaintext import generate_key
from chalicelib.runtime import Services
from tests.functional.conftest import Api
from tests.functional.webhooks.conftest import Queue

PATH = "/v1/auth/credentials/revoke"


def operations_of(services: Services, call: Any) -> tuple[list[str], Any]:
    """The AWS operations a call makes, in order, and its answer."""
    made: list[str] = []

    def record(model: Any, **_: Any) -> None:
        made.append(model.name)

    clients = (services.dynamodb, services.sqs, services.events_client)
    for client in clients:
        client.meta.events.register("before-parameter-build", record)
    try:
        answer = call()
    finally:
        for client in clients:
            client.meta.events.unregister("before-parameter-build", record)
    return made, answer


def test_a_live_key_an_unknown_key_and_junk_get_the_same_answer_and_the_same_work(
    services: Services, api: Api, alice: str
) -> None:
    live = api.create_key(alice)["key"]
    unknown = generate_key("usr_alice")
    junk = "sv" "c_not-a-key-at-all"
    api.call("POST", PATH, body={"credentials": ["warm up"]})  # the queue's URL, looked up once

    answers = {
        name: operations_of(services, lambda c=c: api.call("POST", PATH, body={"credentials": [c]}))
        for name, c in (("live", live), ("unknown", unknown), ("junk", junk))
    }

    statuses = {name: (a.status, a.body) for name, (_, a) in answers.items()}
    work = {name: ops for name, (ops, _) in answers.items()}
    assert set(statuses.values()) == {(202, b'{"received":1}')}
    assert work["live"] == work["unknown"] == work["junk"]
    assert "GetItem" not in work["live"] and "BatchGetItem" not in work["live"]


def test_each_active_key_reported_is_revoked_as_a_leak_after_the_answer(
    api: Api, alice: str, queue: Queue
) -> None:
    key = api.create_key(alice)

    answer = api.call(
        "POST", PATH, body={"credentials": [key["key"], "junk", generate_key("usr_bob")]}
    )
    before = api.call("GET", f"/v1/auth/api-keys/{key['id']}", alice)
    queue.run()
    after = api.call("GET", f"/v1/auth/api-keys/{key['id']}", alice)
    events = api.call("GET", "/v1/auth/events?type=key.leaked", alice)

    assert (answer.status, answer.json) == (202, {"received": 3})
    assert before.json["status"] == "active"
    assert after.json["status"] == "revoked"
    (leaked,) = events.json["events"]
    assert leaked["keyId"] == key["id"]
    assert leaked["actor"] == {"system": "credential-revocation"}
    assert leaked["data"] == {"source": "public revocation API"}


def test_the_61st_request_from_one_address_in_an_hour_is_429_with_retry_after(
    api: Api,
) -> None:
    answers = [api.call("POST", PATH, body={"credentials": ["x"]}) for _ in range(61)]

    assert {a.status for a in answers[:60]} == {202}
    assert (answers[60].status, answers[60].code) == (429, "too_many_requests")
    assert 1 <= int(answers[60].headers["Retry-After"]) <= 3600


@pytest.mark.parametrize(
    "body",
    [
        {"credentials": []},
        {"credentials": ["x"] * 1001},
        {"credentials": [1]},
        {"credentials": [""]},
        {"credentials": "x"},
        {},
    ],
)
def test_a_body_without_1_to_1000_strings_is_400_invalid_credentials_list(
    api: Api, body: dict[str, Any]
) -> None:
    answer = api.call("POST", PATH, body=body)

    assert (answer.status, answer.code) == (400, "invalid_credentials_list")


def test_another_field_is_400_unknown_field(api: Api) -> None:
    answer = api.call("POST", PATH, body={"credentials": ["x"], "more": 1})

    assert (answer.status, answer.code) == (400, "unknown_field")


def test_a_report_while_the_queue_is_down_is_kept_and_acted_on_once_it_is_back(
    services: Services, api: Api, alice: str, queue: Queue, monkeypatch: pytest.MonkeyPatch
) -> None:
    from botocore.exceptions import EndpointConnectionError

    key = api.create_key(alice)

    def down(**_: Any) -> Any:
        raise EndpointConnectionError(endpoint_url="https://sqs.us-east-1.amazonaws.com")

    with monkeypatch.context() as patched:
        patched.setattr(services.sqs, "send_message_batch", down)
        answer = api.call("POST", PATH, body={"credentials": [key["key"]]})
    queue.run()
    after = api.call("GET", f"/v1/auth/api-keys/{key['id']}", alice)

    assert (answer.status, answer.json) == (202, {"received": 1})
    assert after.json["status"] == "revoked"


def test_a_stage_without_the_work_queue_answers_503_and_acts_on_nothing(
    services: Services, api: Api
) -> None:
    from chalicelib.webhooks.queue import WorkQueue

    vars(services)["work_queue"] = WorkQueue(
        lambda: services.sqs, None, services.dynamodb, services.settings.table_name,
        services.clock,
    )

    answer = api.call("POST", PATH, body={"credentials": ["x"]})

    assert (answer.status, answer.code) == (503, "dependency_unavailable")
