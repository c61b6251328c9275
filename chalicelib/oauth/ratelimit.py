"""How many clients one source address may register: a limit (MCP_REGISTRATION_LIMIT,
default `LIMIT`) per `WINDOW`.

Dynamic Client Registration is open to anyone, so each address gets a fixed window counted
by one conditional DynamoDB update (atomic, so concurrent registrations cannot overshoot).
Past the limit the answer is 429 with the seconds until the window ends.

Items (see `items.py`):
  DCRLIMIT#<address>  WINDOW#<start>   count, ttl
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from chalicelib import items
from chalicelib.clock import epoch
from chalicelib.config import DEFAULT_REGISTRATION_LIMIT
from chalicelib.table import update, write_once

LIMIT = DEFAULT_REGISTRATION_LIMIT
WINDOW = 3600  # seconds


class RegistrationLimit:
    def __init__(self, client: Any, table_name: str, limit: int = LIMIT, window: int = WINDOW):
        self._client = client
        self._table = table_name
        self._limit = limit
        self._window = window

    def admit(self, address: str, now: datetime) -> int | None:
        """None when this registration may go ahead, else the seconds to wait."""
        seconds = epoch(now)
        start = seconds - seconds % self._window
        counted = update(
            self._table,
            items.registration_window(address, start),
            "ADD #count :one SET #ttl = :ttl",
            # Counted and checked in one write: no read-then-write race.
            "attribute_not_exists(#count) OR #count < :limit",
            {"one": 1, "limit": self._limit, "ttl": start + 2 * self._window},
        )
        if write_once(self._client, counted):
            return None
        return max(1, start + self._window - seconds)
