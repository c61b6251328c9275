"""Managing a workspace's webhook subscriptions: owner only, at most LIMIT, each valid."""

from __future__ import annotations

import builtins
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any

from chalicelib import errors, ids
from chalicelib.access.principal import Principal
from chalicelib.clock import Clock
from chalicelib.events import model as events
from chalicelib.events.log import EventLog
from chalicelib.events.model import Event
from chalicelib.keys.vault import KeyVault
from chalicelib.webhooks.delivery import Deliverer
from chalicelib.webhooks.model import (
    ROTATION_OVERLAP,
    Delivery,
    InvalidWebhook,
    Webhook,
    check_events,
    check_url,
    event_id_of,
)
from chalicelib.webhooks.signing import new_secret
from chalicelib.webhooks.store import LimitReached, WebhookStore
from chalicelib.workspaces.model import Workspace

LIMIT = 10  # subscriptions per workspace


@dataclass(frozen=True)
class Created:
    webhook: Webhook
    secret: str  # shown once, in the answer that creates or rotates it


class WebhookService:
    def __init__(
        self,
        webhooks: WebhookStore,
        deliverer: Deliverer,
        events_log: EventLog,
        clock: Clock,
        local_mode: bool,
        vault: KeyVault,
    ):
        self._vault = vault  # seals each signing secret before it is stored
        self._webhooks = webhooks
        self._deliverer = deliverer
        self._events = events_log
        self._clock = clock
        self._local_mode = local_mode

    def _checked(self, url: str | None, types: list[str] | None) -> tuple[str | None, Any]:
        try:
            return (
                check_url(url, self._local_mode) if url is not None else None,
                check_events(types) if types is not None else None,
            )
        except InvalidWebhook as invalid:
            raise errors.INVALID_WEBHOOK.error(str(invalid)) from None

    def create(self, principal: Principal, workspace: Workspace, body: Any) -> Created:
        """`body`: the request's fields (`api/webhooks_models.NewWebhook`)."""
        url, types = self._checked(body.url, body.events)
        now = self._clock.now()
        webhook_id = ids.new_webhook_id(now)
        secret = new_secret()
        webhook = Webhook(
            id=webhook_id,
            workspace_id=workspace.id,
            url=url or "",
            events=types,
            enabled=True,
            description=body.description,
            sealed_secret=self._vault.seal(secret, webhook_id, workspace.id),
            created_at=now,
            created_by=principal.user_id,
        )
        event = self._event(principal, events.WEBHOOK_CREATED, workspace, webhook)
        try:
            self._webhooks.create(webhook, [self._events.member(event)])
        except LimitReached as full:
            raise errors.LIMIT_REACHED.error(
                f"At most {full.limit} webhooks per workspace: delete one first."
            ) from None
        self._events.published(event)
        return Created(webhook, secret)

    def list(self, workspace: Workspace) -> list[Webhook]:
        return self._webhooks.list(workspace.id)

    def get(self, workspace: Workspace, webhook_id: str) -> Webhook:
        webhook = (
            self._webhooks.get(workspace.id, webhook_id) if ids.is_webhook_id(webhook_id) else None
        )
        if webhook is None:
            raise errors.NOT_FOUND.error("No webhook with this id in this workspace.")
        return webhook

    def update(
        self, principal: Principal, workspace: Workspace, webhook_id: str, body: Any
    ) -> Webhook:
        """`body`: `api/webhooks_models.WebhookChanges` (each field optional)."""
        webhook = self.get(workspace, webhook_id)
        url, types = self._checked(body.url, body.events)
        changes: dict[str, Any] = {}
        if url is not None:
            changes["url"] = url
        if types is not None:
            changes["events"] = list(types)
        if body.enabled is not None:
            changes["enabled"] = body.enabled
            if body.enabled:  # enabled again: its failures start over
                changes["failingSince"] = None
                changes["disabledReason"] = None
        if not changes:
            return webhook
        changed = replace(
            webhook,
            url=url if url is not None else webhook.url,
            events=types if types is not None else webhook.events,
            enabled=body.enabled if body.enabled is not None else webhook.enabled,
        )
        event = self._event(principal, events.WEBHOOK_UPDATED, workspace, changed,
                            changed=sorted(k for k in changes if k in ("url", "events", "enabled")))
        if not self._webhooks.change(webhook, [self._events.member(event)], **changes):
            raise errors.NOT_FOUND.error("No webhook with this id in this workspace.")
        self._events.published(event)
        return self.get(workspace, webhook_id)

    def rotate_secret(self, principal: Principal, workspace: Workspace, webhook_id: str) -> Created:
        """A new secret; the old one keeps signing beside it for ROTATION_OVERLAP."""
        webhook = self.get(workspace, webhook_id)
        now = self._clock.now()
        secret = new_secret()
        sealed = self._vault.seal(secret, webhook.id, workspace.id)
        rotated = replace(
            webhook, sealed_secret=sealed, sealed_previous=webhook.sealed_secret,
            previous_until=now + ROTATION_OVERLAP,
        )
        event = self._event(principal, events.WEBHOOK_SECRET_ROTATED, workspace, rotated)
        # Both ciphertexts name this webhook: the current one moves over unopened.
        changed = self._webhooks.change(
            webhook,
            [self._events.member(event)],
            sealedSecret=sealed,
            sealedPrevious=webhook.sealed_secret,
            previousUntil=now + ROTATION_OVERLAP,
        )
        if not changed:
            raise errors.NOT_FOUND.error("No webhook with this id in this workspace.")
        self._events.published(event)
        return Created(rotated, secret)

    def delete(self, principal: Principal, workspace: Workspace, webhook_id: str) -> None:
        webhook = self.get(workspace, webhook_id)
        event = self._event(principal, events.WEBHOOK_DELETED, workspace, webhook)
        if not self._webhooks.delete(webhook, [self._events.member(event)]):
            raise errors.NOT_FOUND.error("No webhook with this id in this workspace.")
        self._events.published(event)

    def deliveries(
        self, workspace: Workspace, webhook_id: str, limit: int, cursor: str | None
    ) -> tuple[Sequence[Delivery], str | None]:
        webhook = self.get(workspace, webhook_id)
        after = None
        if cursor is not None:
            after = event_id_of(cursor)
            if after is None:
                raise errors.INVALID_PARAMETER.error("cursor is not a cursor this API issued.")
        found: builtins.list[Delivery] = []
        listed: Iterator[Delivery] = self._webhooks.deliveries(workspace.id, webhook.id, after)
        for delivery in listed:
            found.append(delivery)
            if len(found) == limit:
                break
        more = found[-1].id if len(found) == limit else None
        return found, more

    def retry(self, workspace: Workspace, webhook_id: str, delivery_id: str) -> Delivery:
        webhook = self.get(workspace, webhook_id)
        event_id = event_id_of(delivery_id)
        delivery = (
            self._webhooks.get_delivery(workspace.id, webhook.id, event_id) if event_id else None
        )
        if delivery is None:
            raise errors.NOT_FOUND.error("No delivery with this id for this webhook.")
        self._deliverer.retry(delivery)
        again = self._webhooks.get_delivery(workspace.id, webhook.id, delivery.event_id)
        return again or delivery

    def _event(
        self,
        principal: Principal,
        type: str,
        workspace: Workspace,
        webhook: Webhook,
        **more: Any,
    ) -> Event:
        """The change's event: a `Pending` member of its commit, published after it."""
        return self._events.by(
            principal,
            type,
            workspace.owner_id,
            workspace_id=workspace.id,
            data={"webhookId": webhook.id, "url": webhook.url, "events": list(webhook.events),
                  "enabled": webhook.enabled, **more},
        )
