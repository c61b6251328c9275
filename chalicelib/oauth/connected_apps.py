"""Connected apps: the MCP grants a person has given, as they see and end them.

A grant is a refresh-token family (sessions/refresh.py); the person's partition holds one
index item per grant (`USER#<user>` / `GRANT#<family>`), written with the `grant.created`
event through the outbox of the grant's commit point (its authorization code, used once), so
that a grant issued is listed: at once, or by the sweep after a crash. A remembered consent
(consents.py) sits among them (`GRANT#cns_…`): it is listed from the moment it is remembered,
before any token was issued (`kind` "consent", never used), unless a grant of the same client
is in force (that grant's row stands for it: disconnecting it forgets the consent too).
Listing is one Query of the person's `GRANT#` items, then one batch read of the families
(whether each is still in force, when it was last refreshed). Disconnecting a grant revokes
the family: its refresh token and every access token it issued are refused from the next
request (their decisions read the family). Disconnecting a remembered consent forgets it, so
the next authorization asks again, and first revokes every grant of that client the person
has in force.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from botocore.exceptions import ClientError

from chalicelib import errors, items
from chalicelib.access.principal import Principal
from chalicelib.clock import Clock, parse_rfc3339, rfc3339
from chalicelib.events.log import EventLog
from chalicelib.events.model import GRANT_CREATED, GRANT_REVOKED, Event
from chalicelib.oauth.consents import (
    CONSENT_SHAPE,
    Consent,
    ConsentStore,
    consent_id,
    is_consent_id,
    is_consent_item,
)
from chalicelib.oauth.grants import in_force
from chalicelib.sessions.refresh import GRANT_CLIENT, RefreshTokenStore, family_from_values
from chalicelib.table import (
    EXISTS,
    Attribute,
    Pending,
    Shape,
    commit,
    delete,
    get_consistent,
    get_many,
    is_condition_failure,
    to_item,
    under,
)


@dataclass(frozen=True)
class ConnectedApp:
    id: str
    client_id: str
    client_name: str | None
    workspace_id: str
    scopes: tuple[str, ...]
    created_at: datetime
    last_used_at: datetime | None
    # "grant": tokens were issued and are in force; "consent": a remembered consent, under
    # which no token of the client is in force (none issued yet, or all ended since).
    kind: str = "grant"


@dataclass(frozen=True)
class GrantIndex:
    """A grant's item under its user (`USER#<user>` / `GRANT#<grant>`): what lists it."""

    grant_id: str
    client_id: str
    client_name: str | None
    workspace_id: str
    scope: str
    created_at: datetime


def _moment(text: str) -> datetime:
    parsed = parse_rfc3339(text)
    assert parsed is not None  # written by rfc3339
    return parsed


GRANT_INDEX_SHAPE = Shape(
    GrantIndex,
    [
        Attribute("grantId", "grant_id"),
        Attribute("clientId", "client_id"),
        Attribute("clientName", "client_name"),
        Attribute("workspaceId", "workspace_id"),
        Attribute("scope", read=str),
        Attribute("createdAt", "created_at", rfc3339, _moment),
    ],
)


