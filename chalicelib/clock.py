"""Time, in one place: aware UTC datetimes, RFC 3339 strings, and a clock tests can move."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta


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
        self.at = self.at + timedelta(**delta)


def rfc3339(moment: datetime | None) -> str | None:
    if moment is None:
        return None
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_rfc3339(text: str | None) -> datetime | None:
    """A time as `rfc3339` writes it (`2026-01-31T23:59:59Z`), or ValueError. Not strptime:
    its first call imports `_strptime` and compiles the locale's patterns, on the authorizer's
    cold start (every key's dates are parsed)."""
    if not text:
        return None
    if not (
        len(text) == 20
        and text[4] == text[7] == "-"
        and text[10] == "T"
        and text[13] == text[16] == ":"
        and text[19] == "Z"
        and all(text[i] in "0123456789" for i in _DIGITS)
    ):
        raise ValueError(f"not a time as YYYY-MM-DDTHH:MM:SSZ: {text!r}")
    # ValueError for a day or an hour out of range, as strptime gave.
    return datetime(
        int(text[0:4]), int(text[5:7]), int(text[8:10]),
        int(text[11:13]), int(text[14:16]), int(text[17:19]), tzinfo=UTC,
    )  # fmt: skip


_DIGITS = (0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18)


def epoch(moment: datetime) -> int:
    return int(moment.timestamp())


def monotonic() -> float:
    return time.monotonic()
