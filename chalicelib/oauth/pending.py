"""Pending authorizations: an MCP client's validated request, from `/authorize` to consent.

Created once the request passed every check, before the browser leaves for the login
provider; signed in when the provider's answer was verified; consumed (deleted) by the
consent decision: the commit point of the code's grant, the code written after it. It
lives `LIFETIME`.

It is tied to the browser that started it: its `bindingHash` is the SHA-256 of a secret in
that browser's cookie (`browser.py`), so another browser cannot finish it, and nothing
secret is stored here.

Items (see `items.py`):
  OAUTHREQ#<requestId>  REQ   clientId, clientName, redirectUri, codeChallenge, state,
                              resource, scope, askConsent, nonce, bindingHash, status,
                              userId, ttl
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any

from chalicelib import items
from chalicelib.clock import epoch
from chalicelib.table import (
    ABSENT,
    EXISTS,
    TTL_ATTRIBUTE,
    Attribute,
    Shape,
    delete,
    get_consistent,
    put,
    to_item,
    update,
    write,
    write_once,
)

LIFETIME = timedelta(minutes=10)
SIGNING_IN = "signing_in"  # at the login provider
CONSENTING = "consenting"  # signed in, the consent page shown


def new_request_id() -> str:
    return secrets.token_urlsafe(24)


@dataclass(frozen=True)
class PendingAuthorization:
    request_id: str
    client_id: str
    redirect_uri: str
    code_challenge: str
    resource: str
    scope: str
    nonce: str
    binding_hash: str
    expires: int  # epoch seconds
    client_name: str | None = None
    state: str | None = None
    ask_consent: bool = False  # `prompt=consent`: the page is shown even if remembered
    status: str = SIGNING_IN
    user_id: str | None = None

    def __repr__(self) -> str:
        return f"PendingAuthorization(client_id={self.client_id!r}, status={self.status!r})"


PENDING_SHAPE = Shape(
    PendingAuthorization,
    [
        Attribute("clientId", "client_id"),
        Attribute("redirectUri", "redirect_uri"),
        Attribute("codeChallenge", "code_challenge"),
        Attribute("resource"),
        Attribute("scope"),
        Attribute("nonce"),
        Attribute("bindingHash", "binding_hash"),
        Attribute("clientName", "client_name"),
        Attribute("state"),
        Attribute("askConsent", "ask_consent", read=bool, missing=False),  # absent in older items
        Attribute("status"),
        Attribute("userId", "user_id"),
        Attribute(TTL_ATTRIBUTE, "expires", read=int),
    ],
)


class PendingStore:
    def __init__(self, client: Any, table_name: str):
        self._client = client
        self._table = table_name

    def create(self, pending: PendingAuthorization) -> None:
        item = to_item(PENDING_SHAPE.values(pending))
        item.update(items.oauth_request(pending.request_id))
        # A 192-bit id never collides; the condition makes that an error, not a merge.
        write(self._client, put(self._table, item, ABSENT))

    def get(self, request_id: str, now: datetime) -> PendingAuthorization | None:
        """The unexpired pending authorization, or None (DynamoDB's TTL deletes late)."""
        if not request_id or len(request_id) > 64:
            return None
        values = get_consistent(self._client, self._table, items.oauth_request(request_id))
        if values is None or int(values[TTL_ATTRIBUTE]) <= epoch(now):
            return None
        return PENDING_SHAPE.record(values, request_id=request_id)

    def signed_in(self, pending: PendingAuthorization, user_id: str) -> PendingAuthorization:
        """Records who signed in; False-y races (a second callback) raise ClientError."""
        signed_in = update(
            self._table,
            items.oauth_request(pending.request_id),
            "SET #status = :consenting, #userId = :user",
            # One sign-in per authorization: a replayed callback finds it taken.
            "#status = :signing_in",
            {"consenting": CONSENTING, "signing_in": SIGNING_IN, "user": user_id},
        )
        write(self._client, signed_in)
        return replace(pending, status=CONSENTING, user_id=user_id)

    def consume(self, pending: PendingAuthorization) -> dict[str, Any]:
        """The write deleting it, only while it awaits consent: of two decisions
        posted at once (a double click), exactly one is taken."""
        return delete(
            self._table,
            items.oauth_request(pending.request_id),
            "#status = :consenting AND #userId = :user",
            {"consenting": CONSENTING, "user": pending.user_id or ""},
        )

    def discard(self, pending: PendingAuthorization) -> bool:
        """Deletes it (a denial, a failed sign-in); False if it was already gone."""
        gone = delete(self._table, items.oauth_request(pending.request_id), EXISTS)
        return write_once(self._client, gone)
