"""A key's usage by hour or day: the range asked for, its buckets, and whether they are final.

The counts come from the usage items (`USAGE#<keyId>`/`HOUR#<hour>`, keys/last_use.py); a
day is the sum of its 24 hours (UTC). Every bucket of the range is answered, zero included.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Literal

from chalicelib.clock import parse_rfc3339
from chalicelib.keys.last_use import hour_label
from chalicelib.keys.refusals import KeyRefusal, Rule

Granularity = Literal["hour", "day"]
STEP: dict[str, timedelta] = {"hour": timedelta(hours=1), "day": timedelta(days=1)}
LONGEST: dict[str, timedelta] = {"hour": timedelta(days=31), "day": timedelta(days=400)}
DEFAULT_SPAN: dict[str, timedelta] = {"hour": timedelta(hours=24), "day": timedelta(days=7)}


@dataclass(frozen=True)
class Bucket:
    start: datetime
    requests: int


@dataclass(frozen=True)
class Usage:
    granularity: Granularity
    buckets: tuple[Bucket, ...]
    complete: bool


def _floor(moment: datetime, granularity: Granularity) -> datetime:
    moment = moment.astimezone(UTC).replace(minute=0, second=0, microsecond=0)
    return moment.replace(hour=0) if granularity == "day" else moment


def _ceil(moment: datetime, granularity: Granularity) -> datetime:
    floor = _floor(moment, granularity)
    return floor if floor == moment else floor + STEP[granularity]


def _moment(text: str | None, not_a_time: Rule) -> datetime | None | KeyRefusal:
    """The time `text` names (None when absent); `not_a_time` when it is not an RFC 3339
    time with an offset."""
    if text is None:
        return None
    try:
        moment = parse_rfc3339(text)
    except ValueError:
        moment = None
    if moment is None or moment.tzinfo is None:
        return KeyRefusal(not_a_time)
    return moment


def span(
    granularity: Granularity, start: str | None, end: str | None, now: datetime
) -> tuple[datetime, datetime] | KeyRefusal:
    """The buckets' range [first start, last end), aligned to the granularity; a refusal
    when an end is not a time, or the range is backwards or longer than allowed."""
    last = _moment(end, Rule.USAGE_END_NOT_A_TIME)
    if isinstance(last, KeyRefusal):
        return last
    first = _moment(start, Rule.USAGE_START_NOT_A_TIME)
    if isinstance(first, KeyRefusal):
        return first
    until = _ceil(last or now, granularity)
    since = _floor(first or until - DEFAULT_SPAN[granularity], granularity)
    if since >= until:
        return KeyRefusal(Rule.USAGE_RANGE_BACKWARDS)
    if until - since > LONGEST[granularity]:
        days = LONGEST[granularity].days
        return KeyRefusal(Rule.USAGE_RANGE_TOO_LONG, f"At most {days} days by {granularity}.")
    return since, until


def report(
    granularity: Granularity,
    since: datetime,
    until: datetime,
    hours: dict[str, int],
    now: datetime,
    flush_seconds: int,
) -> Usage:
    """The buckets of [since, until) from the hour items' counts (`hour_label` -> count).
    A bucket is final one usage write window after its end: counts older than that are
    never written (keys/last_use.py)."""
    step = STEP[granularity]
    buckets = []
    start = since
    while start < until:
        end = start + step
        hour, total = start, 0
        while hour < end:
            total += hours.get(hour_label(hour), 0)
            hour += timedelta(hours=1)
        buckets.append(Bucket(start, total))
        start = end
    complete = until + timedelta(seconds=flush_seconds) <= now
    return Usage(granularity, tuple(buckets), complete)
