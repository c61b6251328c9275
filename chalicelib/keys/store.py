"""API keys in DynamoDB.

Each key is two items: the credential item (`CRED#<sha256>`), which the request path reads
strongly consistently (alone with GetItem, or together with the owner's membership in one
BatchGetItem when the key names its owner), and the owner's item (`USER#<owner>`/`KEY#<id>`,
which makes keys owner-private by construction: a lookup by another user's partition finds
nothing). No cache sits in front of either: a revocation is seen by the very next request.

No change uses a transaction (table.py, "commit points"): the credential item is every
change's commit point, one conditional write; the owner item follows through the
credential's outbox (the sweep completes it after a crash), so the owner's list may lag a
failed call by up to an hour, and a decision never does. How many keys an owner has that are
not revoked is a counter (`items.user_counts`), taken before a creation.

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
    TTL_ATTRIBUTE,
    Attribute,
    Item,
    Pending,
    Shape,
    assignments,
    commit,
    complete,
    get_consistent,
    get_many,
    get_many_consistent,
    give_back,
    is_condition_failure,
    newest_page_within,
    put_if_absent,
    query,
    take_one,
    to_item,
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


KEY_COUNT = "keys"  # the attribute of `items.user_counts` counting keys not revoked


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
def _epoch_of(moment: datetime) -> int:
    return epoch(moment)


def _moment(text: str) -> datetime:
    parsed = parse_rfc3339(text)
    assert parsed is not None  # written by rfc3339
    return parsed


def _list_or_none(value: Any) -> list[Any] | None:
    return list(value) or None


def _tuple_or_none(value: Any) -> tuple[Any, ...] | None:
    return tuple(value) or None


def _derived(values: dict[str, Any], fields: dict[str, Any]) -> dict[str, Any]:
    """What the key record computes from its whole item: when it counts as deleted (its
    `ttl`, in the zone of its creation), and the day counts (`requestsOn<day>`)."""
    ttl = values.get(TTL_ATTRIBUTE)
    return {
        "retain_until": (
            datetime.fromtimestamp(ttl, tz=fields["created_at"].tzinfo) if ttl else None
        ),
        "requests_counted": tuple(
            (name[len(REQUESTS_ON) :], int(count))
            for name, count in values.items()
            if name.startswith(REQUESTS_ON)
        ),
    }


def _day_counts(api_key: ApiKey) -> Item:
    """A new record's day counts (`requestsOn<day>`, read back by `_derived`): a rotation's
    successor carries on its key's, so that rotating never resets a daily quota."""
    return to_item({f"{REQUESTS_ON}{day}": count for day, count in api_key.requests_counted})


# The key record's item, declared once (both items of a key carry it): writes, reads and the
# listing's projection follow from it.
KEY_SHAPE = Shape(
    ApiKey,
    [
        Attribute("keyId", "id"),
        Attribute("ownerId", "owner_id"),
        Attribute("label"),
        Attribute("category"),
        Attribute("workspaceId", "workspace_id"),
        Attribute("scopes", write=list, read=tuple),
        Attribute("keyHash", "key_hash"),
        Attribute("hint"),
        Attribute("createdAt", "created_at", rfc3339, _moment),
        Attribute("expiresAt", "expires_at", rfc3339, _moment),
        Attribute("revokedAt", "revoked_at", rfc3339, _moment),
        Attribute("replacedBy", "replaced_by"),
        Attribute("revealable", read=bool, written=False, missing=False),  # the owner item's
        Attribute("lifetimeDays", "lifetime_days", read=int, missing=MAX_LIFETIME_DAYS),
        Attribute("allowedCidrs", "allowed_cidrs", write=_list_or_none, read=_tuple_or_none),
        Attribute("requestsPerDay", "requests_per_day", read=int),
        # On both items: the decision reads the credential item, and nothing else, for it.
        Attribute("dpopJkt", "dpop_jkt"),
        Attribute(NOTICE_AT, "notice_at", read=_moment, written=False),  # the sweep's
        Attribute(LAST_USED_AT, "last_used_at", read=_moment, written=False),  # last_use.py
        # Read by `_derived` (its zone is the creation's).
        Attribute(TTL_ATTRIBUTE, "retain_until", write=_epoch_of),
    ],
    _derived,
)
# A listing's attributes: the record's, but not `lastUsedAt` (read from the credential).
_LISTING = KEY_SHAPE.projection.replace(f", #{LAST_USED_AT}", "")


