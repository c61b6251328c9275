"""Identifiers: `key_`, `ws_` and `usr_` followed by a ULID (sortable by creation time).

The time in a ULID is the creation time the caller passes (its injected clock, or an
imported record's own creation time), so ids sort as the records' `createdAt` do.
"""

from __future__ import annotations

import re
import secrets
import threading
from datetime import UTC, datetime

# Crockford's base32, as the ULID spec uses it.
_CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
_ULID = r"[0-9A-HJKMNP-TV-Z]{26}"

KEY_ID = re.compile(rf"^key_{_ULID}$")
WORKSPACE_ID = re.compile(rf"^ws_{_ULID}$")
USER_ID = re.compile(r"^usr_[0-9A-Za-z]{1,40}$")
EVENT_ID = re.compile(rf"^evt_{_ULID}$")
TRUST_POLICY_ID = re.compile(rf"^tp_{_ULID}$")
WEBHOOK_ID = re.compile(rf"^whk_{_ULID}$")
SERVICE_CLIENT_ID = re.compile(rf"^scl_{_ULID}$")


def ulid(created_at: datetime) -> str:
    """48 bits of milliseconds then 80 random bits, 26 Crockford base32 characters."""
    ms = int(created_at.timestamp() * 1000)
    if not 0 <= ms < 1 << 48:
        raise ValueError("a ULID's time lies between 1970 and the year 10889")
    value = (ms << 80) | secrets.randbits(80)
    chars = []
    for _ in range(26):
        chars.append(_CROCKFORD[value & 31])
        value >>= 5
    return "".join(reversed(chars))


def _crockford(value: int) -> str:
    chars = []
    for _ in range(26):
        chars.append(_CROCKFORD[value & 31])
        value >>= 5
    return "".join(reversed(chars))


_event_lock = threading.Lock()
_last_event = 0


def new_event_id(occurred_at: datetime) -> str:
    """`evt_` + a ULID that grows strictly within this process, even inside one millisecond
    (the ULID spec's monotonic mode), so that events list in the order they happened."""
    global _last_event
    ms = int(occurred_at.timestamp() * 1000)
    with _event_lock:
        value = (ms << 80) | secrets.randbits(80)
        if value <= _last_event:
            value = _last_event + 1
        _last_event = value
    return "evt_" + _crockford(value)


def new_key_id(created_at: datetime) -> str:
    return "key_" + ulid(created_at)


def new_workspace_id(created_at: datetime) -> str:
    return "ws_" + ulid(created_at)


def new_user_id(created_at: datetime) -> str:
    return "usr_" + ulid(created_at)


_policy_lock = threading.Lock()
_last_policy = 0


def new_trust_policy_id(created_at: datetime) -> str:
    """`tp_` + a ULID, monotonic within this process like an event id: the first matching
    policy in creation order wins an exchange, so two made in one millisecond keep theirs."""
    global _last_policy
    ms = int(created_at.timestamp() * 1000)
    with _policy_lock:
        value = (ms << 80) | secrets.randbits(80)
        if value <= _last_policy:
            value = _last_policy + 1
        _last_policy = value
    return "tp_" + _crockford(value)


def is_trust_policy_id(value: str) -> bool:
    return bool(TRUST_POLICY_ID.fullmatch(value))


def new_service_client_id(created_at: datetime) -> str:
    return "scl_" + ulid(created_at)


def is_service_client_id(value: object) -> bool:
    return isinstance(value, str) and bool(SERVICE_CLIENT_ID.fullmatch(value))


def is_key_id(value: str) -> bool:
    return bool(KEY_ID.fullmatch(value))


def is_workspace_id(value: str) -> bool:
    return bool(WORKSPACE_ID.fullmatch(value))


def is_user_id(value: str) -> bool:
    return bool(USER_ID.fullmatch(value))


def is_event_id(value: str) -> bool:
    return bool(EVENT_ID.fullmatch(value))


def new_webhook_id(created_at: datetime) -> str:
    return "whk_" + ulid(created_at)


def is_webhook_id(value: str) -> bool:
    return bool(WEBHOOK_ID.fullmatch(value))
def ulid_time(value: str) -> datetime:
    """The creation time a ULID holds (its first 10 characters: milliseconds since 1970)."""
    ms = 0
    for char in value[:10].upper():
        ms = ms * 32 + _CROCKFORD.index(char)
    return datetime.fromtimestamp(ms / 1000, UTC)
