"""The API-key lifecycle (README, "API keys"), for a resolved principal the edge has
already authorized (`api/operations.py`: key management is the `MANAGER` policy).

Every change commits with its audit event in its outbox (table.py, "commit points"), and the
event goes to the bus once it committed. The routes call `owned` before they read a request
body, so that a caller who may not touch a key learns nothing about the shape of a request
(404 first).
"""

from __future__ import annotations

from collections.abc import Sequence
from copy import replace
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Protocol

from chalicelib import ids, strict_parsing
from chalicelib.access.principal import Principal
from chalicelib.access.scopes import ADMIN, CATEGORIES, SCOPES_BY_CATEGORY, WORKSPACE, ordered
from chalicelib.clock import Clock, rfc3339
from chalicelib.config import DEFAULT_LIMITS, KEY_LIMIT
from chalicelib.errors import DependencyUnavailable
from chalicelib.events import model as events
from chalicelib.events.log import EventLog
from chalicelib.hashing import hash_secret
from chalicelib.idempotency import IdempotencyStore, IdempotentRequest, Recorder
from chalicelib.keys import usage
from chalicelib.keys.last_use import hour_label
from chalicelib.keys.model import MAX_LIFETIME_DAYS, ApiKey, usage_day
from chalicelib.keys.notice import Notice
from chalicelib.keys.page import KeyPage
from chalicelib.keys.plaintext import generate_key, hint
from chalicelib.keys.refusals import KeyRefusal, KeyRefused, Rule, refused
from chalicelib.keys.store import KeyNotActive, KeyNotCreated, KeyStore
from chalicelib.keys.usage import Granularity, Usage
from chalicelib.keys.vault import CiphertextMismatch, KeyVault
from chalicelib.logs import logger
from chalicelib.table import Pending
from chalicelib.workspaces.store import WorkspaceStore

STATUSES = ("active", "revoked", "expired")
# A search reads at most this many pages of 100 of the caller's keys per request (1,000
# keys): a management route, not a decision, but still bounded; its cursor goes on from there.
SEARCH_READS = 10


class CountsToday(Protocol):
    """Today's requests of a key, as the quota check counts them (keys/last_use.py)."""

    def counted_today(self, api_key: ApiKey, now: datetime) -> int: ...


@dataclass(frozen=True)
class NewKey:
    label: str
    category: object = ADMIN  # as the caller sent it: `create` judges it
    workspace_id: str | None = None
    scopes: Sequence[str] | None = None
    lifetime_days: int = MAX_LIFETIME_DAYS
    allowed_cidrs: tuple[str, ...] | None = None
    requests_per_day: int | None = None
    dpop_jkt: str | None = None  # bound to this key pair (RFC 9449); None: a bearer key


@dataclass(frozen=True)
class KeyChanges:
    """A PATCH: `label` when given; `allowed_cidrs` when `cidrs_given` (None: any address);
    `requests_per_day` when `quota_given` (None: no quota)."""

    label: str | None = None
    cidrs_given: bool = False
    allowed_cidrs: tuple[str, ...] | None = None
    quota_given: bool = False
    requests_per_day: int | None = None


@dataclass(frozen=True)
class IssuedKey:
    api_key: ApiKey
    plaintext: str = field(repr=False)
    replayed: bool = False  # answered again for a retry with the same Idempotency-Key


def key_not_active(detail: str | None = None) -> KeyRefused:
    return refused(Rule.KEY_NOT_ACTIVE, detail)


NOT_MINE = "A key cannot get scopes its creator lacks."


# What a 503 says when the write itself failed: its answer may have been lost after it was
# applied, so the caller must be told how to find out, or how to retry safely.
def _created_maybe(idempotent: IdempotentRequest | None) -> str:
    if idempotent is not None:
        return "The key may have been created. Retry with the same Idempotency-Key: you get it."
    return (
        "The key may have been created: list your keys (GET /v1/auth/api-keys) before "
        "creating another, or send an Idempotency-Key to make creation safe to retry."
    )


def _rotated_maybe(key_id: str, idempotent: IdempotentRequest | None) -> str:
    if idempotent is not None:
        return (
            "The rotation may have happened. Retry with the same Idempotency-Key: you get "
            "the new key if it did."
        )
    return (
        f"The rotation may have happened: GET /v1/auth/api-keys/{key_id} and look at "
        "replacedBy. If it names a key, the rotation happened and GET "
        "/v1/auth/api-keys/{replacedBy}/reveal shows the new key; if it is null, retry."
    )


