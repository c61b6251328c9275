"""Deliveries: each audit event of a workspace, to each of its subscriptions that wants it.

`WebhookDispatch.dispatch` is called with events already stored (`EventLog.published`): it
puts one message per event on the work queue and returns; nothing about a delivery can
block or fail the change that made the event. The worker (`Deliverer.handle`) fans an event
out into one delivery per subscription (each written once, named after its event), and
makes each attempt: a POST of `{"type", "timestamp", "data"}` signed per Standard Webhooks,
by the fetcher's rules (public addresses only, no redirects, 10 s), the answer's body
ignored. A 2xx is delivered; anything else is tried again after RETRY_DELAYS, then failed;
a subscription that has failed for FAILING_LIMIT without a success is disabled
(`webhook.disabled`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any, Protocol

from chalicelib.clock import Clock, epoch, parse_rfc3339, rfc3339
from chalicelib.events import model as events
from chalicelib.events.log import EventLog
from chalicelib.events.model import Event
from chalicelib.keys.vault import KeyVault
from chalicelib.logs import logger
from chalicelib.webhooks.model import (
    DELIVERY_TIMEOUT,
    FAILING_LIMIT,
    Delivery,
    Webhook,
    retry_delay,
)
from chalicelib.webhooks.queue import DUE, QueueUnavailable, WorkQueue
from chalicelib.webhooks.signing import headers
from chalicelib.webhooks.store import WebhookStore

EVENT = "event"  # a message's kind: an event to fan out
ATTEMPT = "attempt"  # a message's kind: one attempt of one delivery


class Poster(Protocol):
    """`fetch.SafeFetcher.post`: the status of a POST, or FetchRefused."""

    def post(self, url: str, body: bytes, headers: dict[str, str], timeout: float) -> int: ...


def event_message(event: Event) -> dict[str, Any]:
    return {
        "kind": EVENT,
        "workspaceId": event.workspace_id,
        "audience": event.audience,
        "eventId": event.id,
        "type": event.type,
        "timestamp": rfc3339(event.occurred_at),
        "data": event.detail(),
    }


def attempt_message(delivery: Delivery, number: int) -> dict[str, Any]:
    return {
        "kind": ATTEMPT,
        "workspaceId": delivery.workspace_id,
        "webhookId": delivery.webhook_id,
        "eventId": delivery.event_id,
        "attempt": number,
    }


def attempt_recorded(delivery: Delivery, number: int, state: str, status: int | None) -> None:
    """One line per attempt made and recorded: ids and the outcome, never the URL (its query
    may hold the receiver's secret) nor the body."""
    logger.info(
        "webhook attempt recorded",
        extra={"webhook_id": delivery.webhook_id, "event_id": delivery.event_id,
               "attempt": number, "state": state, "status": status},
    )


class WebhookDispatch:
    """The request path's side: events onto the queue, never failing the request."""

    def __init__(self, queue: WorkQueue):
        self._queue = queue

    def dispatch(self, stored: Sequence[Event]) -> None:
        messages = [event_message(e) for e in stored]
        try:
            self._queue.send(messages)
        except QueueUnavailable:
            for message in messages:
                logger.error(
                    "event not queued for webhooks",
                    extra={"event_id": message["eventId"], "type": message["type"]},
                )
        except Exception:  # noqa: BLE001 - a delivery never fails the change that made it
            logger.exception("event not queued for webhooks")


class Deliverer:
    """The worker's side: one queue message at a time (the queue delivers at least once;
    every step settles a repeat)."""

    def __init__(
        self,
        store: WebhookStore,
        queue: WorkQueue,
        poster: Poster,
        events_log: EventLog,
        clock: Clock,
        first_retry: timedelta | None = None,
        owned: Callable[[str], list[str]] = lambda user_id: [],
        vault: KeyVault | None = None,
    ):
        self._vault = vault  # opens the signing secrets, here only, to sign a delivery
        self._owned = owned  # the ids of the workspaces a user owns
        self._store = store
        self._queue = queue
        self._poster = poster
        self._events = events_log
        self._clock = clock
        self._first_retry = first_retry

    def handle(self, message: dict[str, Any]) -> None:
        due = message.get(DUE)
        if due is not None and due > epoch(self._clock.now()):
            # Later than the queue can wait at once: sent on until it is due.
            rest = {k: v for k, v in message.items() if k != DUE}
            self._queue.send([rest], due=datetime.fromtimestamp(due, UTC))
            return
        if message.get("kind") == EVENT:
            self.fan_out(message)
        elif message.get("kind") == ATTEMPT:
            self.attempt(message)

    def fan_out(self, message: dict[str, Any]) -> None:
        body = json.dumps(
            {"type": message["type"], "timestamp": message["timestamp"], "data": message["data"]},
            separators=(",", ":"),
        )
        now = self._clock.now()
        occurred = parse_rfc3339(message["timestamp"])
        created = []
        for webhook in self._subscriptions(message):
            if not webhook.enabled or not webhook.wants(message["type"]):
                continue
            if occurred is not None and occurred < webhook.created_at.replace(microsecond=0):
                continue  # still queued when the subscription was made: not its event
            delivery = Delivery(
                webhook_id=webhook.id,
                workspace_id=webhook.workspace_id,
                event_id=message["eventId"],
                event_type=message["type"],
                body=body,
                state="pending",
                attempts=0,
                created_at=now,
                next_attempt_at=now,
            )
            # Written once: a repeated message finds it and queues its first attempt again,
            # which the attempt's own condition makes harmless.
            self._store.add_delivery(delivery)
            created.append(attempt_message(delivery, 1))
        self._queue.send(created)

    def _subscriptions(self, message: dict[str, Any]) -> list[Webhook]:
        """The workspace's subscriptions; for an event of no workspace (an admin key's), those
        of every workspace its owner owns."""
        if message.get("workspaceId"):
            return self._store.list(message["workspaceId"])
        owned = self._owned(str(message.get("audience")))
        return [webhook for workspace_id in owned for webhook in self._store.list(workspace_id)]

    def attempt(self, message: dict[str, Any]) -> None:
        delivery = self._store.get_delivery(
            message["workspaceId"], message["webhookId"], message["eventId"]
        )
        number = int(message["attempt"])
        if delivery is None or delivery.state != "pending" or delivery.attempts != number - 1:
            return  # a repeat of an attempt already made, or a delivery gone
        now = self._clock.now()
        if delivery.next_attempt_at is not None and delivery.next_attempt_at > now:
            self._queue.send([message], due=delivery.next_attempt_at)
            return
        webhook = self._store.get(delivery.workspace_id, delivery.webhook_id)
        if webhook is None or not webhook.enabled:
            self._store.record_attempt(delivery, now, state="failed", nextAttemptAt=None)
            return
        status = self._post(webhook, delivery)
        if status is not None and 200 <= status < 300:
            recorded = self._store.record_attempt(
                delivery, now, state="delivered", lastStatus=status, nextAttemptAt=None
            )
            if recorded:
                attempt_recorded(delivery, number, "delivered", status)
                if webhook.failing_since is not None:
                    self._store.change(webhook, failingSince=None)
            return
        delay = retry_delay(number, self._first_retry)
        if delay is None:
            recorded = self._store.record_attempt(
                delivery, now, state="failed", lastStatus=status, nextAttemptAt=None
            )
            if recorded:
                attempt_recorded(delivery, number, "failed", status)
        else:
            next_at = now + delay
            recorded = self._store.record_attempt(
                delivery, now, lastStatus=status, nextAttemptAt=next_at
            )
            if recorded:
                attempt_recorded(delivery, number, "pending", status)
                self._queue.send([attempt_message(delivery, number + 1)], due=next_at)
        if recorded:
            self._failing(webhook)

    def _post(self, webhook: Webhook, delivery: Delivery) -> int | None:
        from chalicelib.fetch import FetchRefused

        body = delivery.body.encode()
        now = self._clock.now()
        signed = headers(self._opened(webhook, now), delivery.event_id, epoch(now), body)
        try:
            return self._poster.post(webhook.url, body, signed, DELIVERY_TIMEOUT)
        except FetchRefused as refused:
            logger.info(
                "webhook delivery not answered",
                extra={"webhook_id": webhook.id, "event_id": delivery.event_id,
                       "reason": refused.reason},
            )
            return None

    def _opened(self, webhook: Webhook, now: datetime) -> list[str]:
        """The secrets that sign now, opened. KMS unavailable raises (DependencyUnavailable)
        before anything is sent or recorded: the attempt stays pending, and the queue gives
        its message again (fail closed: never sent unsigned, never lost)."""
        if self._vault is None:
            raise RuntimeError("no key vault: a delivery is never sent unsigned")
        return [
            self._vault.open(sealed, webhook.id, webhook.workspace_id)
            for sealed in webhook.sealed_in_use(now)
        ]

    def _failing(self, webhook: Webhook) -> None:
        now = self._clock.now()
        if webhook.failing_since is None:
            self._store.mark_failing(webhook, now)
            return
        if now - webhook.failing_since < FAILING_LIMIT:
            return
        event = self._events.new(
            events.WEBHOOK_DISABLED,
            webhook.created_by,  # only the workspace's owner manages its subscriptions
            events.system(events.WEBHOOKS),
            workspace_id=webhook.workspace_id,
            data={"webhookId": webhook.id, "url": webhook.url,
                  "failingSince": rfc3339(webhook.failing_since)},
        )
        if not self._store.disable_failing(webhook, "failing", [self._events.member(event)]):
            return  # disabled already
        self._events.published(event)

    def retry(self, delivery: Delivery) -> None:
        """The deliveries API's retry: a finished delivery is tried once more, now."""
        if self._store.requeue(delivery, self._clock.now()):
            self._queue.send([attempt_message(delivery, delivery.attempts + 1)])
