"""Service clients in DynamoDB, without transactions: each change one conditional write.

  SCLIENT#<client id> / SCLIENT     the client: what the token endpoint and every decision of
                                    its tokens read (one strongly consistent GetItem)
  WS#<ws> / SCLIENTS                the workspace's client ids: a string set, the limit
  SCLIENT#<client id> / TOKENSEEN   until when its last `service_client.token_issued` stands

Creating: first a place in the workspace's set (`ADD`, on condition that the set holds fewer
than the limit: two concurrent creations cannot both pass a count read as one below it), then
the commit point, the client put if absent. Deleting: the commit point is the client's item
deleted (its tokens are refused on the next request), then its id leaves the set. Both set
writes are idempotent (a set, not a number: a retried write never counts twice). A crash
between the two writes leaves an id without a client in the set: the next creation that finds
the set full gives such places back (`_reclaim`). A change's audit event is a `Pending` member
of its commit (table.py): a crash after the commit point leaves it in the outbox, for the
hourly sweep to store and publish, once.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from botocore.exceptions import ClientError

from chalicelib import items
from chalicelib.clock import epoch, parse_rfc3339, rfc3339
from chalicelib.ids import ulid_time
from chalicelib.service_clients.model import ServiceClient
from chalicelib.table import (
    ABSENT,
    EXISTS,
    TTL_ATTRIBUTE,
    Pending,
    commit,
    committed,
    complete,
    delete,
    get_consistent,
    get_many_consistent,
    is_condition_failure,
    put,
    put_if_absent,
    to_item,
    update,
    write,
    write_once,
)

TOKEN_EVENT_WINDOW = timedelta(hours=1)
# An id in the set without its client this long after its creation time was left by a crash.
ORPHAN_AGE = timedelta(minutes=1)


class LimitReached(Exception):
    def __init__(self, limit: int):
        super().__init__(limit)
        self.limit = limit


def to_client(values: dict[str, Any]) -> ServiceClient:
    created = parse_rfc3339(values["createdAt"])
    assert created is not None  # written by `create`
    jwks = values.get("jwks")
    return ServiceClient(
        id=values["clientId"],
        workspace_id=values["workspaceId"],
        name=values["name"],
        scopes=tuple(values["scopes"]),
        # Nested values as JSON text: the table layer marshals flat values only.
        jwks=tuple(json.loads(jwks)) if jwks else None,
        jwks_uri=values.get("jwksUri"),
        created_at=created,
        created_by=values["createdBy"],
    )


class ServiceClientStore:
    def __init__(self, client: Any, table_name: str, limit: int):
        self._client = client
        self._table = table_name
        self._limit = limit  # clients per workspace (SERVICE_CLIENT_LIMIT)

    def create(self, client: ServiceClient, also: Sequence[Pending] = ()) -> None:
        """Writes the client, and `also` (its event) through the outbox. Raises LimitReached
        when the workspace has `limit` clients already."""
        if not self._take_place(client) and not (
            self._reclaim(client.workspace_id, client.created_at) and self._take_place(client)
        ):
            raise LimitReached(self._limit)
        values: dict[str, Any] = {
            "clientId": client.id,
            "workspaceId": client.workspace_id,
            "name": client.name,
            "scopes": list(client.scopes),
            "createdAt": rfc3339(client.created_at),
            "createdBy": client.created_by,
        }
        if client.jwks is not None:
            values["jwks"] = client.json_keys()
        if client.jwks_uri is not None:
            values["jwksUri"] = client.jwks_uri
        record = to_item(values)
        record.update(items.service_client(client.id))
        # Commit point: a fresh id never collides, so a failed condition means an earlier
        # attempt of this very write was applied and its answer lost.
        point = put_if_absent(self._table, record)
        try:
            commit(self._client, point, also)
        except ClientError as error:
            if not is_condition_failure(error):
                raise
            complete(self._client, point)

    def _take_place(self, client: ServiceClient) -> bool:
        # The condition is what makes the limit exact: the set's size is read and raised in
        # one conditional write, so two creations racing for the last place cannot both pass.
        taken = update(
            self._table,
            items.service_clients_of(client.workspace_id),
            "ADD #clients :id",
            "attribute_not_exists(#clients) OR size(#clients) < :max OR contains(#clients, :one)",
            {"id": {client.id}, "max": self._limit, "one": client.id},
        )
        return write_once(self._client, taken)

    def _reclaim(self, workspace_id: str, now: datetime) -> bool:
        """Gives back the places of ids without a client, left by a crash between a place
        taken and its client put (or between a client deleted and its place given back):
        True when one was given back."""
        ids = self.ids(workspace_id)
        found = (
            get_many_consistent(self._client, self._table, [items.service_client(i) for i in ids])
            if ids
            else []
        )
        orphans = [
            i
            for i, values in zip(ids, found, strict=True)
            if values is None and now - ulid_time(i.removeprefix("scl_")) > ORPHAN_AGE
        ]
        for orphan in orphans:
            self._give_back(workspace_id, orphan)
        return bool(orphans)

    def _give_back(self, workspace_id: str, client_id: str) -> None:
        write(
            self._client,
            update(
                self._table,
                items.service_clients_of(workspace_id),
                "DELETE #clients :id",
                values={"id": {client_id}},
            ),
        )

    def ids(self, workspace_id: str) -> list[str]:
        found = get_consistent(self._client, self._table, items.service_clients_of(workspace_id))
        return sorted((found or {}).get("clients") or ())  # ULIDs: creation order

    def get(self, client_id: str) -> ServiceClient | None:
        values = get_consistent(self._client, self._table, items.service_client(client_id))
        return to_client(values) if values else None

    def list(self, workspace_id: str) -> list[ServiceClient]:
        """In creation order: the set's ids, then their clients in one BatchGetItem."""
        ids = self.ids(workspace_id)
        if not ids:
            return []
        found = get_many_consistent(
            self._client, self._table, [items.service_client(i) for i in ids]
        )
        return [to_client(values) for values in found if values is not None]

    def delete(self, client: ServiceClient, also: Sequence[Pending] = ()) -> bool:
        """True when deleted, with `also` (its event) through the outbox; False when it was
        gone already."""
        # Commit point: the client's item deleted (of two deletions, one passes).
        point = delete(self._table, items.service_client(client.id), EXISTS)
        deleted = committed(self._client, point, also)
        self._give_back(client.workspace_id, client.id)  # idempotent: a retry repairs it
        return deleted

    def token_event_due(
        self, client: ServiceClient, now: datetime, also: Sequence[Pending] = ()
    ) -> bool:
        """True at most once per client and TOKEN_EVENT_WINDOW, then `also` (the event) is
        written through the outbox. The condition keeps a fleet of machines fetching tokens
        at once to one event."""
        until = epoch(now + TOKEN_EVENT_WINDOW)
        marker = to_item({"until": until, TTL_ATTRIBUTE: until})
        marker.update(items.service_client_token_seen(client.id))
        seen = put(self._table, marker, f"{ABSENT} OR #until <= :now", {"now": epoch(now)})
        return committed(self._client, seen, also)
