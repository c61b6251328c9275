"""The work queue of deliveries (and of public revocation reports): SQS, with a table backlog.

A message is sent to the stage's queue (WEBHOOK_QUEUE_NAME), with a delay of at most 15
minutes (SQS's most); a later due time rides in the message, and the worker sends it on
again until it is due. When the queue refuses a message, it is kept in the table instead
(`WHBACKLOG`), and every run of the worker (at least every 5 minutes, by a schedule) hands
the backlog to the queue once it takes messages again: an outage of the queue delays work,
it loses none.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

from botocore.exceptions import ClientError

from chalicelib import ids, items
from chalicelib.clock import Clock, epoch
from chalicelib.logs import logger
from chalicelib.table import (
    EXISTS,
    delete,
    is_condition_failure,
    put_if_absent,
    query,
    to_item,
    write,
)

MAX_DELAY = 900  # seconds: SQS's longest DelaySeconds
BATCH = 10  # SendMessageBatch's most entries
DUE = "due"  # a message's field: when it is due (epoch seconds), if later than its delay


class QueueUnavailable(Exception):
    """Neither the queue nor the table took a message."""


class WorkQueue:
    def __init__(
        self,
        sqs: Callable[[], Any],
        queue_name: str | None,
        dynamodb: Any,
        table_name: str,
        clock: Clock,
    ):
        self._sqs = sqs  # built on first use
        self._name = queue_name
        self._url: str | None = None
        self._dynamodb = dynamodb
        self._table = table_name
        self._clock = clock

    @property
    def configured(self) -> bool:
        return self._name is not None

    def _queue_url(self) -> str:
        if self._url is None:
            self._url = str(self._sqs().get_queue_url(QueueName=self._name)["QueueUrl"])
        return self._url

    def send(self, messages: Sequence[dict[str, Any]], due: datetime | None = None) -> None:
        """Sends `messages`, each due at `due` (now if None); whatever the queue refuses is
        kept in the backlog. QueueUnavailable when the backlog refuses it too."""
        if not messages or not self.configured:
            return
        now = self._clock.now()
        wait = max(0, epoch(due) - epoch(now)) if due else 0
        bodies = [{**m, DUE: epoch(due)} if wait > MAX_DELAY and due else m for m in messages]
        refused: list[dict[str, Any]] = []
        for start in range(0, len(bodies), BATCH):
            batch = bodies[start : start + BATCH]
            try:
                answer = self._sqs().send_message_batch(
                    QueueUrl=self._queue_url(),
                    Entries=[
                        {
                            "Id": str(n),
                            "MessageBody": json.dumps(body, separators=(",", ":")),
                            "DelaySeconds": min(wait, MAX_DELAY),
                        }
                        for n, body in enumerate(batch)
                    ],
                )
                failed = {int(f["Id"]) for f in answer.get("Failed", [])}
            except Exception:  # noqa: BLE001 - whatever failed, the backlog keeps the work
                failed = set(range(len(batch)))
            refused += [batch[n] for n in sorted(failed)]
        if refused:
            self._keep(refused, due or now)

    def _keep(self, messages: list[dict[str, Any]], due: datetime) -> None:
        logger.warning(
            "queue refused messages: kept in the backlog", extra={"count": len(messages)}
        )
        try:
            for message in messages:
                record = to_item(
                    {"body": json.dumps(message, separators=(",", ":")), "dueAt": epoch(due)}
                )
                # Backlog ids are ULIDs: a drain reads the oldest first.
                record.update(items.backlog_message(ids.ulid(self._clock.now())))
                write(self._dynamodb, put_if_absent(self._table, record))
        except Exception as error:  # noqa: BLE001 - the caller decides what a loss means
            raise QueueUnavailable() from error

    def drain(self, limit: int = 100) -> int:
        """Hands up to `limit` backlog messages to the queue; how many it took."""
        if not self.configured:
            return 0
        moved = 0
        backlog = query(
            self._dynamodb, self._table, "#pk = :pk", {"pk": items.BACKLOG_PK}, page_size=limit
        )
        for values in backlog:
            if moved >= limit:
                break
            message = json.loads(values["body"])
            due = datetime.fromtimestamp(int(values["dueAt"]), self._clock.now().tzinfo)
            try:
                self._sqs_send_one(message, due)
            except Exception:  # noqa: BLE001 - still refused: it stays for the next drain
                return moved
            gone = delete(self._table, items.backlog_message(values["sk"]), EXISTS)
            try:
                write(self._dynamodb, gone)
            except ClientError as error:
                if not is_condition_failure(error):  # another drain moved it: sent twice,
                    raise  # which a worker settles (each attempt is recorded once)
            moved += 1
        return moved

    def _sqs_send_one(self, message: dict[str, Any], due: datetime) -> None:
        wait = max(0, epoch(due) - epoch(self._clock.now()))
        body = {**message, DUE: epoch(due)} if wait > MAX_DELAY else message
        self._sqs().send_message(
            QueueUrl=self._queue_url(),
            MessageBody=json.dumps(body, separators=(",", ":")),
            DelaySeconds=min(wait, MAX_DELAY),
        )
