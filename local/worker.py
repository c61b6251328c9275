"""The work queue's consumer in the local stack: what SQS and Lambda do in AWS.

A thread polls the stage's queue on moto and hands each batch to the same handler the
deployed function runs (`app.webhook_delivery`), deletes the messages it did not fail, and
makes the failed ones visible again after RETRY_VISIBILITY seconds (AWS waits the queue's
visibility timeout). moto honours each message's delay, so a retry's wait is real here too:
WEBHOOK_FIRST_RETRY_SECONDS shortens the first one for tests.
"""

from __future__ import annotations

import threading
import time
from typing import Any

from botocore.exceptions import ConnectTimeoutError, EndpointConnectionError, ReadTimeoutError

from chalicelib.logs import logger

# moto stopped or not answering: said once, in a line, until it answers again.
UNREACHABLE = (EndpointConnectionError, ConnectTimeoutError, ReadTimeoutError)

# Short polls, POLL_SECONDS apart: moto's long poll holds its SQS backend while it waits,
# which would hold up EventBridge's deliveries to queues of the same Region (a PutEvents
# answered late is sent again by botocore: the event would reach the bus twice).
POLL_SECONDS = 0.5
RETRY_VISIBILITY = 2  # seconds before a failed message is given again
DRAIN_EVERY = 5.0  # seconds between idle runs, which hand the backlog to the queue
MAX_BACKOFF = 16.0  # seconds between polls while moto does not answer


class QueueWorker:
    def __init__(self) -> None:
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="queue-worker", daemon=True)

    def start(self) -> QueueWorker:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)

    def _run(self) -> None:
        from app import webhook_delivery
        from chalicelib.runtime import aws_client, services

        svc = services()
        sqs = aws_client("sqs", svc.settings.region, timeout=5, attempts=1)
        backoff = 0.0
        drained = 0.0
        url = None
        unreachable = False
        while not self._stop.is_set():
            try:
                if url is None:
                    queue = svc.settings.webhook_queue_name
                    url = sqs.get_queue_url(QueueName=queue)["QueueUrl"]
                drained = self._once(sqs, url, webhook_delivery, drained)
                backoff = 0.0
                unreachable = False
            except UNREACHABLE as error:
                if not unreachable:
                    logger.warning(
                        "local queue worker: moto does not answer; polling again",
                        extra={"error": type(error).__name__},
                    )
                unreachable = True
                backoff = min(MAX_BACKOFF, max(1.0, backoff * 2))
                self._stop.wait(backoff)
            except Exception:  # noqa: BLE001 - moto frozen or restarting: poll again, later
                logger.exception("local queue worker")
                backoff = min(MAX_BACKOFF, max(1.0, backoff * 2))
                self._stop.wait(backoff)

    def _once(self, sqs: Any, url: str, handler: Any, drained: float) -> float:
        """One poll; when it gets nothing, an empty batch (the schedule's run in AWS, which
        hands the backlog to the queue) at most every DRAIN_EVERY seconds. When it drained."""
        answer = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, WaitTimeSeconds=0)
        messages = answer.get("Messages", [])
        if not messages:
            self._stop.wait(POLL_SECONDS)
            if time.monotonic() - drained < DRAIN_EVERY:
                return drained
            handler({"Records": []}, None)
            return time.monotonic()
        records = [{"messageId": m["MessageId"], "body": m["Body"]} for m in messages]
        result = handler({"Records": records}, None)
        failed = {f["itemIdentifier"] for f in result["batchItemFailures"]}
        for message in messages:
            if message["MessageId"] in failed:
                sqs.change_message_visibility(
                    QueueUrl=url,
                    ReceiptHandle=message["ReceiptHandle"],
                    VisibilityTimeout=RETRY_VISIBILITY,
                )
            else:
                sqs.delete_message(QueueUrl=url, ReceiptHandle=message["ReceiptHandle"])
        return drained
