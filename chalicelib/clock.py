"""Time, in one place: aware UTC datetimes, RFC 3339 strings, and a clock tests can move."""

from __future__ import annotations

import time
from datetime import UTC, datetime


class Clock:
    """Wall-clock time. Tests substitute `FrozenClock` to cross expiry and retention limits."""

    def now(self) -> datetime:
        return datetime.now(UTC)


class FrozenClock(Clock):
    def __init__(self, at: datetime | None = None):
        self.at = at or datetime.now(UTC).replace(microsecond=0)

    def now(self) -> datetime:
        return self.at

    def advance(self, **delta: float) -> None:
        from datetime import timedelta

        self.at = self.at + timedelta(**delta)


def rfc3339(moment: datetime | None) -> str | None:
    if moment is None:
        return None
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_rfc3339(text: str | None) -> datetime | None:
    if not text:
        return None
    return datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)


def epoch(moment: datetime) -> int:
    return int(moment.timestamp())


def monotonic() -> float:
    return time.monotonic()
