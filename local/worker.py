"""The work queue's consumer in the local stack: what SQS and Lambda do in AWS.

A thread long-polls the stage's queue on moto and hands each batch to the same handler the
deployed function runs (`app.webhook_delivery`), deletes the messages it did not fail, and
makes the failed ones visible again after RETRY_VISIBILITY seconds (AWS waits the queue's
visibility timeout). moto honours each message's delay, so a retry's wait is real here too:
WEBHOOK_FIRST_RETRY_SECONDS shortens the first one for tests.
"""

from __future__ import annotations

import threading
from typing import Any

from chalicelib.logs import logger

WAIT_SECONDS = 1  # each long poll
RETRY_VISIBILITY = 2  # seconds before a failed message is given again


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
        from chalicelib.runtime import services

        svc = services()
        url = svc.sqs.get_queue_url(QueueName=svc.settings.webhook_queue_name)["QueueUrl"]
        while not self._stop.is_set():
            try:
                self._once(svc.sqs, url, webhook_delivery)
            except Exception:  # noqa: BLE001 - moto restarting, a fault plan: poll again
                logger.exception("local queue worker")
                self._stop.wait(WAIT_SECONDS)

    def _once(self, sqs: Any, url: str, handler: Any) -> None:
        answer = sqs.receive_message(
            QueueUrl=url, MaxNumberOfMessages=10, WaitTimeSeconds=WAIT_SECONDS
        )
        messages = answer.get("Messages", [])
        records = [{"messageId": m["MessageId"], "body": m["Body"]} for m in messages]
        result = handler({"Records": records}, None)  # an empty batch drains the backlog
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
