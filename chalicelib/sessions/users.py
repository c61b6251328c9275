"""Users: each OpenID Connect login (issuer, subject) maps to one stable `usr_` id.

Items (see `table.py`):
  IDP#<issuer>#<subject>  IDP       the login's user id: the one read on every exchange
  USER#<userId>           PROFILE   issuer, subject, email, name, createdAt, lastLoginAt

An issuer never contains `#` (it is an https URL without fragment), so the partition key
splits unambiguously even when a subject does.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from botocore.exceptions import ClientError

from chalicelib import ids
from chalicelib.clock import rfc3339
from chalicelib.errors import DependencyUnavailable
from chalicelib.logs import logger
from chalicelib.sessions.openid import Identity
from chalicelib.table import (
    PARTITION_KEY,
    dynamodb_errors,
    get_consistent,
    is_condition_failure,
    key,
    put_if_absent,
    to_attribute,
    to_item,
    user_pk,
)

LOGIN_SK = "IDP"
PROFILE_SK = "PROFILE"


def login_pk(issuer: str, subject: str) -> str:
    return f"IDP#{issuer}#{subject}"


class UserStore:
    def __init__(self, client: Any, table_name: str, bookkeeping_client: Any = None):
        self._client = client
        self._table = table_name
        # The profile's last login is bookkeeping: written with a short timeout, no retry.
        self._bookkeeping = bookkeeping_client or client

    def find_login(self, issuer: str, subject: str) -> str | None:
        """The user id of this login, or None if it has never signed in."""
        found = get_consistent(self._client, self._table, login_pk(issuer, subject), LOGIN_SK)
        return str(found["userId"]) if found else None

    def exists(self, user_id: str) -> bool:
        """Whether this user has ever signed in (its profile is written at the first login)."""
        found = get_consistent(
            self._client, self._table, user_pk(user_id), PROFILE_SK, projection="#pk"
        )
        return found is not None
    def label(self, user_id: str) -> str | None:
        """How to name the user to themselves (the MCP consent page): email, name or subject."""
        profile = get_consistent(self._client, self._table, user_pk(user_id), PROFILE_SK)
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
        login.update(key(login_pk(identity.issuer, identity.subject), LOGIN_SK))
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
        profile.update(key(user_pk(user_id), PROFILE_SK))
        # Two first logins of one person can race (two tabs, a retried request). The login
        # item is written only if absent, so exactly one user id wins; the loser reads it.
        try:
            with dynamodb_errors():
                self._client.transact_write_items(
                    TransactItems=[
                        put_if_absent(self._table, login),
                        put_if_absent(self._table, profile),
                    ]
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
        names = {"#last": "lastLoginAt", "#pk": PARTITION_KEY}
        values: dict[str, Any] = {":last": {"S": rfc3339(now)}}
        assignments = ["#last = :last"]
        for attribute, value in (
            ("email", identity.email),
            ("emailVerified", identity.email_verified),
            ("name", identity.name),
        ):
            if value is not None:
                names[f"#{attribute}"] = attribute
                values[f":{attribute}"] = to_attribute(value)
                assignments.append(f"#{attribute} = :{attribute}")
        try:
            with dynamodb_errors():
                self._bookkeeping.update_item(
                    TableName=self._table,
                    Key=key(user_pk(user_id), PROFILE_SK),
                    UpdateExpression="SET " + ", ".join(assignments),
                    # Never create a profile from an update: a missing one stays missing.
                    ConditionExpression="attribute_exists(#pk)",
                    ExpressionAttributeNames=names,
                    ExpressionAttributeValues=values,
                )
        except ClientError as error:
            if not is_condition_failure(error):
                raise
