"""API keys in DynamoDB.

Each key is two items written and changed together in one transaction: the owner's item
(`USER#<owner>`/`KEY#<id>`, which makes keys owner-private by construction: a lookup by
another user's partition finds nothing) and the credential item (`CRED#<sha256>`), which
the request path reads with one strongly consistent GetItem. No cache sits in front of
either: a revocation is seen by the very next request.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from botocore.exceptions import ClientError

from chalicelib import ids
from chalicelib.clock import epoch, parse_rfc3339, rfc3339
from chalicelib.errors import DependencyUnavailable
from chalicelib.keys.model import ApiKey
from chalicelib.parsing import json_value
from chalicelib.table import (
    PARTITION_KEY,
    SORT_KEY,
    TTL_ATTRIBUTE,
    Item,
    dynamodb_errors,
    from_item,
    get_consistent,
    is_condition_failure,
    key,
    put_if_absent,
    to_item,
    user_pk,
)


class KeyNotActive(Exception):
    """A rotation lost its race, or the key was not active when it ran."""


def key_sk(key_id: str) -> str:
    return f"KEY#{key_id}"


def credential_pk(key_hash: str) -> str:
    return f"CRED#{key_hash}"


CREDENTIAL_SK = "CRED"


@dataclass(frozen=True)
class KeyPage:
    keys: list[ApiKey]
    next_cursor: str | None


def encode_cursor(key_id: str) -> str:
    return base64.urlsafe_b64encode(json.dumps({"after": key_id}).encode()).decode().rstrip("=")


def decode_cursor(cursor: str) -> str | None:
    """The key id a page starts after, or None for a cursor we did not issue."""
    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        after = json_value(base64.urlsafe_b64decode(padded.encode()))["after"]
    except (ValueError, KeyError, TypeError):
        return None
    return after if isinstance(after, str) and ids.is_key_id(after) else None


def _values(api_key: ApiKey) -> dict[str, Any]:
    return {
        "keyId": api_key.id,
        "ownerId": api_key.owner_id,
        "label": api_key.label,
        "category": api_key.category,
        "workspaceId": api_key.workspace_id,
        "scopes": list(api_key.scopes),
        "keyHash": api_key.key_hash,
        "hint": api_key.hint,
        "createdAt": rfc3339(api_key.created_at),
        "expiresAt": rfc3339(api_key.expires_at),
        "revokedAt": rfc3339(api_key.revoked_at),
        "replacedBy": api_key.replaced_by,
        TTL_ATTRIBUTE: epoch(api_key.retain_until) if api_key.retain_until else None,
    }


def _from_values(values: dict[str, Any]) -> ApiKey:
    created = parse_rfc3339(values["createdAt"])
    expires = parse_rfc3339(values["expiresAt"])
    assert created is not None and expires is not None
    ttl = values.get(TTL_ATTRIBUTE)
    return ApiKey(
        id=values["keyId"],
        owner_id=values["ownerId"],
        label=values["label"],
        category=values["category"],
        workspace_id=values.get("workspaceId"),
        scopes=tuple(values["scopes"]),
        key_hash=values["keyHash"],
        hint=values.get("hint"),
        created_at=created,
        expires_at=expires,
        revoked_at=parse_rfc3339(values.get("revokedAt")),
        replaced_by=values.get("replacedBy"),
        revealable=bool(values.get("revealable", False)),
        retain_until=datetime.fromtimestamp(ttl, tz=created.tzinfo) if ttl else None,
    )


class KeyStore:
    def __init__(self, client: Any, table_name: str):
        self._client = client
        self._table = table_name

    # -- items -------------------------------------------------------------------------

    def _owner_item(self, api_key: ApiKey, ciphertext: bytes | None) -> Item:
        item = to_item(_values(api_key))
        item.update(key(user_pk(api_key.owner_id), key_sk(api_key.id)))
        item["revealable"] = {"BOOL": ciphertext is not None}
        if ciphertext is not None:
            item["ciphertext"] = {"B": ciphertext}
        return item

    def _credential_item(self, api_key: ApiKey) -> Item:
        item = to_item(_values(api_key))
        item.update(key(credential_pk(api_key.key_hash), CREDENTIAL_SK))
        return item

    def _put_new(self, item: Item) -> dict[str, Any]:
        # A new key id or hash must never overwrite an existing record.
        return put_if_absent(self._table, item)

    def _revoke_update(self, item_key: Item, revoked: ApiKey) -> dict[str, Any]:
        # Only an active, unexpired key changes state. Two rotations racing on one key both
        # read it as active; this condition, evaluated atomically by DynamoDB inside the
        # transaction, lets exactly one of them win.
        names = {"#revokedAt": "revokedAt", "#ttl": TTL_ATTRIBUTE, "#pk": PARTITION_KEY}
        assert revoked.revoked_at is not None and revoked.retain_until is not None
        values: dict[str, Any] = {
            ":revokedAt": {"S": rfc3339(revoked.revoked_at)},
            ":ttl": {"N": str(epoch(revoked.retain_until))},
        }
        expression = "SET #revokedAt = :revokedAt, #ttl = :ttl"
        if revoked.replaced_by:
            expression += ", #replacedBy = :replacedBy"
            names["#replacedBy"] = "replacedBy"
            values[":replacedBy"] = {"S": revoked.replaced_by}
        return {
            "Update": {
                "TableName": self._table,
                "Key": item_key,
                "UpdateExpression": expression,
                "ConditionExpression": (
                    "attribute_exists(#pk) AND attribute_not_exists(#revokedAt)"
                ),
                "ExpressionAttributeNames": names,
                "ExpressionAttributeValues": values,
            }
        }

    # -- operations --------------------------------------------------------------------

    def create(self, api_key: ApiKey, ciphertext: bytes | None) -> None:
        with dynamodb_errors():
            self._client.transact_write_items(
                TransactItems=[
                    self._put_new(self._owner_item(api_key, ciphertext)),
                    self._put_new(self._credential_item(api_key)),
                ]
            )

    def get_with_ciphertext(self, owner_id: str, key_id: str) -> tuple[ApiKey, bytes | None] | None:
        found = get_consistent(self._client, self._table, user_pk(owner_id), key_sk(key_id))
        if not found:
            return None
        return _from_values(found), found.get("ciphertext")

    def find_by_hash(self, key_hash: str) -> ApiKey | None:
        """The request path's one read: strongly consistent, so revocation is never stale."""
        found = get_consistent(self._client, self._table, credential_pk(key_hash), CREDENTIAL_SK)
        return _from_values(found) if found else None

    def list(
        self,
        owner_id: str,
        limit: int,
        after: str | None,
        keep: Callable[[ApiKey], bool],
    ) -> KeyPage:
        """Newest first (key ids are ULIDs), `limit` keys for which `keep` is true."""
        found: list[ApiKey] = []
        start: Item | None = key(user_pk(owner_id), key_sk(after)) if after else None
        while True:
            request: dict[str, Any] = {
                "TableName": self._table,
                "KeyConditionExpression": "#pk = :pk AND begins_with(#sk, :prefix)",
                "ExpressionAttributeNames": {"#pk": PARTITION_KEY, "#sk": SORT_KEY},
                "ExpressionAttributeValues": {
                    ":pk": {"S": user_pk(owner_id)},
                    ":prefix": {"S": "KEY#"},
                },
                "ProjectionExpression": "#pk, #sk, keyId, ownerId, label, category, workspaceId,"
                " scopes, keyHash, hint, createdAt, expiresAt, revokedAt, replacedBy, revealable,"
                " #ttl",
                "ScanIndexForward": False,
                "ConsistentRead": True,
                "Limit": 100,
            }
            request["ExpressionAttributeNames"]["#ttl"] = TTL_ATTRIBUTE
            if start:
                request["ExclusiveStartKey"] = start
            with dynamodb_errors():
                answer = self._client.query(**request)
            for item in answer.get("Items", []):
                api_key = _from_values(from_item(item))
                if keep(api_key):
                    found.append(api_key)
                    if len(found) == limit:
                        return KeyPage(found, encode_cursor(api_key.id))
            start = answer.get("LastEvaluatedKey")
            if not start:
                return KeyPage(found, None)

    def revoke(self, api_key: ApiKey, now: datetime) -> bool:
        """True when this call revoked the key; False when another writer already had.

        A lost race (a concurrent rotation or revocation, or DynamoDB's TransactionConflict
        with any other transaction on these items) is settled by reading the key again: a
        revocation must never be reported done while the key still works.
        """
        for _ in range(3):
            revoked = api_key.revoked(now)
            try:
                with dynamodb_errors():
                    self._client.transact_write_items(
                        TransactItems=[
                            self._revoke_update(
                                key(user_pk(api_key.owner_id), key_sk(api_key.id)), revoked
                            ),
                            self._revoke_update(
                                key(credential_pk(api_key.key_hash), CREDENTIAL_SK), revoked
                            ),
                        ]
                    )
            except ClientError as error:
                if not is_condition_failure(error):
                    raise
            else:
                return True
            current = self.find_by_hash(api_key.key_hash)
            if current is None or current.revoked_at is not None:
                return False
            api_key = current
        raise DependencyUnavailable("DynamoDB")

    def rotate(
        self, old: ApiKey, successor: ApiKey, ciphertext: bytes | None, now: datetime
    ) -> None:
        """Revoke `old` and create `successor` in one transaction, or raise KeyNotActive."""
        revoked = old.revoked(now, replaced_by=successor.id)
        not_expired = {":now": {"S": rfc3339(now)}}
        updates = []
        for item_key in (
            key(user_pk(old.owner_id), key_sk(old.id)),
            key(credential_pk(old.key_hash), CREDENTIAL_SK),
        ):
            update = self._revoke_update(item_key, revoked)
            # An expired key cannot be rotated either (409), checked again here atomically.
            update["Update"]["ConditionExpression"] += " AND #expiresAt > :now"
            update["Update"]["ExpressionAttributeNames"]["#expiresAt"] = "expiresAt"
            update["Update"]["ExpressionAttributeValues"].update(not_expired)
            updates.append(update)
        try:
            with dynamodb_errors():
                self._client.transact_write_items(
                    TransactItems=[
                        *updates,
                        self._put_new(self._owner_item(successor, ciphertext)),
                        self._put_new(self._credential_item(successor)),
                    ]
                )
        except ClientError as error:
            if is_condition_failure(error):
                raise KeyNotActive(old.id) from None
            raise
