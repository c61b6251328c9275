"""Remembered consent: what a person allowed an MCP client, so that it is not asked again.

One item per person and client (the client id hashed: a metadata document's id is a URL):
the workspace, the resource and the scopes last allowed. A later authorization of the same
client for the same resource and the same or fewer scopes goes straight back to the client
after sign-in, in that workspace, while the person is still its member, when its redirect
is https (a loopback or app-scheme redirect is always asked: `service.py`). Allowing on the page
replaces the item (another workspace, other scopes); revoking any grant of the client forgets
it, so the next authorization asks again.

Items (see `items.py`):
  USER#<userId>  CONSENT#<sha256(clientId)>  clientId, workspaceId, resource, scope, givenAt
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from chalicelib import items
from chalicelib.clock import parse_rfc3339, rfc3339
from chalicelib.sessions.refresh import GRANT_CLIENT, family_from_values
from chalicelib.table import (
    EXISTS,
    Attribute,
    Shape,
    delete,
    get_consistent,
    put,
    to_item,
    write_once,
)


@dataclass(frozen=True)
class Consent:
    workspace_id: str
    resource: str
    scopes: frozenset[str]
    client_id: str | None = None
    given_at: datetime | None = None

    def covers(self, resource: str, scopes: Sequence[str]) -> bool:
        return resource == self.resource and set(scopes) <= self.scopes


def _scope(scopes: frozenset[str]) -> str:
    return " ".join(sorted(scopes))


def _scopes(scope: str) -> frozenset[str]:
    return frozenset(scope.split())


CONSENT_SHAPE = Shape(
    Consent,
    [
        Attribute("clientId", "client_id"),
        Attribute("workspaceId", "workspace_id"),
        Attribute("resource"),
        Attribute("scope", "scopes", write=_scope, read=_scopes),
        Attribute("givenAt", "given_at", rfc3339, parse_rfc3339),
    ],
)


def _key(user_id: str, client_id: str) -> dict[str, Any]:
    return items.consent(user_id, hashlib.sha256(client_id.encode()).hexdigest())


class ConsentStore:
    def __init__(self, client: Any, table_name: str):
        self._client = client
        self._table = table_name

    def find(self, user_id: str, client_id: str) -> Consent | None:
        values = get_consistent(self._client, self._table, _key(user_id, client_id))
        consent = CONSENT_SHAPE.record(values) if values is not None else None
        return consent if consent is not None and consent.client_id == client_id else None

    def remember(
        self,
        *,
        user_id: str,
        client_id: str,
        workspace_id: str,
        resource: str,
        scope: str,
        now: datetime,
    ) -> dict[str, Any]:
        """The write remembering it, made after the consent decision's commit point."""
        consent = Consent(workspace_id, resource, _scopes(scope), client_id, now)
        item = to_item(CONSENT_SHAPE.values(consent))
        item.update(_key(user_id, client_id))
        return put(self._table, item)

    def forget(self, user_id: str, client_id: str) -> None:
        write_once(self._client, delete(self._table, _key(user_id, client_id), EXISTS))

    def forget_grant(self, grant_id: str) -> None:
        """Forgets the consent behind an MCP grant (a refresh-token family), if any."""
        found = get_consistent(self._client, self._table, items.refresh_family(grant_id))
        family = family_from_values(found) if found is not None else None
        if family is not None and family.grant is not None and family.user_id is not None:
            self.forget(family.user_id, family.grant[GRANT_CLIENT])
