"""API keys in DynamoDB.

Each key is two items written and changed together in one transaction: the owner's item
(`USER#<owner>`/`KEY#<id>`, which makes keys owner-private by construction: a lookup by
another user's partition finds nothing) and the credential item (`CRED#<sha256>`), which
the request path reads strongly consistently: alone with GetItem, or together with the
owner's membership in one BatchGetItem when the key names its owner. No cache sits in front
of either: a revocation is seen by the very next request.

The credential item also carries `lastUsedAt`, written by the request path itself at most
once per key and 5-minute window (keys/last_use.py). The owner item carries `noticeShard` and
`noticeAt` while an expiry notice is still to be made: the sparse index `ExpiryNotices` the
hourly sweep reads (keys/expiry.py), so it never scans the table.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Sequence
from copy import replace
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from botocore.exceptions import ClientError

from chalicelib import items, strict_parsing
from chalicelib.clock import epoch, parse_rfc3339, rfc3339
from chalicelib.errors import DependencyUnavailable
from chalicelib.keys.model import (
    EXPIRY_WARNING,
    MAX_LIFETIME_DAYS,
    NOTICE_AT,
    REQUESTS_ON,
    ApiKey,
)
from chalicelib.table import (
    EXISTS,
    PARTITION_KEY,
    TTL_ATTRIBUTE,
    Item,
    assignments,
    dynamodb_errors,
    expressions,
    from_item,
    get_consistent,
    get_many_consistent,
    is_condition_failure,
    newest_page,
    put_if_absent,
    query,
    to_item,
    transact,
    under,
    update,
)

if TYPE_CHECKING:
    # Neither is needed by a decision: loaded when a listing or the expiry sweep needs them.
    from chalicelib.keys.notice import Notice
    from chalicelib.keys.page import KeyPage


class KeyNotCreated(Exception):
    """A creation lost its race: its hash is already a credential (an imported key seen
    before), or another request claimed its Idempotency-Key first."""


class KeyNotActive(Exception):
    """A rotation lost its race, or the key was not active when it ran."""


# The sparse index of expiry notices still to be made (infra/resources.json declares it): an
# owner item is in it, sorted by when its next notice is due, until the sweep (or a reader)
# has announced the key's expiry or the key is revoked or rotated. Its partition key is one
# of a few fixed shards (DynamoDB's "write sharding" of a GSI): new keys spread over them,
# and a sweep reads every notice due by now with one Query per shard, however long ago it
# fell due, so no outage of the sweep loses one.
NOTICE_INDEX = "ExpiryNotices"
NOTICE_SHARD = "noticeShard"
NOTICE_SHARDS = tuple(str(shard) for shard in range(4))
LAST_USED_AT = "lastUsedAt"
_REMOVE_NOTICE = "#noticeShard, #noticeAt"

# Only a working key changes state: not revoked, not past a grace that already ended.
WORKING = (
    f"{EXISTS} AND attribute_not_exists(#revokedAt)"
    " AND (attribute_not_exists(#replacedBy) OR #expiresAt > :now)"
)
# Neither an expired key nor one that already has a successor is rotated (409).
ROTATABLE = (
    f"{EXISTS} AND attribute_not_exists(#revokedAt)"
    " AND attribute_not_exists(#replacedBy) AND #expiresAt > :now"
)
_LISTED = (
    "#pk, #sk, keyId, ownerId, label, category, workspaceId, scopes, keyHash, hint, createdAt,"
    " expiresAt, revokedAt, replacedBy, revealable, lifetimeDays, allowedCidrs, noticeAt, #ttl,"
    " requestsPerDay, dpopJkt"
)


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
        "lifetimeDays": api_key.lifetime_days,
        "allowedCidrs": list(api_key.allowed_cidrs) if api_key.allowed_cidrs else None,
        "requestsPerDay": api_key.requests_per_day,
        # On both items: the decision reads the credential item, and nothing else, for it.
        "dpopJkt": api_key.dpop_jkt,
        TTL_ATTRIBUTE: epoch(api_key.retain_until) if api_key.retain_until else None,
        # A new record's day counts: a rotation's successor carries on its key's.
        **{f"{REQUESTS_ON}{day}": count for day, count in api_key.requests_counted},
    }


def notice_shard(key_id: str) -> str:
    return NOTICE_SHARDS[zlib.crc32(key_id.encode()) % len(NOTICE_SHARDS)]


def first_notice(api_key: ApiKey, now: datetime) -> datetime:
    """When the sweep first looks at a new key: 7 days before its end (only if it lives
    longer than that: a 3-day key is not "expiring" the moment it is made), else at its end;
    never in the past, so that an imported, older key is found by the next sweep."""
    warning = api_key.expires_at - EXPIRY_WARNING
    due = warning if warning > api_key.created_at else api_key.expires_at
    return max(due, now)


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
        lifetime_days=int(values.get("lifetimeDays", MAX_LIFETIME_DAYS)),
        allowed_cidrs=tuple(values["allowedCidrs"]) if values.get("allowedCidrs") else None,
        last_used_at=parse_rfc3339(values.get(LAST_USED_AT)),
        notice_at=parse_rfc3339(values.get(NOTICE_AT)),
        requests_per_day=_optional_int(values.get("requestsPerDay")),
        dpop_jkt=values.get("dpopJkt") or None,
        requests_counted=tuple(
            (name[len(REQUESTS_ON) :], int(count))
            for name, count in values.items()
            if name.startswith(REQUESTS_ON)
        ),
    )


def _optional_int(value: Any) -> int | None:
    return None if value is None else int(value)


def key_from_values(values: dict[str, Any]) -> ApiKey:
    """A key record from its owner or credential item's values (a decision that read it
    together with other items)."""
    return _from_values(values)


class KeyStore:
    def __init__(self, client: Any, table_name: str):
        self._client = client
        self._table = table_name

    # -- items -------------------------------------------------------------------------

    def _owner_item(self, api_key: ApiKey, ciphertext: bytes | None, now: datetime) -> Item:
        item = to_item(_values(api_key))
        item.update(items.api_key(api_key.owner_id, api_key.id))
        item["revealable"] = {"BOOL": ciphertext is not None}
        if ciphertext is not None:
            item["ciphertext"] = {"B": ciphertext}
        if api_key.end() is None:
            due = first_notice(api_key, now)
            item[NOTICE_SHARD] = {"S": notice_shard(api_key.id)}
            item[NOTICE_AT] = {"S": rfc3339(due)}
        return item

    def _credential_item(self, api_key: ApiKey) -> Item:
        item = to_item(_values(api_key))
        item.update(items.credential(api_key.key_hash))
        return item

    def _item_keys(self, api_key: ApiKey) -> tuple[Item, Item]:
        """The owner item's key, then the credential item's: every change touches both."""
        return items.api_key(api_key.owner_id, api_key.id), items.credential(api_key.key_hash)

    def _put_new(self, item: Item) -> dict[str, Any]:
        # A new key id or hash must never overwrite an existing record.
        return put_if_absent(self._table, item)

    def _update(
        self,
        item_key: Item,
        sets: dict[str, Any],
        condition: str,
        values: dict[str, Any],
        remove: str | None = None,
    ) -> dict[str, Any]:
        """A transaction member: SET `sets` (attribute -> plain value), REMOVE `remove`."""
        expression = "SET " + assignments(sets) if sets else ""
        if remove:
            expression += f" REMOVE {remove}"
        return update(self._table, item_key, expression.strip(), condition, {**values, **sets})

    def _ending(
        self, api_key: ApiKey, ended: ApiKey, now: datetime, condition: str = WORKING
    ) -> list[dict[str, Any]]:
        """The two members that revoke `api_key` (or start its grace) as `ended` says.

        Only a working key changes state (`WORKING`; a rotation asks `ROTATABLE`). Two
        rotations, or a rotation and a revocation, racing on one key both read it as
        active; this condition, evaluated atomically by DynamoDB inside the transaction, lets
        exactly one of them change it, so no interleaving leaves a key working that the API
        reports as revoked.
        """
        sets: dict[str, Any] = {}
        if ended.revoked_at is not None:
            sets["revokedAt"] = rfc3339(ended.revoked_at)
        else:
            sets["expiresAt"] = rfc3339(ended.expires_at)
        if ended.replaced_by is not None:
            sets["replacedBy"] = ended.replaced_by
        assert ended.retain_until is not None
        sets[TTL_ATTRIBUTE] = epoch(ended.retain_until)
        values = {"now": rfc3339(now)}
        return [
            self._update(item_key, sets, condition, values, remove=_REMOVE_NOTICE)
            for item_key in self._item_keys(api_key)
        ]

    def _transact(self, members: Sequence[dict[str, Any]]) -> None:
        transact(self._client, members)

    # -- operations --------------------------------------------------------------------

    def create(
        self,
        api_key: ApiKey,
        ciphertext: bytes | None,
        now: datetime,
        also: Sequence[dict[str, Any]] = (),
    ) -> None:
        """Both items, plus `also` (an event, an idempotency record) in the same transaction;
        KeyNotCreated if one of them lost its race."""
        try:
            self._transact(
                [
                    self._put_new(self._owner_item(api_key, ciphertext, now)),
                    self._put_new(self._credential_item(api_key)),
                    *also,
                ]
            )
        except ClientError as error:
            if not is_condition_failure(error):
                raise
            # A fresh id and 256-bit secret never collide: if the key is there, an earlier
            # attempt of this very write was applied and its answer lost.
            written = self.find_by_hash(api_key.key_hash)
            if written is None or written.id != api_key.id:
                raise KeyNotCreated(api_key.id) from None

    def get_with_ciphertext(
        self, owner_id: str, key_id: str, last_use: bool = False
    ) -> tuple[ApiKey, bytes | None] | None:
        """The owner's key and its ciphertext; with `last_use`, its `lastUsedAt` too."""
        found = get_consistent(self._client, self._table, items.api_key(owner_id, key_id))
        if not found:
            return None
        api_key = _from_values(found)
        if last_use:
            api_key = self.with_last_use([api_key])[0]
        return api_key, found.get("ciphertext")

    def find_by_hash(self, key_hash: str) -> ApiKey | None:
        """The request path's one read: strongly consistent, so revocation is never stale."""
        found = get_consistent(self._client, self._table, items.credential(key_hash))
        return _from_values(found) if found else None

    def find_by_hash_with_membership(
        self, key_hash: str, workspace_id: str, user_id: str
    ) -> tuple[ApiKey | None, bool]:
        """The request path's one round trip for a key that names its owner: the key record
        and whether `user_id` is a member of `workspace_id`, both read strongly consistently
        in one BatchGetItem, so neither a revocation nor a removal is ever stale."""
        credential, membership = get_many_consistent(
            self._client,
            self._table,
            [items.credential(key_hash), items.member(workspace_id, user_id)],
        )
        return (_from_values(credential) if credential else None), membership is not None

    def with_last_use(self, api_keys: list[ApiKey]) -> list[ApiKey]:
        """`lastUsedAt` lives on the credential items (the request path writes it there):
        read it for these keys in one BatchGetItem, eventually consistent (it is a 5-minute
        figure, not a security decision)."""
        wanted = {items.credential_pk(k.key_hash): k for k in api_keys}
        last_used: dict[str, datetime | None] = {}
        pending: list[Item] = [items.credential(k.key_hash) for k in wanted.values()]
        for _ in range(5):
            if not pending:
                break
            keys = {"Keys": pending[:100], "ProjectionExpression": "#pk, #lastUsedAt"}
            request = {self._table: expressions(keys)}
            pending = pending[100:]
            with dynamodb_errors():
                answer = self._client.batch_get_item(RequestItems=request)
            for item in answer.get("Responses", {}).get(self._table, []):
                values = from_item(item)
                last_used[values[PARTITION_KEY]] = parse_rfc3339(values.get(LAST_USED_AT))
            pending.extend(
                answer.get("UnprocessedKeys", {}).get(self._table, {}).get("Keys", [])
            )
        if pending:
            raise DependencyUnavailable("DynamoDB")
        return [replace(k, last_used_at=last_used.get(pk)) for pk, k in wanted.items()]

    def usage_hours(self, key_id: str, first: str, last: str) -> dict[str, int]:
        """The counted requests of `key_id` per hour label, from `first` to `last` (both
        included, `yyyy-mm-ddThh`), eventually consistent: a usage figure, not a decision."""
        found = query(
            self._client,
            self._table,
            "#pk = :pk AND #sk BETWEEN :first AND :last",
            {
                "pk": items.usage_pk(key_id),
                "first": items.HOUR_PREFIX + first,
                "last": items.HOUR_PREFIX + last,
            },
            projection="#sk, #requests",
        )
        return {
            values["sk"][len(items.HOUR_PREFIX) :]: int(values.get("requests", 0))
            for values in found
        }

    def count_working(self, owner_id: str, now: datetime) -> int:
        """How many of the owner's keys are not revoked (the stage's key limit counts them)."""
        found = under(
            self._client,
            self._table,
            items.user_pk(owner_id),
            items.KEY_PREFIX,
            projection=_LISTED,
            consistent=True,
        )
        return sum(1 for values in found if _from_values(values).status(now) != "revoked")

    def list(
        self,
        owner_id: str,
        limit: int,
        after: str | None,
        keep: Callable[[ApiKey], bool],
    ) -> KeyPage:
        """Newest first (key ids are ULIDs), `limit` keys for which `keep` is true."""
        from chalicelib.keys.page import KeyPage

        found = newest_page(
            self._client,
            self._table,
            items.user_pk(owner_id),
            items.KEY_PREFIX,
            read=_from_values,
            keep=keep,
            limit=limit,
            start=items.api_key(owner_id, after) if after else None,
            projection=_LISTED,
        )
        full = found and len(found) == limit
        cursor = strict_parsing.encode_cursor(found[-1].id) if full else None
        return KeyPage(self.with_last_use(found) if found else [], cursor)

    def revoke(
        self, api_key: ApiKey, now: datetime, also: Sequence[dict[str, Any]] = ()
    ) -> bool:
        """True when this call revoked the key; False when it was already revoked.

        A lost race (a concurrent rotation or revocation, or DynamoDB's TransactionConflict
        with any other transaction on these items) is settled by reading the key again: a
        revocation must never be reported done while the key still works. A key in its grace
        period is revoked at once. `also` (an event) commits with the revocation, or not at all.
        """
        for _ in range(3):
            try:
                self._transact([*self._ending(api_key, api_key.revoked(now), now), *also])
            except ClientError as error:
                if not is_condition_failure(error):
                    raise
            else:
                return True
            current = self.find_by_hash(api_key.key_hash)
            if current is None or current.status(now) == "revoked":
                return False
            api_key = current
        raise DependencyUnavailable("DynamoDB")

    def rotate(
        self,
        old: ApiKey,
        successor: ApiKey,
        ciphertext: bytes | None,
        now: datetime,
        grace: timedelta = timedelta(0),
        also: Sequence[dict[str, Any]] = (),
    ) -> ApiKey:
        """End `old` (now, or after `grace`) and create `successor` in one transaction.

        Returns the old key as it now is; raises KeyNotActive when it was not active, already
        had a successor, or another writer changed it first.
        """
        if grace > timedelta(0):
            ended = old.in_grace(now, successor.id, grace)
        else:
            ended = old.revoked(now, replaced_by=successor.id)
        members = self._ending(old, ended, now, ROTATABLE)
        try:
            self._transact(
                [
                    *members,
                    self._put_new(self._owner_item(successor, ciphertext, now)),
                    self._put_new(self._credential_item(successor)),
                    *also,
                ]
            )
        except ClientError as error:
            if not is_condition_failure(error):
                raise
            # The old key names this very successor: an earlier attempt of this write was
            # applied and its answer lost. Anything else: another rotation (or a revocation)
            # won, or the key was no longer active.
            current = self.find_by_hash(old.key_hash)
            if current is None or current.replaced_by != successor.id:
                raise KeyNotActive(old.id) from None
        return ended

    def update(
        self,
        api_key: ApiKey,
        label: str,
        allowed_cidrs: tuple[str, ...] | None,
        now: datetime,
        also: Sequence[dict[str, Any]] = (),
        requests_per_day: int | None = None,
    ) -> None:
        """Rename and set (or clear) the allow-list and the daily quota of a key that has not
        been revoked.

        Raises KeyNotActive when it was revoked (or its grace ended) before this committed.
        """
        sets: dict[str, Any] = {"label": label}
        removed = []
        if allowed_cidrs:
            sets["allowedCidrs"] = list(allowed_cidrs)
        else:
            removed.append("#allowedCidrs")
        if requests_per_day is not None:
            sets["requestsPerDay"] = requests_per_day
        else:
            removed.append("#requestsPerDay")
        remove = ", ".join(removed) or None
        values = {"now": rfc3339(now)}
        members = [
            self._update(item_key, sets, WORKING, values, remove)
            for item_key in self._item_keys(api_key)
        ]
        try:
            self._transact([*members, *also])
        except ClientError as error:
            if is_condition_failure(error):
                raise KeyNotActive(api_key.id) from None
            raise

    # -- expiry notices ---------------------------------------------------------------

    def due_notices(self, shard: str, now: datetime) -> tuple[Notice, ...]:
        """The keys of `shard` whose next notice is due by `now` (the sparse index)."""
        from chalicelib.keys.notice import Notice

        due = query(
            self._client,
            self._table,
            "#noticeShard = :shard AND #noticeAt <= :now",
            {"shard": shard, "now": rfc3339(now)},
            index=NOTICE_INDEX,
        )
        return tuple(map(Notice.from_values, due))

    def _notice_update(
        self, notice: Notice, sets: dict[str, Any], condition: str, values: dict[str, Any],
        remove: str | None, also: Sequence[dict[str, Any]],
    ) -> bool:
        member = self._update(
            items.api_key(notice.owner_id, notice.key_id), sets, condition, values, remove
        )
        try:
            self._transact([member, *also])
        except ClientError as error:
            if is_condition_failure(error):
                return False
            raise
        return True

    def announce_expiring(
        self, notice: Notice, now: datetime, also: Sequence[dict[str, Any]] = ()
    ) -> bool:
        """Move the key's notice from its warning to its end, with `also` (the `key.expiring`
        event). True for the one writer whose condition held: the warning is made once, even
        by two sweeps at once, and never for a key revoked or rotated meanwhile (both remove
        the notice)."""
        assert notice.notice_at is not None
        sets = {NOTICE_AT: rfc3339(notice.expires_at)}
        condition = "#noticeAt = :seen AND #expiresAt > :now"
        values = {"seen": rfc3339(notice.notice_at), "now": rfc3339(now)}
        return self._notice_update(notice, sets, condition, values, None, also)

    def announce_expired(
        self, notice: Notice, now: datetime, also: Sequence[dict[str, Any]] = ()
    ) -> bool:
        """Take the key out of the notice index, with `also` (the `key.expired` event). True
        for the one writer that did: whoever sees the expiry first (the sweep or a read of the
        key) announces it, and only once."""
        condition = (
            "attribute_exists(#noticeAt) AND #expiresAt <= :now"
            " AND attribute_not_exists(#revokedAt) AND attribute_not_exists(#replacedBy)"
        )
        values = {"now": rfc3339(now)}
        return self._notice_update(notice, {}, condition, values, _REMOVE_NOTICE, also)
