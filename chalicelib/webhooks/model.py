"""A webhook subscription, a delivery of one event to it, and the rules they follow."""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Literal
from urllib.parse import urlsplit

from chalicelib.events.model import TYPES
from chalicelib.hosts import ADDRESS_RULE, is_address, names_an_address

ALL_EVENTS = "*"
MAX_URL = 2048
# The old secret keeps signing for this long after a rotation, beside the new one.
ROTATION_OVERLAP = timedelta(hours=24)
# A delivery is tried at once, then after each of these (jittered), then it has failed.
RETRY_DELAYS = (
    timedelta(seconds=5),
    timedelta(minutes=5),
    timedelta(minutes=30),
    timedelta(hours=2),
    timedelta(hours=5),
    timedelta(hours=10),
    timedelta(hours=10),
)
JITTER = 0.1  # each delay is stretched or shrunk by up to this fraction
# A subscription whose deliveries have failed, without one success, for this long is disabled.
FAILING_LIMIT = timedelta(days=3)
# A receiver has this long to answer 2xx.
DELIVERY_TIMEOUT = 10.0

DeliveryState = Literal["pending", "delivered", "failed"]


class InvalidWebhook(ValueError):
    """A subscription's field breaks its rule; the message names the field and the rule."""


@dataclass(frozen=True)
class Webhook:
    id: str
    workspace_id: str
    url: str
    events: tuple[str, ...]
    enabled: bool
    description: str | None
    # The signing secret, sealed by KMS (chalicelib/keys/vault.py) under an encryption
    # context naming this webhook and its workspace: only the delivery worker opens it.
    sealed_secret: bytes
    created_at: datetime
    created_by: str
    sealed_previous: bytes | None = None
    previous_until: datetime | None = None
    # When its deliveries started failing without a success since (None: not failing).
    failing_since: datetime | None = None
    disabled_reason: str | None = None

    def wants(self, event_type: str) -> bool:
        return ALL_EVENTS in self.events or event_type in self.events

    def sealed_in_use(self, now: datetime) -> tuple[bytes, ...]:
        """The current secret, and the previous one while the rotation's overlap lasts
        (sealed both)."""
        if self.sealed_previous and self.previous_until and now < self.previous_until:
            return (self.sealed_secret, self.sealed_previous)
        return (self.sealed_secret,)


@dataclass(frozen=True)
class Delivery:
    webhook_id: str
    workspace_id: str
    event_id: str
    event_type: str
    body: str  # the JSON sent, the same at every attempt
    state: DeliveryState
    attempts: int
    created_at: datetime
    next_attempt_at: datetime | None = None
    last_status: int | None = None  # the receiver's last HTTP status (None: no answer)
    last_attempt_at: datetime | None = None

    @property
    def id(self) -> str:
        return delivery_id(self.event_id)


def delivery_id(event_id: str) -> str:
    """A delivery is named after its event (one delivery per event and subscription)."""
    return "dlv_" + event_id.removeprefix("evt_")


def event_id_of(delivery: str) -> str | None:
    if not re.fullmatch(r"dlv_[0-9A-HJKMNP-TV-Z]{26}", delivery):
        return None
    return "evt_" + delivery.removeprefix("dlv_")


def retry_delay(attempts: int, first: timedelta | None = None) -> timedelta | None:
    """How long after its `attempts`-th failed attempt a delivery is tried again; None when
    that was the last. `first` replaces the first delay (WEBHOOK_FIRST_RETRY_SECONDS)."""
    if attempts > len(RETRY_DELAYS):
        return None
    delay = RETRY_DELAYS[attempts - 1]
    if attempts == 1 and first is not None:
        return first
    # Jitter spreads retries of one outage's failures; it guards nothing secret.
    return delay * random.uniform(1 - JITTER, 1 + JITTER)  # noqa: S311


# -- the rules of a subscription's fields ----------------------------------------------------

_LOOPBACK_NAMES = ("localhost", "127.0.0.1", "[::1]")
_LABEL = re.compile(r"(?!-)[a-z0-9-]{1,63}(?<!-)")
_TOP_LABEL = re.compile(r"[a-z]{2,63}|xn--[a-z0-9-]{1,59}")


def check_host(host: str) -> str | None:
    """Why `host` is not a public host name, or None. Addresses in every spelling are the
    shared rule for stored URLs (`chalicelib.hosts`); a subscription also needs a dotted
    public name."""
    if is_address(host):
        return f"its host {ADDRESS_RULE}"
    labels = host.rstrip(".").split(".")
    if len(labels) < 2 or not all(_LABEL.fullmatch(label) for label in labels):
        return "its host must be a public host name (such as hooks.example.com)"
    if not _TOP_LABEL.fullmatch(labels[-1]) or labels[-1] in ("localhost", "local", "internal"):
        return "its host must be a public host name (such as hooks.example.com)"
    return None


def check_url(url: str, local_mode: bool) -> str:
    """The subscription's URL as stored, or InvalidWebhook: https to a public host name (http
    to loopback too, in local mode). Every delivery is still checked by the fetcher's rules
    (public addresses only), whatever the name resolves to then."""
    rule = "url must be an https URL with a public host name"
    if not isinstance(url, str) or not url or len(url) > MAX_URL or url != url.strip():
        raise InvalidWebhook(f"{rule}, at most {MAX_URL} characters.")
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - a bad port raises here
    except ValueError:
        raise InvalidWebhook(f"{rule}.") from None
    if parts.username is not None or parts.password is not None or parts.fragment or "#" in url:
        raise InvalidWebhook(f"{rule}, without user, password or fragment.")
    if any(ord(c) < 33 or ord(c) == 127 for c in url):
        raise InvalidWebhook(f"{rule}, without spaces or control characters.")
    host = (parts.hostname or "").lower()
    netloc_host = parts.netloc.rsplit("@", 1)[-1].lower()
    if local_mode and parts.scheme in ("http", "https") and (
        host in _LOOPBACK_NAMES or netloc_host.startswith("[::1]")
    ):
        return url
    if parts.scheme != "https":
        raise InvalidWebhook(f"{rule}.")
    problem = "its host " + ADDRESS_RULE if names_an_address(url) else check_host(host)
    if problem is not None:
        raise InvalidWebhook(f"{rule}: {problem}.")
    return url


WEBHOOK_EVENT_RULE = 'events must be ["*"] or a list of event types'


def check_events(events: list[str], types: tuple[str, ...] = TYPES) -> tuple[str, ...]:
    if not events or len(set(events)) != len(events):
        raise InvalidWebhook(f"{WEBHOOK_EVENT_RULE}, without repeats.")
    if events == [ALL_EVENTS]:
        return (ALL_EVENTS,)
    unknown = [e for e in events if e not in types]
    if unknown:
        raise InvalidWebhook(f"{WEBHOOK_EVENT_RULE}: {unknown[0][:64]!r} is not one.")
    return tuple(events)