def notice_shard(key_id: str) -> str:
    return NOTICE_SHARDS[zlib.crc32(key_id.encode()) % len(NOTICE_SHARDS)]


def first_notice(api_key: ApiKey, now: datetime) -> datetime:
    """When the sweep first looks at a new key: 7 days before its end (only if it lives
    longer than that: a 3-day key is not "expiring" the moment it is made), else at its end;
    never in the past, so that an imported, older key is found by the next sweep."""
    warning = api_key.expires_at - EXPIRY_WARNING
    due = warning if warning > api_key.created_at else api_key.expires_at
    return max(due, now)


def key_from_values(values: dict[str, Any]) -> ApiKey:
    """A key record from its owner or credential item's values (a decision that read it
    together with other items)."""
    return KEY_SHAPE.record(values)


class KeyStore:
    def __init__(self, client: Any, table_name: str):
        self._client = client
        self._table = table_name

    # -- items -------------------------------------------------------------------------

    def _owner_item(self, api_key: ApiKey, ciphertext: bytes | None, now: datetime) -> Item:
        item = to_item(KEY_SHAPE.values(api_key))
        item.update(items.api_key(api_key.owner_id, api_key.id))
        item.update(_day_counts(api_key))
        item["revealable"] = {"BOOL": ciphertext is not None}
        if ciphertext is not None:
            item["ciphertext"] = {"B": ciphertext}
        if api_key.end() is None:
            due = first_notice(api_key, now)
            item[NOTICE_SHARD] = {"S": notice_shard(api_key.id)}
            item[NOTICE_AT] = {"S": rfc3339(due)}
        return item

    def _credential_item(self, api_key: ApiKey) -> Item:
        item = to_item(KEY_SHAPE.values(api_key))
        item.update(items.credential(api_key.key_hash))
        item.update(_day_counts(api_key))
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
        """An update: SET `sets` (attribute -> plain value), REMOVE `remove`."""
        expression = "SET " + assignments(sets) if sets else ""
        if remove:
            expression += f" REMOVE {remove}"
        return update(self._table, item_key, expression.strip(), condition, {**values, **sets})

    def _ending(
        self, api_key: ApiKey, ended: ApiKey, now: datetime, condition: str = WORKING
    ) -> tuple[dict[str, Any], Pending]:
        """The change that revokes `api_key` (or starts its grace) as `ended` says: the
        credential's write, the commit point, then the owner item's, through the outbox.

        Only a working key changes state (`WORKING`; a rotation asks `ROTATABLE`). Two
        rotations, or a rotation and a revocation, racing on one key both read it as
        active; this condition on the credential item, the one the decisions read, lets
        exactly one of them change it, in any Region, so no interleaving leaves a key
        working that the API reports as revoked.
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
        owner_key, credential_key = self._item_keys(api_key)
        point = self._update(credential_key, sets, condition, values, remove=_REMOVE_NOTICE)
        owner = self._update(owner_key, sets, EXISTS, {}, remove=_REMOVE_NOTICE)
        return point, Pending(owner, now)

    def _new(self, item: Item, now: datetime) -> Pending:
        # A new key id or hash must never overwrite an existing record.
        return Pending.new_item(self._table, item, now)

    def take_slot(self, owner_id: str, limit: int, now: datetime) -> bool:
        """One of the owner's `limit` key slots (keys not revoked), if one is left."""
        return take_one(
            self._client,
            self._table,
            items.user_counts(owner_id),
            KEY_COUNT,
            limit,
            initial=lambda: self.count_working(owner_id, now),
        )

    def give_slot_back(self, owner_id: str) -> None:
        give_back(self._client, self._table, items.user_counts(owner_id), KEY_COUNT)

    # -- operations --------------------------------------------------------------------

    def create(
        self,
        api_key: ApiKey,
        ciphertext: bytes | None,
        now: datetime,
        also: Sequence[dict[str, Any] | Pending] = (),
        counted: bool = False,
    ) -> None:
        """The key, with `also` (its event) through its outbox. KeyNotCreated if its hash is
        already a credential (then the slot `take_slot` took for it, if `counted`, is given
        back).

        Commit point: the credential item, put only if absent. Until it exists the key is
        unknown (401); once it does, it works, and its owner item follows."""
        owner = self._new(self._owner_item(api_key, ciphertext, now), now)
        try:
            commit(self._client, self._put_new(self._credential_item(api_key)), [owner, *also])
        except ClientError as error:
            if not is_condition_failure(error):
                raise
            # A fresh id and 256-bit secret never collide: if the key is there, an earlier
            # attempt of this very write was applied and its answer lost.
            written = self.find_by_hash(api_key.key_hash)
            if written is None or written.id != api_key.id:
                if counted:
                    self.give_slot_back(api_key.owner_id)
                raise KeyNotCreated(api_key.id) from None
            complete(self._client, self._put_new(self._credential_item(api_key)))

    def get_with_ciphertext(
        self, owner_id: str, key_id: str, last_use: bool = False
    ) -> tuple[ApiKey, bytes | None] | None:
        """The owner's key and its ciphertext; with `last_use`, its `lastUsedAt` too."""
        found = get_consistent(self._client, self._table, items.api_key(owner_id, key_id))
        if not found:
            return None
        api_key = KEY_SHAPE.record(found)
        if last_use:
            api_key = self.with_last_use([api_key])[0]
        return api_key, found.get("ciphertext")

    def find_by_hash(self, key_hash: str) -> ApiKey | None:
        """The request path's one read: strongly consistent, so revocation is never stale."""
        found = get_consistent(self._client, self._table, items.credential(key_hash))
        return KEY_SHAPE.record(found) if found else None

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
        return (KEY_SHAPE.record(credential) if credential else None), membership is not None

    def with_last_use(self, api_keys: list[ApiKey]) -> list[ApiKey]:
        """`lastUsedAt` lives on the credential items (the request path writes it there):
        read it for these keys in one BatchGetItem, eventually consistent (it is a 5-minute
        figure, not a security decision)."""
        found = get_many(
            self._client,
            self._table,
            [items.credential(k.key_hash) for k in api_keys],
            projection="#lastUsedAt",
            consistent=False,
        )
        return [
            replace(k, last_used_at=parse_rfc3339((values or {}).get(LAST_USED_AT)))
            for k, values in zip(api_keys, found, strict=True)
        ]

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
        """How many of the owner's keys are not revoked: read once per owner, when its key
        counter is first needed (keys made before the counter existed)."""
        found = under(
            self._client,
            self._table,
            items.user_pk(owner_id),
            items.KEY_PREFIX,
            projection=_LISTING,
            consistent=True,
        )
        return sum(1 for values in found if KEY_SHAPE.record(values).status(now) != "revoked")

    def list(
        self,
        owner_id: str,
        limit: int,
        after: str | None,
        keep: Callable[[ApiKey], bool],
        reads: int | None = None,
    ) -> KeyPage:
        """Newest first (key ids are ULIDs), `limit` keys for which `keep` is true, read in
        the owner's own partition only (never a scan), with at most `reads` Query calls of
        100 keys (None: as many as the page needs). A page stopped by `reads` may hold fewer
        keys than `limit`, even none: its cursor continues after the last key read."""
        from chalicelib.keys.page import KeyPage

        found, last = newest_page_within(
            self._client,
            self._table,
            items.user_pk(owner_id),
            items.KEY_PREFIX,
            read=KEY_SHAPE.record,
            keep=keep,
            limit=limit,
            start=items.api_key(owner_id, after) if after else None,
            reads=reads,
            projection=_LISTING,
        )
        cursor = strict_parsing.encode_cursor(last.id) if last is not None else None
        return KeyPage(self.with_last_use(found) if found else [], cursor)

    def revoke(
        self, api_key: ApiKey, now: datetime, also: Sequence[dict[str, Any] | Pending] = ()
    ) -> bool:
        """True when this call revoked the key; False when it was already revoked.

        A lost race (a concurrent rotation or revocation) is settled by reading the key
        again: a revocation must never be reported done while the key still works. A key in
        its grace period is revoked at once. `also` (an event) leaves through the outbox of
        the revocation, or not at all. The call that revokes a key with no successor gives
        its owner's slot back (a rotated key's slot is its successor's).
        """
        for _ in range(3):
            point, owner = self._ending(api_key, api_key.revoked(now), now)
            try:
                commit(self._client, point, [owner, *also])
            except ClientError as error:
                if not is_condition_failure(error):
                    raise
            else:
                if api_key.replaced_by is None:
                    self.give_slot_back(api_key.owner_id)
                return True
            current = self.find_by_hash(api_key.key_hash)
            if current is None or current.status(now) == "revoked":
                # Revoked already: by another call, or by this one's earlier attempt whose
                # answer was lost; what followed that commit point is completed here.
                complete(self._client, point)
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
        also: Sequence[dict[str, Any] | Pending] = (),
    ) -> ApiKey:
        """End `old` (now, or after `grace`) and create `successor`.

        Commit point: the old credential item claimed (`ROTATABLE`, naming the successor):
        of concurrent rotations, or a rotation and a revocation, exactly one wins, in any
        Region. The successor's items follow through the old credential's outbox: the
        successor is unknown (401) until its credential exists, and the retry or the sweep
        writes it. Returns the old key as it now is; raises KeyNotActive when it was not
        active, already had a successor, or another writer changed it first.
        """
        if grace > timedelta(0):
            ended = old.in_grace(now, successor.id, grace)
        else:
            ended = old.revoked(now, replaced_by=successor.id)
        point, owner = self._ending(old, ended, now, ROTATABLE)
        then = [
            self._new(self._credential_item(successor), now),
            self._new(self._owner_item(successor, ciphertext, now), now),
            owner,
        ]
        try:
            commit(self._client, point, [*then, *also])
        except ClientError as error:
            if not is_condition_failure(error):
                raise
            # The old key names this very successor: an earlier attempt of this write was
            # applied and its answer lost (what follows it is written again, idempotently).
            # Anything else: another rotation (or a revocation) won, or the key was no
            # longer active.
            current = self.find_by_hash(old.key_hash)
            if current is None or current.replaced_by != successor.id:
                raise KeyNotActive(old.id) from None
            complete(self._client, point)
        return ended

    def update(
        self,
        api_key: ApiKey,
        label: str,
        allowed_cidrs: tuple[str, ...] | None,
        now: datetime,
        also: Sequence[dict[str, Any] | Pending] = (),
        requests_per_day: int | None = None,
    ) -> None:
        """Rename and set (or clear) the allow-list and the daily quota of a key that has not
        been revoked. Commit point: the credential item (`WORKING`); the owner item follows.

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
        owner_key, credential_key = self._item_keys(api_key)
        point = self._update(credential_key, sets, WORKING, {"now": rfc3339(now)}, remove)
        owner = Pending(self._update(owner_key, sets, EXISTS, {}, remove), now)
        try:
            commit(self._client, point, [owner, *also])
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
        remove: str | None, also: Sequence[dict[str, Any] | Pending],
    ) -> bool:
        # Commit point: the owner item's notice (the sweep and the readers race on it).
        member = self._update(
            items.api_key(notice.owner_id, notice.key_id), sets, condition, values, remove
        )
        try:
            commit(self._client, member, also)
        except ClientError as error:
            if is_condition_failure(error):
                return False
            raise
        return True

    def announce_expiring(
        self, notice: Notice, now: datetime, also: Sequence[dict[str, Any] | Pending] = ()
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
        self, notice: Notice, now: datetime, also: Sequence[dict[str, Any] | Pending] = ()
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

