"""Users: each OpenID Connect login (issuer, subject) maps to one stable `usr_` id.

Items (see `items.py`):
  IDP#<issuer>#<subject>  IDP       the login's user id: the one read on every exchange
  USER#<userId>           PROFILE   issuer, subject, email, name, createdAt, lastLoginAt
  EMAIL#<email>           EMAIL     who last signed in with this verified email

The profile keeps an email only when the issuer said it is verified (`email_verified`): an
owner adds a member by email, and an unverified one could be anybody's. A later sign-in with
an unverified email forgets it; one without the claim keeps what was known.

An issuer never contains `#` (it is an https URL without fragment), so the partition key
splits unambiguously even when a subject does.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from botocore.exceptions import ClientError

from chalicelib import ids, items
from chalicelib.clock import parse_rfc3339, rfc3339
from chalicelib.errors import DependencyUnavailable
from chalicelib.logs import logger
from chalicelib.sessions.openid import Identity
from chalicelib.table import (
    EXISTS,
    Attribute,
    Pending,
    Shape,
    assignments,
    commit,
    complete,
    get_consistent,
    get_many,
    is_condition_failure,
    put,
    put_if_absent,
    to_item,
    update,
    write_once,
)
from chalicelib.workspaces.model import Person


def _verified_email(identity: Identity) -> str | None:
    return identity.email if identity.email_verified is True else None


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


@dataclass(frozen=True)
class _Login:
    user_id: str
    issuer: str
    subject: str


@dataclass(frozen=True)
class _EmailOwner:
    user_id: str
    email: str
    updated_at: datetime


@dataclass(frozen=True)
class _Profile:
    """A profile as stored: every field may be absent (None) from an older or partial one,
    and older profiles may hold an unverified email."""

    user_id: str | None = None
    issuer: str | None = None
    subject: str | None = None
    email: str | None = None
    email_verified: Any = None
    name: str | None = None
    created_at: str | None = None
    last_login_at: str | None = None


LOGIN_SHAPE = Shape(
    _Login, [Attribute("userId", "user_id", read=str), Attribute("issuer"), Attribute("subject")]
)
EMAIL_SHAPE = Shape(
    _EmailOwner,
    [
        Attribute("userId", "user_id", read=str),
        Attribute("email"),
        Attribute("updatedAt", "updated_at", write=rfc3339, read=parse_rfc3339),
    ],
)
PROFILE_SHAPE = Shape(
    _Profile,
    [
        Attribute("userId", "user_id"),
        Attribute("issuer"),
        Attribute("subject", read=_text),
        Attribute("email", read=_text),
        Attribute("emailVerified", "email_verified"),
        Attribute("name", read=_text),
        Attribute("createdAt", "created_at"),
        Attribute("lastLoginAt", "last_login_at"),
    ],
)


def _person(user_id: str, values: dict[str, Any] | None) -> Person:
    """Profiles written before emails had to be verified may hold an unverified one."""
    if not values:
        return Person(user_id)
    profile = PROFILE_SHAPE.record(values)
    email = profile.email if profile.email_verified is True else None
    return Person(user_id, email, profile.name)


class UserStore:
    def __init__(self, client: Any, table_name: str, bookkeeping_client: Any = None):
        self._client = client
        self._table = table_name
        # The profile's last login is bookkeeping: written with a short timeout, no retry.
        self._bookkeeping = bookkeeping_client or client

    def find_login(self, issuer: str, subject: str) -> str | None:
        """The user id of this login, or None if it has never signed in."""
        found = get_consistent(self._client, self._table, items.login(issuer, subject))
        return LOGIN_SHAPE.record(found).user_id if found else None

    def exists(self, user_id: str) -> bool:
        """Whether this user has ever signed in (its profile is written at the first login)."""
        found = get_consistent(self._client, self._table, items.profile(user_id), "#pk")
        return found is not None

    def label(self, user_id: str) -> str | None:
        """How to name the user to themselves (the MCP consent page): email, name or subject."""
        profile = get_consistent(self._client, self._table, items.profile(user_id))
        if not profile:
            return None
        person = _person(user_id, profile)
        return person.email or person.name or PROFILE_SHAPE.record(profile).subject

    def person(self, user_id: str) -> Person:
        """What is known of a user (nothing for one who never signed in)."""
        profile = get_consistent(self._client, self._table, items.profile(user_id))
        return _person(user_id, profile)

    def people(self, user_ids: list[str]) -> dict[str, Person]:
        """What is known of each of these users, by id (`get_many`: 100 a request)."""
        unique = list(dict.fromkeys(user_ids))
        profiles = get_many(self._client, self._table, [items.profile(u) for u in unique])
        return {u: _person(u, p) for u, p in zip(unique, profiles, strict=True)}

    def find_by_email(self, email: str) -> str | None:
        """The user who last signed in with this verified email, or None. The profile is
        read to confirm it: an email item outlives a change of the user's email."""
        found = get_consistent(self._client, self._table, items.email(email))
        if not found:
            return None
        user_id = EMAIL_SHAPE.record(found).user_id
        known = self.person(user_id).email
        return user_id if known is not None and known.lower() == email.lower() else None

    def _email_item(self, user_id: str, email: str, now: datetime) -> dict[str, Any]:
        item = to_item(EMAIL_SHAPE.values(_EmailOwner(user_id, email, now)))
        item.update(items.email(email))
        # No condition: two users may have signed in with one email (two issuers, a
        # reassigned address); the latest sign-in is who the email names now.
        return put(self._table, item)

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
        login = to_item(LOGIN_SHAPE.values(_Login(user_id, identity.issuer, identity.subject)))
        login.update(items.login(identity.issuer, identity.subject))
        first = _Profile(
            user_id,
            identity.issuer,
            identity.subject,
            _verified_email(identity),
            identity.email_verified,
            identity.name,
            rfc3339(now),
            rfc3339(now),
        )
        profile = to_item(PROFILE_SHAPE.values(first))
        profile.update(items.profile(user_id))
        email = _verified_email(identity)
        also = [self._email_item(user_id, email, now)] if email is not None else []
        # Two first logins of one person can race (two tabs, a retried request). The login
        # item is written only if absent, so exactly one user id wins; the loser reads it.
        # Commit point: the login item; the profile follows through its outbox.
        try:
            commit(
                self._client,
                put_if_absent(self._table, login),
                [Pending.new_item(self._table, profile, now), *also],
            )
        except ClientError as error:
            if not is_condition_failure(error):
                raise
            winner = self.find_login(identity.issuer, identity.subject)
            if winner is None:  # the condition failed, yet nothing is there: not a race
                raise DependencyUnavailable("DynamoDB") from None
            if winner == user_id:  # an earlier attempt of this write, its answer lost
                complete(self._client, put_if_absent(self._table, login))
            return winner
        return user_id

    def _record_login(self, user_id: str, identity: Identity, now: datetime) -> None:
        """Keeps the profile current: the latest verified email and name the issuer sent."""
        email = _verified_email(identity)
        # What the issuer sent now (None: not sent, the stored value kept).
        sent = _Profile(
            email=email,
            email_verified=identity.email_verified,
            name=identity.name,
            last_login_at=rfc3339(now),
        )
        values = {n: v for n, v in PROFILE_SHAPE.values(sent).items() if v is not None}
        expression = "SET " + assignments(values)
        if identity.email is not None and email is None:  # an email, but not verified
            expression += " REMOVE #email"
        # Never create a profile from an update: a missing one stays missing.
        current = update(self._table, items.profile(user_id), expression, EXISTS, values)
        if write_once(self._bookkeeping, current) and email is not None:
            write_once(self._bookkeeping, self._email_item(user_id, email, now))
