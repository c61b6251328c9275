"""Webhook subscriptions and their deliveries in DynamoDB, under their workspace's partition.

  WS#<ws> / WH#<webhook id>                 the subscription
  WS#<ws> / WHCOUNT                         how many it has: the limit's conditional counter
  WS#<ws> / WHDLV#<webhook id>#<event id>   one event's delivery to it (ids are ULIDs: a
                                            query reads a subscription's newest first)

No change here uses a transaction: each has one conditional single-item write as its commit
point, and what follows it is idempotent. A change's audit event is a `Pending` member of its
commit (table.py): a crash after the commit point leaves it in the outbox, for the hourly
sweep to store and publish, once.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from datetime import datetime, timedelta
from typing import Any

from botocore.exceptions import ClientError

from chalicelib import items
from chalicelib.clock import epoch, parse_rfc3339, rfc3339
from chalicelib.dependencies import DependencyUnavailable
from chalicelib.table import (
    EXISTS,
    TTL_ATTRIBUTE,
    Pending,
    commit,
    committed,
    complete,
    delete,
    get_consistent,
    is_condition_failure,
    put_if_absent,
    to_item,
    under,
    update,
    write,
    write_once,
)
from chalicelib.webhooks.model import Delivery, Webhook

# Deliveries are kept this long after their event, then DynamoDB's TTL removes them.
DELIVERY_RETENTION = timedelta(days=30)


class LimitReached(Exception):
    """The workspace has as many subscriptions as the stage allows (WEBHOOK_LIMIT)."""

    def __init__(self, limit: int):
        super().__init__(limit)
        self.limit = limit


def _time(value: Any) -> datetime | None:
    return parse_rfc3339(value) if value else None


def to_webhook(values: dict[str, Any]) -> Webhook:
    created = parse_rfc3339(values["createdAt"])
    assert created is not None
    return Webhook(
        id=values["webhookId"],
        workspace_id=values["workspaceId"],
        url=values["url"],
        events=tuple(values["events"]),
        enabled=bool(values["enabled"]),
        description=values.get("description"),
        sealed_secret=values["sealedSecret"],
        created_at=created,
        created_by=values["createdBy"],
        sealed_previous=values.get("sealedPrevious"),
        previous_until=_time(values.get("previousUntil")),
        failing_since=_time(values.get("failingSince")),
        disabled_reason=values.get("disabledReason"),
    )


def to_delivery(values: dict[str, Any]) -> Delivery:
    created = parse_rfc3339(values["createdAt"])
    assert created is not None
    status = values.get("lastStatus")
    return Delivery(
        webhook_id=values["webhookId"],
        workspace_id=values["workspaceId"],
        event_id=values["eventId"],
        event_type=values["eventType"],
        body=values["body"],
        state=values["state"],
        attempts=int(values["attempts"]),
        created_at=created,
        next_attempt_at=_time(values.get("nextAttemptAt")),
        last_status=int(status) if status is not None else None,
        last_attempt_at=_time(values.get("lastAttemptAt")),
    )


class WebhookStore:
    def __init__(self, client: Any, table_name: str, limit: int):
        self._client = client
        self._table = table_name
        self._limit = limit  # subscriptions per workspace (WEBHOOK_LIMIT)

    # -- subscriptions ---------------------------------------------------------------------

    def create(self, webhook: Webhook, also: Sequence[Pending] = ()) -> None:
        """Takes one of the workspace's places, then writes the subscription and `also` (its
        event) through the outbox; LimitReached when no place is left. The counter's
        condition is what keeps two concurrent creations from both passing a count read as
        one below the limit: each takes its place in one conditional write before its
        subscription exists. Commit point: the subscription, put if absent."""
        counter = items.webhook_count(webhook.workspace_id)
        taken = update(
            self._table,
            counter,
            "ADD #webhooks :one",
            "attribute_not_exists(#webhooks) OR #webhooks < :max",
            {"one": 1, "max": self._limit},
        )
        if not write_once(self._client, taken):
            raise LimitReached(self._limit)
        record = to_item(
            {
                "webhookId": webhook.id,
                "workspaceId": webhook.workspace_id,
                "url": webhook.url,
                "events": list(webhook.events),
                "enabled": webhook.enabled,
                "description": webhook.description,
                "sealedSecret": webhook.sealed_secret,
                "createdAt": rfc3339(webhook.created_at),
                "createdBy": webhook.created_by,
            }
        )
        record.update(items.webhook(webhook.workspace_id, webhook.id))
        point = put_if_absent(self._table, record)
        try:
            commit(self._client, point, also)
        except ClientError as error:
            # A fresh id never collides: the condition failing means an earlier attempt of
            # this very write was applied and its answer lost.
            if not is_condition_failure(error):
                self._give_back(webhook.workspace_id)
                raise
            complete(self._client, point)
        except DependencyUnavailable:
            # Before or after the commit point: the place stays taken (the limit errs on
            # the strict side); after it, the sweep delivers what the outbox holds.
            raise
        except Exception:
            self._give_back(webhook.workspace_id)
            raise

    def _give_back(self, workspace_id: str) -> None:
        write(
            self._client,
            update(
                self._table,
                items.webhook_count(workspace_id),
                "ADD #webhooks :less",
                "#webhooks > :zero",
                {"less": -1, "zero": 0},
            ),
        )

    def get(self, workspace_id: str, webhook_id: str) -> Webhook | None:
        values = get_consistent(self._client, self._table, items.webhook(workspace_id, webhook_id))
        return to_webhook(values) if values else None

    def list(self, workspace_id: str) -> list[Webhook]:
        """In creation order."""
        found = under(
            self._client,
            self._table,
            items.workspace_pk(workspace_id),
            items.WEBHOOK_PREFIX,
            consistent=True,
        )
        return [to_webhook(values) for values in found]

    def change(self, webhook: Webhook, also: Sequence[Pending] = (), **values: Any) -> bool:
        """Sets `values` (attribute name -> value; None removes it) on an existing
        subscription, and `also` (its event) through the outbox: False when it is gone.
        Conditional on its existence, so a change racing a deletion never writes a
        subscription back."""
        sets = {name: value for name, value in values.items() if value is not None}
        removes = [name for name, value in values.items() if value is None]
        expression = "SET " + ", ".join(f"#{n} = :{n}" for n in sets) if sets else ""
        if removes:
            expression += " REMOVE " + ", ".join(f"#{n}" for n in removes)
        member = update(
            self._table,
            items.webhook(webhook.workspace_id, webhook.id),
            expression.strip(),
            EXISTS,
            {n: (rfc3339(v) if isinstance(v, datetime) else v) for n, v in sets.items()},
        )
        if not also:
            return write_once(self._client, member)
        return committed(self._client, member, also)

    def disable_failing(
        self, webhook: Webhook, reason: str, also: Sequence[Pending] = ()
    ) -> bool:
        """Disables an enabled subscription, with `also` (its event) through the outbox:
        True for the one caller that did it (of two workers failing it at once, only one
        records the event)."""
        member = update(
            self._table,
            items.webhook(webhook.workspace_id, webhook.id),
            "SET #enabled = :off, #disabledReason = :reason",
            f"{EXISTS} AND #enabled = :on",
            {"off": False, "on": True, "reason": reason},
        )
        return committed(self._client, member, also)

    def mark_failing(self, webhook: Webhook, since: datetime) -> None:
        """Records when its failures began, unless they began earlier."""
        member = update(
            self._table,
            items.webhook(webhook.workspace_id, webhook.id),
            "SET #failingSince = :since",
            f"{EXISTS} AND attribute_not_exists(#failingSince)",
            {"since": rfc3339(since)},
        )
        write_once(self._client, member)

    def delete(self, webhook: Webhook, also: Sequence[Pending] = ()) -> bool:
        """True when deleted, with `also` (its event) through the outbox; False when it was
        gone already. The deletion is the commit point (of two, one passes); the place it
        held is given back after it."""
        member = delete(self._table, items.webhook(webhook.workspace_id, webhook.id), EXISTS)
        if not committed(self._client, member, also):
            return False
        self._give_back(webhook.workspace_id)
        return True

    # -- deliveries ------------------------------------------------------------------------

    def add_delivery(self, delivery: Delivery) -> bool:
        """Writes a new delivery: False when it exists (the same event fanned out again)."""
        record = to_item(
            {
                "webhookId": delivery.webhook_id,
                "workspaceId": delivery.workspace_id,
                "eventId": delivery.event_id,
                "eventType": delivery.event_type,
                "body": delivery.body,
                "state": delivery.state,
                "attempts": delivery.attempts,
                "createdAt": rfc3339(delivery.created_at),
                "nextAttemptAt": rfc3339(delivery.next_attempt_at)
                if delivery.next_attempt_at
                else None,
                TTL_ATTRIBUTE: epoch(delivery.created_at + DELIVERY_RETENTION),
            }
        )
        record.update(items.delivery(delivery.workspace_id, delivery.webhook_id, delivery.event_id))
        return write_once(self._client, put_if_absent(self._table, record))

    def get_delivery(self, workspace_id: str, webhook_id: str, event_id: str) -> Delivery | None:
        values = get_consistent(
            self._client, self._table, items.delivery(workspace_id, webhook_id, event_id)
        )
        return to_delivery(values) if values else None

    def deliveries(
        self, workspace_id: str, webhook_id: str, after: str | None = None
    ) -> Iterator[Delivery]:
        """Newest first; after the delivery of event `after`, if given (a page's cursor)."""
        found = under(
            self._client,
            self._table,
            items.workspace_pk(workspace_id),
            items.deliveries_prefix(webhook_id),
            consistent=True,
            newest_first=True,
            page_size=100,
            start=items.delivery(workspace_id, webhook_id, after) if after else None,
        )
        return map(to_delivery, found)

    def record_attempt(self, delivery: Delivery, now: datetime, **values: Any) -> bool:
        """Records the outcome of attempt number `delivery.attempts + 1`. Conditional on the
        count still being `delivery.attempts`: of two workers given the same attempt (a queue
        delivers at least once), only one records it."""
        sets = {
            "attempts": delivery.attempts + 1,
            "lastAttemptAt": rfc3339(now),
            **{n: (rfc3339(v) if isinstance(v, datetime) else v) for n, v in values.items()
               if v is not None},
        }
        removes = [n for n, v in values.items() if v is None]
        expression = "SET " + ", ".join(f"#{n} = :{n}" for n in sets)
        if removes:
            expression += " REMOVE " + ", ".join(f"#{n}" for n in removes)
        member = update(
            self._table,
            items.delivery(delivery.workspace_id, delivery.webhook_id, delivery.event_id),
            expression,
            f"{EXISTS} AND #attempts = :before",
            {**sets, "before": delivery.attempts},
        )
        return write_once(self._client, member)

    def requeue(self, delivery: Delivery, now: datetime) -> bool:
        """A finished delivery made due again (the deliveries API's retry): True when it was
        finished (of two retries at once, one wins)."""
        member = update(
            self._table,
            items.delivery(delivery.workspace_id, delivery.webhook_id, delivery.event_id),
            "SET #state = :pending, #nextAttemptAt = :now",
            f"{EXISTS} AND #state <> :pending",
            {"pending": "pending", "now": rfc3339(now)},
        )
        return write_once(self._client, member)
