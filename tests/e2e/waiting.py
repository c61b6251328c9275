"""How the end-to-end and browser tests wait: on an event, never for a while.

What the stack does off a request's path (a webhook delivery, a revocation from a leak
report, a usage flush) it says in a log line: `StackLog` hands each line to the test as the
stack prints it, and `StackLog.wait_for` waits on the line that says it. What a test's own
server receives (a webhook receiver) it signals itself (a `threading.Condition`).

Only the clock has no event: a grace period's end or a usage flush window's turn is a moment
that nothing announces, because the stack compares its clock with it only when a request
comes. `clock_passes` waits for such a moment, and is the one place a test waits for time.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

DEADLINE = 60.0  # seconds a test waits for an event before it fails (not a timed assertion)

Record = dict[str, Any]


def parse(line: str) -> Record | None:
    """A log line's JSON object (Powertools' lines), or None for any other line."""
    start = line.find("{")
    if start < 0:
        return None
    try:
        found = json.loads(line[start:])
    except ValueError:
        return None
    return found if isinstance(found, dict) else None


class StackLog:
    """The stack's stdout, line by line as it prints them (`running_stack(on_output=...)`)."""

    def __init__(self) -> None:
        self._lines: list[str] = []
        self._changed = threading.Condition()

    def append(self, line: str) -> None:
        with self._changed:
            self._lines.append(line)
            self._changed.notify_all()

    def mark(self) -> int:
        """Where the log is now: `wait_for(..., since=mark)` looks only at later lines."""
        with self._changed:
            return len(self._lines)

    def records(self, since: int = 0) -> list[Record]:
        with self._changed:
            lines = self._lines[since:]
        return [record for line in lines if (record := parse(line)) is not None]

    def wait_for(
        self, wanted: Callable[[Record], bool], since: int = 0, deadline: float = DEADLINE
    ) -> Record:
        """The first log record from `since` on that `wanted` accepts, waiting for the stack to
        print it; fails the test when it has not within `deadline` seconds."""
        ends = time.monotonic() + deadline
        seen = since
        with self._changed:
            while True:
                for line in self._lines[seen:]:
                    record = parse(line)
                    if record is not None and wanted(record):
                        return record
                seen = len(self._lines)
                left = ends - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"the stack printed no such log line in {deadline:.0f} s")
                self._changed.wait(left)


def says(text: str, **fields: Any) -> Callable[[Record], bool]:
    """A `wait_for` filter: the line's message is `text` and it has each of `fields`."""
    return lambda record: record.get("message") == text and all(
        record.get(name) == value for name, value in fields.items()
    )


def clock_passes(moment: datetime, deadline: float = DEADLINE) -> None:
    """Returns once this machine's clock (the stack's: same machine) is past `moment`.

    The only wait for time in the tests, because there is no event to wait on: a grace
    period ends, and a usage flush window turns, by the clock alone, and the stack looks at its
    clock only when a request comes (no line, answer or store change marks the moment). It
    waits for the moment itself, not for a guessed while; a moment further than `deadline`
    seconds away fails the test instead.
    """
    left = (moment - datetime.now(UTC)).total_seconds()
    if left > deadline:
        raise AssertionError(f"{moment.isoformat()} is more than {deadline:.0f} s away")
    while left > 0:
        time.sleep(left)
        left = (moment - datetime.now(UTC)).total_seconds()
