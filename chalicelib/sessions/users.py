"""Users: each OpenID Connect login (issuer, subject) maps to one stable `usr_` id.

Items (see `items.py`):
  IDP#<issuer>#<subject>  IDP       the login's user id: the one read on every exchange
  USER#<userId>           PROFILE   issuer, subject, email, name, createdAt, lastLoginAt

An issuer never contains `#` (it is an https URL without fragment), so the partition key
splits unambiguously even when a subject does.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from botocore.exceptions import ClientError

from chalicelib import ids, items
from chalicelib.clock import rfc3339
from chalicelib.errors import DependencyUnavailable
from chalicelib.logs import logger
from chalicelib.sessions.openid import Identity
from chalicelib.table import (
    EXISTS,
    assignments,
    get_consistent,
    is_condition_failure,
    put_if_absent,
    to_item,
    transact,
    update,
    write_once,
)


class UserStore:
    def __init__(self, client: Any, table_name: str, bookkeeping_client: Any = None):
        self._client = client
        self._table = table_name
        # The profile's last login is bookkeeping: written with a short timeout, no retry.
        self._bookkeeping = bookkeeping_client or client

    def find_login(self, issuer: str, subject: str) -> str | None:
        """The user id of this login, or None if it has never signed in."""
        found = get_consistent(self._client, self._table, items.login(issuer, subject))
        return str(found["userId"]) if found else None

    def exists(self, user_id: str) -> bool:
        """Whether this user has ever signed in (its profile is written at the first login)."""
        found = get_consistent(self._client, self._table, items.profile(user_id), "#pk")
        return found is not None

    def label(self, user_id: str) -> str | None:
        """How to name the user to themselves (the MCP consent page): email, name or subject."""
        profile = get_consistent(self._client, self._table, items.profile(user_id))
        if not profile:
            return None
        for attribute in ("email", "name", "subject"):
            if isinstance(profile.get(attribute), str):
                return str(profile[attribute])
        return None

    def sign_in(self, identity: Identity, now: datetime) -> str:
        """The user id for this login, created on the first one. Safe under concurrency."""
        user_id = self.find_login(identity.issuer, identity.subject)
        if user_id is not None:
            try:
                self._record_login(user_id, identity, now)
            except DependencyUnavailable:  # bookkeeping never fails a login
                logger.warning("profile update failed", extra={"user_id": user_id})
            return user_id
        return self._create(identity, now)

    def _create(self, identity: Identity, now: datetime) -> str:
        user_id = ids.new_user_id(now)
        login = to_item({"userId": user_id, "issuer": identity.issuer, "subject": identity.subject})
        login.update(items.login(identity.issuer, identity.subject))
        profile = to_item(
            {
                "userId": user_id,
                "issuer": identity.issuer,
                "subject": identity.subject,
                "email": identity.email,
                "emailVerified": identity.email_verified,
                "name": identity.name,
                "createdAt": rfc3339(now),
                "lastLoginAt": rfc3339(now),
            }
        )
        profile.update(items.profile(user_id))
        # Two first logins of one person can race (two tabs, a retried request). The login
        # item is written only if absent, so exactly one user id wins; the loser reads it.
        try:
            transact(
                self._client,
                [put_if_absent(self._table, login), put_if_absent(self._table, profile)],
            )
        except ClientError as error:
            if not is_condition_failure(error):
                raise
            winner = self.find_login(identity.issuer, identity.subject)
            if winner is None:  # the condition failed, yet nothing is there: not a race
                raise DependencyUnavailable("DynamoDB") from None
            return winner
        return user_id

    def _record_login(self, user_id: str, identity: Identity, now: datetime) -> None:
        """Keeps the profile current: the latest email and name the issuer sent, if any."""
        sent = {
            "email": identity.email,
            "emailVerified": identity.email_verified,
            "name": identity.name,
        }
        values = {"lastLoginAt": rfc3339(now)} | {n: v for n, v in sent.items() if v is not None}
        # Never create a profile from an update: a missing one stays missing.
        current = update(
            self._table, items.profile(user_id), "SET " + assignments(values), EXISTS, values
        )
        write_once(self._bookkeeping, current)