class KeyService:
    def __init__(
        self,
        keys: KeyStore,
        workspaces: WorkspaceStore,
        vault: KeyVault,
        clock: Clock,
        events: EventLog,
        idempotency: IdempotencyStore,
        key_limit: int = DEFAULT_LIMITS[KEY_LIMIT],
        usage_today: CountsToday | None = None,
    ):
        self._key_limit = key_limit
        self._usage_today = usage_today
        self._keys = keys
        self._workspaces = workspaces
        self._vault = vault
        self._clock = clock
        self._events = events
        self._idempotency = idempotency

    def _issue(
        self,
        owner_id: str,
        label: str,
        category: str,
        workspace_id: str | None,
        scopes: Sequence[str],
        lifetime_days: int,
        allowed_cidrs: tuple[str, ...] | None,
        requests_per_day: int | None = None,
        dpop_jkt: str | None = None,
    ) -> tuple[ApiKey, str, bytes]:
        plaintext = generate_key(owner_id, workspace_id)
        api_key = ApiKey.new(
            owner_id=owner_id,
            label=label,
            category=category,
            workspace_id=workspace_id,
            scopes=tuple(ordered(scopes)),
            key_hash=hash_secret(plaintext),
            hint=hint(plaintext),
            created_at=self._clock.now(),
            revealable=True,
            lifetime_days=lifetime_days,
            allowed_cidrs=allowed_cidrs,
            requests_per_day=requests_per_day,
            dpop_jkt=dpop_jkt,
        )
        ciphertext = self._vault.seal(plaintext, api_key.id, owner_id)
        return api_key, plaintext, ciphertext

    def create(
        self, principal: Principal, request: NewKey, idempotent: IdempotentRequest | None = None
    ) -> IssuedKey:
        try:
            issued, _ = self._idempotency.run(
                idempotent,
                self._clock.now,
                lambda key_id: self._replay(principal, key_id),
                lambda record: self._create(principal, request, record, idempotent),
                KeyNotCreated,
            )
        except KeyNotCreated:  # it committed, yet no record: a conflict, not a race lost
            raise DependencyUnavailable("DynamoDB", _created_maybe(idempotent)) from None
        return issued

    def _create(
        self,
        principal: Principal,
        request: NewKey,
        record: Recorder,
        idempotent: IdempotentRequest | None,
    ) -> IssuedKey:
        category = request.category
        if not isinstance(category, str) or category not in CATEGORIES:
            raise refused(Rule.CATEGORY_UNKNOWN)
        if category == ADMIN and request.workspace_id is not None:
            raise refused(Rule.ADMIN_KEY_WITH_WORKSPACE)
        if category == WORKSPACE and request.workspace_id is None:
            raise refused(Rule.WORKSPACE_KEY_WITHOUT_WORKSPACE)
        allowed = SCOPES_BY_CATEGORY[category]
        if request.scopes is None:
            scopes = [s for s in allowed if s in principal.scopes]
        else:
            unknown = [s for s in request.scopes if s not in allowed]
            if not request.scopes or unknown:
                raise refused(
                    Rule.SCOPES_OUTSIDE_CATEGORY,
                    f"scopes must be a non-empty subset of {', '.join(allowed)}.",
                )
            scopes = list(dict.fromkeys(request.scopes))
        if not scopes or not set(scopes) <= principal.scopes:
            raise refused(Rule.SCOPES_BEYOND_CREATOR, NOT_MINE)
        if request.workspace_id is not None and not ids.is_workspace_id(request.workspace_id):
            raise refused(Rule.WORKSPACE_ID_MALFORMED)
        if request.workspace_id is not None and not self._workspaces.is_member(
            request.workspace_id, principal.user_id
        ):
            raise refused(Rule.NOT_A_MEMBER)
        api_key, plaintext, ciphertext = self._issue(
            principal.user_id,
            request.label,
            category,
            request.workspace_id,
            scopes,
            request.lifetime_days,
            request.allowed_cidrs,
            request.requests_per_day,
            request.dpop_jkt,
        )
        event = self._events.by(
            principal,
            events.KEY_CREATED,
            api_key.owner_id,
            api_key.id,
            api_key.workspace_id,
            {
                "label": api_key.label,
                "category": api_key.category,
                "scopes": list(api_key.scopes),
                "expiresAt": rfc3339(api_key.expires_at),
                "allowedCidrs": list(api_key.allowed_cidrs) if api_key.allowed_cidrs else None,
                "requestsPerDay": api_key.requests_per_day,
                "dpopJkt": api_key.dpop_jkt,
            },
        )
        # The limit is a counter, one slot taken before the creation: exact under
        # concurrency. A failure here is before anything was made: a plain 503.
        if not self._keys.take_slot(api_key.owner_id, self._key_limit, api_key.created_at):
            raise refused(
                Rule.KEY_LIMIT,
                f"At most {self._key_limit} keys that are not revoked per user (KEY_LIMIT): "
                "revoke one to create another.",
            )
        try:
            # The Idempotency-Key claimed last, just before the commit point.
            also: list[dict[str, Any] | Pending] = [
                self._events.member(event), *record(api_key.id)
            ]
        except BaseException:
            self._keys.give_slot_back(api_key.owner_id)
            raise
        try:
            self._keys.create(api_key, ciphertext, api_key.created_at, also, counted=True)
        except DependencyUnavailable as failure:
            raise DependencyUnavailable(failure.dependency, _created_maybe(idempotent)) from None
        self._events.published(event)
        logger.info("api key created", extra={"key_id": api_key.id, "category": api_key.category})
        return IssuedKey(api_key, plaintext)

    def list(
        self,
        principal: Principal,
        limit: int,
        cursor: str | None,
        status: str | None,
        search: str | None = None,
    ) -> KeyPage | KeyRefusal:
        """A page of the caller's keys (of the principal's workspace, if any), newest first;
        with `search`, only those whose label contains it, compared caselessly
        (`strict_parsing.folded`), reading at most `SEARCH_READS` pages of keys."""
        after = None
        if cursor is not None:
            after = strict_parsing.decode_cursor(cursor, ids.is_key_id)
            if after is None:
                return KeyRefusal(Rule.CURSOR_NOT_OURS)
        if status is not None and status not in STATUSES:
            return KeyRefusal(Rule.STATUS_UNKNOWN)
        now = self._clock.now()
        workspace_id = principal.workspace_id

        wanted = strict_parsing.folded(search) if search else None

        def keep(api_key: ApiKey) -> bool:
            if api_key.gone(now):
                return False
            if workspace_id is not None and api_key.workspace_id != workspace_id:
                return False
            if wanted is not None and wanted not in strict_parsing.folded(api_key.label):
                return False
            return status is None or api_key.status(now) == status

        reads = SEARCH_READS if wanted is not None else None
        return self._keys.list(principal.user_id, limit, after, keep, reads)

    def _owned_with_ciphertext(
        self, principal: Principal, key_id: str, last_use: bool = False
    ) -> tuple[ApiKey, bytes | None]:
        """The caller's own key, or 404: another user's key is indistinguishable from none."""
        found = (
            self._keys.get_with_ciphertext(principal.user_id, key_id, last_use)
            if ids.is_key_id(key_id)
            else None
        )
        now = self._clock.now()
        if found is None or found[0].gone(now):
            raise refused(Rule.NO_SUCH_KEY)
        api_key = found[0]
        if api_key.status(now) == "expired" and api_key.notice_at is not None:
            self._announce_expired(api_key)
            api_key = replace(api_key, notice_at=None)
        return api_key, found[1]

    def _announce_expired(self, api_key: ApiKey) -> None:
        """`key.expired`, the first time anyone sees this key expired (or the sweep does)."""
        event = self._events.new(
            events.KEY_EXPIRED,
            api_key.owner_id,
            events.system(events.EXPIRY),
            key_id=api_key.id,
            workspace_id=api_key.workspace_id,
            data={"expiresAt": rfc3339(api_key.expires_at)},
        )
        now = self._clock.now()
        if self._keys.announce_expired(Notice.of(api_key), now, [self._events.member(event)]):
            self._events.published(event)

    def owned(self, principal: Principal, key_id: str, hands_out: bool = False) -> ApiKey:
        """The caller's own key (404 otherwise). `hands_out`: the caller is about to receive
        a key with this key's scopes (reveal, rotate), which needs those scopes (403)."""
        api_key = self._owned_with_ciphertext(principal, key_id)[0]
        if hands_out:
            self._require_scopes_of(principal, api_key)
        return api_key

    @staticmethod
    def _require_scopes_of(principal: Principal, api_key: ApiKey) -> None:
        """Handing out a key (reveal, or a rotation's successor) hands out its scopes: a
        credential may only do that for keys whose scopes it holds itself."""
        if not set(api_key.scopes) <= principal.scopes:
            raise refused(Rule.SCOPES_BEYOND_CREATOR, NOT_MINE)

    def get(self, principal: Principal, key_id: str) -> ApiKey:
        return self._owned_with_ciphertext(principal, key_id, last_use=True)[0]

    def sealed(self, principal: Principal, key_id: str) -> tuple[ApiKey, bytes | None]:
        """The caller's own key and its stored ciphertext, for `reveal` (404, 403)."""
        found = self._owned_with_ciphertext(principal, key_id)
        self._require_scopes_of(principal, found[0])
        return found

    def reveal(
        self, principal: Principal, api_key: ApiKey, ciphertext: bytes | None
    ) -> IssuedKey:
        """The plaintext of `api_key` (from `sealed`), once its audit event is stored."""
        now = self._clock.now()
        if api_key.status(now) == "revoked":
            raise refused(Rule.KEY_REVOKED)
        plaintext = self._open(api_key, ciphertext)
        self._events.record(
            self._events.by(
                principal, events.KEY_REVEALED, api_key.owner_id, api_key.id, api_key.workspace_id
            )
        )
        logger.info("api key revealed", extra={"key_id": api_key.id})
        return IssuedKey(api_key, plaintext)

    def _open(self, api_key: ApiKey, ciphertext: bytes | None) -> str:
        if ciphertext is None:
            raise refused(Rule.NOT_REVEALABLE)
        try:
            return self._vault.open(ciphertext, api_key.id, api_key.owner_id)
        except CiphertextMismatch:
            logger.error(
                "stored ciphertext does not match its record", extra={"key_id": api_key.id}
            )
            raise refused(Rule.SECRET_LOST) from None

    def rotate(
        self,
        principal: Principal,
        old: ApiKey,
        grace: timedelta,
        idempotent: IdempotentRequest | None = None,
    ) -> IssuedKey:
        """`old` (from `owned(..., hands_out=True)`) gets a successor with the same label,
        category, workspace, scopes, lifetime and allow-list; it keeps working for `grace`.
        A retry with the same Idempotency-Key answers the same successor."""
        try:
            issued, _ = self._idempotency.run(
                idempotent,
                self._clock.now,
                lambda key_id: self._replay(principal, key_id),
                lambda record: self._rotate(principal, old, grace, record, idempotent),
                KeyNotActive,
            )
        except KeyNotActive:  # another request won, or the key is no longer active
            raise key_not_active() from None
        return issued

    def _rotate(
        self,
        principal: Principal,
        old: ApiKey,
        grace: timedelta,
        record: Recorder,
        idempotent: IdempotentRequest | None,
    ) -> IssuedKey:
        if old.workspace_id is not None and not self._workspaces.is_member(
            old.workspace_id, old.owner_id
        ):
            # Its successor would be refused on every request, as a new key would be at create.
            raise refused(Rule.NOT_A_MEMBER)
        now = self._clock.now()
        if old.status(now) != "active" or old.replaced_by is not None:
            raise key_not_active()
        successor, plaintext, ciphertext = self._issue(
            old.owner_id,
            old.label,
            old.category,
            old.workspace_id,
            old.scopes,
            old.lifetime_days,
            old.allowed_cidrs,
            old.requests_per_day,
            old.dpop_jkt,  # bound to the same key pair: rotating changes the secret only
        )
        # The successor carries on the day's count of its key: rotating never resets a quota.
        day = usage_day(now)
        counted = (
            self._usage_today.counted_today(old, now)
            if self._usage_today is not None
            else old.requests_on(day)
        )
        if counted:
            successor = replace(successor, requests_counted=((day, counted),))
        ends = min(old.expires_at, now + grace)
        event = self._events.by(
            principal,
            events.KEY_ROTATED,
            old.owner_id,
            old.id,
            old.workspace_id,
            {
                "successorId": successor.id,
                "gracePeriodSeconds": int(grace.total_seconds()),
                "oldKeyEndsAt": rfc3339(ends),
                "expiresAt": rfc3339(successor.expires_at),
            },
        )
        also: list[dict[str, Any] | Pending] = [
            self._events.member(event), *record(successor.id)
        ]
        try:
            self._keys.rotate(old, successor, ciphertext, now, grace, also)
        except DependencyUnavailable as failure:
            raise DependencyUnavailable(
                failure.dependency, _rotated_maybe(old.id, idempotent)
            ) from None
        self._events.published(event)
        logger.info("api key rotated", extra={"key_id": old.id, "successor_id": successor.id})
        return IssuedKey(successor, plaintext)

    # -- Idempotency-Key ---------------------------------------------------------------

    def _replay(self, principal: Principal, result_id: str) -> IssuedKey | None:
        """The first answer to an Idempotency-Key, given again: the same key id and, from
        the vault, the same plaintext (None: no such key, not yet or no longer)."""
        try:
            api_key, ciphertext = self._owned_with_ciphertext(principal, result_id)
        except KeyRefused as refusal:
            if refusal.refusal.rule is Rule.NO_SUCH_KEY:
                return None
            raise
        self._require_scopes_of(principal, api_key)
        plaintext = self._open(api_key, ciphertext)
        logger.info("api key answered again (Idempotency-Key)", extra={"key_id": api_key.id})
        return IssuedKey(api_key, plaintext, replayed=True)

    def update(self, principal: Principal, api_key: ApiKey, changes: KeyChanges) -> ApiKey:
        """Rename and set or clear the allow-list of `api_key` (from `owned`)."""
        now = self._clock.now()
        if api_key.status(now) == "revoked":
            raise key_not_active("A revoked key cannot be changed.")
        label = changes.label if changes.label is not None else api_key.label
        cidrs = changes.allowed_cidrs if changes.cidrs_given else api_key.allowed_cidrs
        quota = changes.requests_per_day if changes.quota_given else api_key.requests_per_day
        changed = []
        if label != api_key.label:
            changed.append("label")
        if cidrs != api_key.allowed_cidrs:
            changed.append("allowedCidrs")
        if quota != api_key.requests_per_day:
            changed.append("requestsPerDay")
        if not changed:
            return self._keys.with_last_use([api_key])[0]
        event = self._events.by(
            principal,
            events.KEY_UPDATED,
            api_key.owner_id,
            api_key.id,
            api_key.workspace_id,
            {
                "changed": changed,
                "label": label,
                "allowedCidrs": list(cidrs) if cidrs else None,
                "requestsPerDay": quota,
            },
        )
        try:
            self._keys.update(api_key, label, cidrs, now, [self._events.member(event)], quota)
        except KeyNotActive:
            raise key_not_active("A revoked key cannot be changed.") from None
        self._events.published(event)
        logger.info("api key updated", extra={"key_id": api_key.id, "changed": changed})
        updated = replace(api_key, label=label, allowed_cidrs=cidrs, requests_per_day=quota)
        return self._keys.with_last_use([updated])[0]

    def revoke(self, principal: Principal, api_key: ApiKey) -> None:
        """Revoke `api_key` (from `owned`); a key in its grace period at once."""
        now = self._clock.now()
        if api_key.status(now) == "revoked":
            return  # revoking twice is not an error (204 again)
        event = self._events.by(
            principal,
            events.KEY_REVOKED,
            api_key.owner_id,
            api_key.id,
            api_key.workspace_id,
            {"inGrace": api_key.replaced_by is not None},
        )
        if self._keys.revoke(api_key, now, [self._events.member(event)]):
            self._events.published(event)
            logger.info("api key revoked", extra={"key_id": api_key.id})

    def usage(
        self,
        api_key: ApiKey,
        granularity: Granularity,
        start: str | None,
        end: str | None,
        flush_seconds: int,
    ) -> Usage | KeyRefusal:
        """`api_key`'s (from `owned`) counted requests by hour or day."""
        now = self._clock.now()
        found = usage.span(granularity, start, end, now)
        if isinstance(found, KeyRefusal):
            return found
        since, until = found
        last = until - timedelta(hours=1)
        hours = self._keys.usage_hours(api_key.id, hour_label(since), hour_label(last))
        return usage.report(granularity, since, until, hours, now, flush_seconds)
