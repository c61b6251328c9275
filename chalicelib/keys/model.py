"""The API key record, its states and its lifetimes."""

from __future__ import annotations

import math
from copy import replace
from datetime import UTC, datetime, timedelta
from typing import Literal

from chalicelib import ids
from chalicelib.records import Record

# The lifetimes of a key, here only: everything else asks the record.
MAX_LIFETIME_DAYS = 90  # static keys live at most 90 days; a creator may choose fewer
KEY_LIFETIME = timedelta(days=MAX_LIFETIME_DAYS)
REVOKED_RETENTION = timedelta(days=30)  # revoked keys stay on the blocklist 30 days
MAX_GRACE_PERIOD = timedelta(days=7)  # how long a rotated key may keep working
EXPIRY_WARNING = timedelta(days=7)  # `key.expiring` is announced this long before the end
LAST_USED_PRECISION = timedelta(minutes=5)  # `lastUsedAt` is written at most this often
MAX_REQUESTS_PER_DAY = 10_000_000  # the highest daily quota a key may have
# The credential and owner items carry the key's counted requests of a UTC day in an
# attribute named after that day (`requestsOn20261125`): the decision reads today's count
# from the item it reads anyway, and a new day starts from zero without a reset write.
REQUESTS_ON = "requestsOn"
# When an owner item's next expiry notice is due: the sort key of the notice index (keys/store.py).
NOTICE_AT = "noticeAt"

KeyStatus = Literal["active", "revoked", "expired"]


def lifetime(days: int) -> timedelta:
    return timedelta(days=days)


def last_used_window(now: datetime) -> datetime:
    """The start of the 5-minute window `now` falls in: what `lastUsedAt` records."""
    seconds = int(LAST_USED_PRECISION.total_seconds())
    return datetime.fromtimestamp(int(now.timestamp()) // seconds * seconds, tz=now.tzinfo)


def usage_day(now: datetime) -> str:
    """The UTC day of `now` as `yyyymmdd`: the suffix of its `requestsOn…` attribute."""
    return now.astimezone(UTC).strftime("%Y%m%d")


def usage_hour(now: datetime) -> datetime:
    """The start of the UTC hour `now` falls in: one usage item per key and hour."""
    return now.astimezone(UTC).replace(minute=0, second=0, microsecond=0)


def next_midnight(now: datetime) -> datetime:
    """The next UTC midnight: when a daily quota starts again."""
    day = now.astimezone(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    return day + timedelta(days=1)


def seconds_to_midnight(now: datetime) -> int:
    """Retry-After of a refusal for quota: whole seconds, at least 1."""
    return max(1, math.ceil((next_midnight(now) - now).total_seconds()))


class ApiKey(Record):
    id: str
    owner_id: str
    label: str
    category: str
    workspace_id: str | None
    scopes: tuple[str, ...]
    key_hash: str
    created_at: datetime
    expires_at: datetime
    hint: str | None = None
    revealable: bool = False
    revoked_at: datetime | None = None
    replaced_by: str | None = None
    # When the record counts as deleted (DynamoDB TTL deletes lazily; the code does not wait).
    retain_until: datetime | None = None
    # The lifetime its creator chose; a rotation gives the successor the same one.
    lifetime_days: int = MAX_LIFETIME_DAYS
    # None: any source address. Otherwise canonical CIDR strings (ipaddress' spelling).
    allowed_cidrs: tuple[str, ...] | None = None
    last_used_at: datetime | None = None
    # When the next expiry notice is due (owner item only); None once none is (announced,
    # revoked or rotated). Not part of the resource.
    notice_at: datetime | None = None
    # The daily quota (None: none), and the counted requests per UTC day (`usage_day`) as
    # the item read carries them (only the decision's reads carry them).
    requests_per_day: int | None = None
    requests_counted: tuple[tuple[str, int], ...] = ()
    # The RFC 7638 thumbprint of the key pair the key is bound to (RFC 9449 DPoP): the key
    # works only with a proof by that pair. None: a bearer key.
    dpop_jkt: str | None = None

    @classmethod
    def new(
        cls,
        owner_id: str,
        label: str,
        category: str,
        workspace_id: str | None,
        scopes: tuple[str, ...],
        key_hash: str,
        hint: str | None,
        created_at: datetime,
        revealable: bool,
        lifetime_days: int = MAX_LIFETIME_DAYS,
        allowed_cidrs: tuple[str, ...] | None = None,
        requests_per_day: int | None = None,
        dpop_jkt: str | None = None,
    ) -> ApiKey:
        """A key created at `created_at`: its id sorts by that time, and it expires
        `lifetime_days` (at most 90) later."""
        return cls(
            id=ids.new_key_id(created_at),
            owner_id=owner_id,
            label=label,
            category=category,
            workspace_id=workspace_id,
            scopes=scopes,
            key_hash=key_hash,
            hint=hint,
            created_at=created_at,
            expires_at=created_at + lifetime(lifetime_days),
            revealable=revealable,
            lifetime_days=lifetime_days,
            allowed_cidrs=allowed_cidrs,
            requests_per_day=requests_per_day,
            dpop_jkt=dpop_jkt,
        )

    def end(self) -> datetime | None:
        """When the key stopped (or stops) working as revoked, if it does.

        An explicit revocation; or, for a key rotated with a grace period, the end of the
        grace (its `expiresAt`): from then on it is refused as revoked, not as expired.
        """
        if self.revoked_at is not None:
            return self.revoked_at
        if self.replaced_by is not None:
            return self.expires_at
        return None

    def status(self, now: datetime) -> KeyStatus:
        end = self.end()
        if end is not None and now >= end:
            return "revoked"
        if now >= self.expires_at:
            return "expired"
        return "active"

    def gone(self, now: datetime) -> bool:
        return self.retain_until is not None and now >= self.retain_until

    def revoked(self, now: datetime, replaced_by: str | None = None) -> ApiKey:
        return replace(
            self,
            revoked_at=now,
            replaced_by=replaced_by or self.replaced_by,
            retain_until=now + REVOKED_RETENTION,
        )

    def in_grace(self, now: datetime, successor: str, grace: timedelta) -> ApiKey:
        """Replaced by `successor`, still working until now + grace (never longer than it
        would have), then refused as revoked and retained 30 days from that end."""
        end = min(self.expires_at, now + grace)
        return replace(
            self, replaced_by=successor, expires_at=end, retain_until=end + REVOKED_RETENTION
        )

    def requests_on(self, day: str) -> int:
        """The requests counted on `day` as the item read says (the decision adds what
        its own container has not written yet)."""
        return dict(self.requests_counted).get(day, 0)

    def __repr__(self) -> str:  # the hash is not a secret, but it has no business in logs
        return f"ApiKey(id={self.id!r}, owner_id={self.owner_id!r}, category={self.category!r})"