class ConnectedApps:
    def __init__(
        self,
        client: Any,
        table: str,
        refresh_tokens: RefreshTokenStore,
        consents: ConsentStore,
        events: EventLog | None,
        clock: Clock,
    ):
        self._client = client
        self._table = table
        self._refresh_tokens = refresh_tokens
        self._consents = consents
        self._events = events
        self._clock = clock

    def created(
        self,
        user_id: str,
        grant_id: str,
        grant: Mapping[str, str],
        client_name: str | None,
        now: datetime,
    ) -> tuple[list[dict[str, Any] | Pending], Event | None]:
        """The writes that list a new grant (its index item and its `grant.created` event),
        after the grant's commit point through its outbox, and the event to publish once
        the grant is written."""
        index = GrantIndex(
            grant_id,
            grant[GRANT_CLIENT],
            client_name,
            grant["workspaceId"],
            grant["scope"],
            now,
        )
        item = to_item(GRANT_INDEX_SHAPE.values(index))
        item.update(items.user_grant(user_id, grant_id))
        members: list[dict[str, Any] | Pending] = [
            Pending.new_item(self._table, item, now)
        ]
        event = None
        if self._events is not None:
            event = self._events.new(
                GRANT_CREATED,
                audience=user_id,
                actor={"userId": user_id, "credential": "user_token", "keyId": None},
                workspace_id=grant["workspaceId"],
                data=_data(grant_id, grant[GRANT_CLIENT], client_name, grant["scope"]),
            )
            members.append(self._events.member(event))
        return members, event

    def published(self, event: Event | None) -> None:
        if event is not None and self._events is not None:
            self._events.published(event)

    def _listed(self, user_id: str) -> tuple[list[GrantIndex], list[Consent]]:
        """The person's grant index items and remembered consents: one Query."""
        indexed: list[GrantIndex] = []
        consents: list[Consent] = []
        for values in under(
            self._client, self._table, items.user_pk(user_id), items.GRANT_PREFIX, consistent=True
        ):
            if is_consent_item(values):
                consents.append(CONSENT_SHAPE.record(values))
            else:
                indexed.append(GRANT_INDEX_SHAPE.record(values))
        return indexed, consents

    def list(self, user_id: str) -> list[ConnectedApp]:
        """The grants of `user_id` still in force, and their remembered consents for clients
        without one, newest first."""
        indexed, consents = self._listed(user_id)
        now = self._clock.now()
        found = []
        families = get_many(
            self._client, self._table, [items.refresh_family(i.grant_id) for i in indexed]
        )
        for index, family in zip(indexed, families, strict=True):
            if not in_force(family, now):
                continue
            assert family is not None
            found.append(
                ConnectedApp(
                    id=index.grant_id,
                    client_id=index.client_id,
                    client_name=index.client_name,
                    workspace_id=index.workspace_id,
                    scopes=tuple(index.scope.split()),
                    created_at=index.created_at,
                    last_used_at=family_from_values(family).last_refreshed_at,
                )
            )
        connected = {app.client_id for app in found}
        for consent in consents:
            if consent.client_id is None or consent.client_id in connected:
                continue
            assert consent.given_at is not None  # written with it
            found.append(
                ConnectedApp(
                    id=consent_id(consent.client_id),
                    client_id=consent.client_id,
                    client_name=consent.client_name,
                    workspace_id=consent.workspace_id,
                    scopes=tuple(sorted(consent.scopes)),
                    created_at=consent.given_at,
                    last_used_at=None,
                    kind="consent",
                )
            )
        return sorted(found, key=lambda app: (app.created_at, app.id), reverse=True)

    def revoke(self, principal: Principal, grant_id: str) -> None:
        """Disconnects the caller's own grant or remembered consent (someone else's, or none:
        404)."""
        if is_consent_id(grant_id):
            self._forget(principal, grant_id)
            return
        user_id = principal.user_id
        values = get_consistent(self._client, self._table, items.user_grant(user_id, grant_id))
        if values is None:
            raise errors.NOT_FOUND.error()
        index = GRANT_INDEX_SHAPE.record(values)
        now = self._clock.now()
        self._consents.forget_grant(grant_id)
        self._refresh_tokens.revoke_family(grant_id, now, reason="disconnected")
        # Commit point: of two disconnects racing, one removes the index item (and records
        # the event); the family is revoked either way.
        self._removed(
            principal,
            grant_id,
            index.workspace_id,
            _data(grant_id, index.client_id, index.client_name, index.scope),
        )

    def _forget(self, principal: Principal, listed_id: str) -> None:
        """Forgets the caller's remembered consent: the next authorization asks again.

        What was issued under it goes first (every grant of the client the person has in
        force), so that a failure leaves the consent listed, to be revoked again, never a
        forgotten consent with its tokens still working."""
        user_id = principal.user_id
        values = get_consistent(self._client, self._table, items.user_grant(user_id, listed_id))
        if values is None or not is_consent_item(values):
            raise errors.NOT_FOUND.error()
        consent = CONSENT_SHAPE.record(values)
        now = self._clock.now()
        indexed, _ = self._listed(user_id)
        of_client = [i.grant_id for i in indexed if i.client_id == consent.client_id]
        families = get_many(
            self._client, self._table, [items.refresh_family(g) for g in of_client]
        )
        for grant_id, family in zip(of_client, families, strict=True):
            if in_force(family, now):
                self._refresh_tokens.revoke_family(grant_id, now, reason="disconnected")
        # Commit point: of two revocations racing, one removes the consent (and records the
        # event).
        scope = " ".join(sorted(consent.scopes))
        data = _data(listed_id, consent.client_id or "", consent.client_name, scope)
        self._removed(principal, listed_id, consent.workspace_id, data)

    def _removed(
        self, principal: Principal, listed_id: str, workspace_id: str | None, data: dict[str, Any]
    ) -> None:
        """The commit point of a disconnect: the listed item deleted on condition that it is
        there, with its `grant.revoked` event; a concurrent disconnect that won records it."""
        user_id = principal.user_id
        point = delete(self._table, items.user_grant(user_id, listed_id), EXISTS)
        members: list[dict[str, Any] | Pending] = []
        event = None
        if self._events is not None:
            event = self._events.by(
                principal, GRANT_REVOKED, audience=user_id, workspace_id=workspace_id, data=data
            )
            members.append(self._events.member(event))
        try:
            commit(self._client, point, members)
        except ClientError as error:
            if not is_condition_failure(error):
                raise
            return  # the concurrent disconnect recorded it
        self.published(event)


def _data(grant_id: str, client_id: str, client_name: str | None, scope: str) -> dict[str, Any]:
    return {
        "grantId": grant_id,
        "clientId": client_id,
        "clientName": client_name,
        "scopes": scope.split(),
    }
