"""A workspace owned by Alice, a receiver that records what it is sent, and the work queue
(moto's SQS) run by the test, message by message, through the queue's consumer."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

import pytest

from chalicelib.fetch import FetchRefused
from chalicelib.runtime import Services
from tests.functional.conftest import Api

URL = "https://hooks.example.com/memory-auth"


@dataclass
class Posted:
    url: str
    body: bytes
    headers: dict[str, str]

    @property
    def json(self) -> Any:
        return json.loads(self.body)


@dataclass
class Receiver:
    """Answers each POST with the next scripted status (200 once the script is used up);
    None in the script: no answer in time."""

    script: list[int | None] = field(default_factory=list)
    posted: list[Posted] = field(default_factory=list)

    def post(self, url: str, body: bytes, headers: dict[str, str], timeout: float) -> int:
        self.posted.append(Posted(url, body, dict(headers)))
        status = self.script.pop(0) if self.script else 200
        if status is None:
            raise FetchRefused("it did not answer in time")
        return status


def verify(secret: str, posted: Posted) -> bool:
    """The receiver's check, written from the Standard Webhooks specification."""
    key = base64.b64decode(secret.removeprefix("whsec_"))
    signed = f"{posted.headers['webhook-id']}.{posted.headers['webhook-timestamp']}.".encode()
    expected = base64.b64encode(
        hmac.new(key, signed + posted.body, hashlib.sha256).digest()
    ).decode()
    return any(
        hmac.compare_digest(part.partition(",")[2], expected)
        for part in posted.headers["webhook-signature"].split()
    )


@pytest.fixture
def receiver(services: Services) -> Receiver:
    fake = Receiver()
    vars(services)["deliverer"] = consumer_of(services, fake)
    return fake


def consumer_of(services: Services, poster: Any) -> Any:
    """The services' Deliverer, posting to `poster`."""
    from chalicelib.webhooks.delivery import Deliverer

    # The first retry at once, as WEBHOOK_FIRST_RETRY_SECONDS=0 would: no test waits.
    built = services.deliverer
    return Deliverer(
        services.webhooks, services.work_queue, poster, services.event_log, services.clock,
        timedelta(0), built._owned, services.vault,
    )


@pytest.fixture
def workspace(api: Api, alice: str) -> str:
    return api.workspace(alice)


class Queue:
    """The stage's work queue, run by hand: each message through the consumer's handler."""

    def __init__(self, services: Services):
        self._services = services
        self._sqs = services.sqs
        self.url = self._sqs.get_queue_url(QueueName=services.settings.webhook_queue_name)[
            "QueueUrl"
        ]

    def messages(self) -> list[dict[str, Any]]:
        """What is waiting, without taking it."""
        answer = self._sqs.receive_message(
            QueueUrl=self.url, MaxNumberOfMessages=10, VisibilityTimeout=0
        )
        return [json.loads(m["Body"]) for m in answer.get("Messages", [])]

    def run_once(self) -> dict[str, Any]:
        """One batch through `app.webhook_delivery`; the messages it did not fail deleted.
        `records`: how many messages the batch held."""
        from app import webhook_delivery

        answer = self._sqs.receive_message(
            QueueUrl=self.url, MaxNumberOfMessages=10, VisibilityTimeout=0
        )
        records = [
            {"messageId": m["MessageId"], "body": m["Body"], "receipt": m["ReceiptHandle"]}
            for m in answer.get("Messages", [])
        ]
        result = webhook_delivery({"Records": records}, None)
        failed = {f["itemIdentifier"] for f in result["batchItemFailures"]}
        for record in records:
            if record["messageId"] not in failed:
                self._sqs.delete_message(QueueUrl=self.url, ReceiptHandle=record["receipt"])
        return {**result, "records": len(records)}

    def run(self, rounds: int = 20) -> None:
        """Until the queue is empty (at most `rounds` batches)."""
        for _ in range(rounds):
            backlog = self._backlog()
            if not self.run_once()["records"] and not backlog:
                return
        raise AssertionError("the queue did not empty")

    def _backlog(self) -> bool:
        from chalicelib import items

        found = self._services.dynamodb.query(
            TableName=self._services.settings.table_name,
            KeyConditionExpression="pk = :pk",
            ExpressionAttributeValues={":pk": {"S": items.BACKLOG_PK}},
        )
        return bool(found.get("Items"))


@pytest.fixture
def queue(services: Services) -> Iterator[Queue]:
    yield Queue(services)


def subscribe(api: Api, owner: str, workspace: str, **fields: Any) -> dict[str, Any]:
    body = {"url": URL, "events": ["*"], **fields}
    answer = api.call("POST", f"/v1/workspaces/{workspace}/webhooks", owner, body=body)
    assert answer.status == 201, answer.body
    return dict(answer.json)
