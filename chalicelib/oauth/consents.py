"""Remembered consent: what a person allowed an MCP client, so that it is not asked again.

One item per person and client (the client id hashed: a metadata document's id is a URL):
the workspace, the resource and the scopes last allowed. It sits among the person's connected
apps (`GRANT#` items, connected_apps.py), so that the one Query listing them finds it from the
moment it is remembered, before any token was issued, and it can be revoked there (its id,
`cns_<sha256(clientId)>`, is its row's). A later authorization of the same
client for the same resource and the same or fewer scopes goes straight back to the client
after sign-in, in that workspace, while the person is still its member, when its redirect
is https (a loopback or app-scheme redirect is always asked: `service.py`). Allowing on the page
replaces the item (another workspace, other scopes); revoking any grant of the client forgets
it, so the next authorization asks again.

Items (see `items.py`):
  USER#<userId>  GRANT#cns_<sha256(clientId)>  clientId, clientName, workspaceId, resource,
                                               scope, givenAt
Consents remembered at `CONSENT#<sha256(clientId)>` (before they were listed) are no longer
read: such a person is asked once more, and what they allow then is remembered here.
"""

from __future__ import annotations

import hashlib
import re
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

# A remembered consent's id, as connected apps show it: its item's place among the grants.
CONSENT_ID_PREFIX = "cns_"
CONSENT_ID = re.compile(r"cns_[0-9a-f]{64}")


def consent_id(client_id: str) -> str:
    return CONSENT_ID_PREFIX + hashlib.sha256(client_id.encode()).hexdigest()


def is_consent_id(text: str) -> bool:
    return CONSENT_ID.fullmatch(text) is not None


def is_consent_item(values: dict[str, Any]) -> bool:
    """Whether an item read among a person's grants (`GRANT#…`) is a remembered consent."""
    return str(values.get("sk", "")).startswith(items.GRANT_PREFIX + CONSENT_ID_PREFIX)


@dataclass(frozen=True)
class Consent:
    workspace_id: str
    resource: str
    scopes: frozenset[str]
    client_id: str | None = None
    given_at: datetime | None = None
    client_name: str | None = None

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
        Attribute("clientName", "client_name"),
        Attribute("workspaceId", "workspace_id"),
        Attribute("resource"),
        Attribute("scope", "scopes", write=_scope, read=_scopes),
        Attribute("givenAt", "given_at", rfc3339, parse_rfc3339),
    ],
)


def _key(user_id: str, client_id: str) -> dict[str, Any]:
    return items.user_grant(user_id, consent_id(client_id))


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
        client_name: str | None = None,
    ) -> dict[str, Any]:
        """The write remembering it, made after the consent decision's commit point."""
        consent = Consent(workspace_id, resource, _scopes(scope), client_id, now, client_name)
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
