"""Single-use assertion ids (RFC 7523 §3 `jti`): an assertion is accepted once.

Items (see `items.py`):
  JTI#<sha256 of issuer and jti>  JTI   ttl (the assertion's exp)

One conditional put is the commit point: it settles the race between two requests
presenting the same assertion (exactly one write succeeds). The item lives until the
assertion's `exp`, after which the assertion is refused for its expiry anyway; an item past
its `ttl` that no sweep has deleted yet is treated as gone (the condition says so).
"""

from __future__ import annotations

import hashlib
from datetime import datetime
from typing import Any

from chalicelib import items
from chalicelib.clock import epoch
from chalicelib.table import put, to_attribute, write_once


class Replays:
    def __init__(self, client: Any, table_name: str):
        self._client = client
        self._table = table_name

    def spend(self, issuer: str, jti: str, expires_at: int, now: datetime) -> bool:
        """True the first time `issuer`'s `jti` is presented (it is now spent), False for a
        replay. A store failure raises (503): never accepted unrecorded."""
        digest = hashlib.sha256(f"{issuer}\0{jti}".encode()).hexdigest()
        item = {**items.spent_assertion(digest), "ttl": to_attribute(int(expires_at))}
        spent = put(
            self._table,
            item,
            # Absent, or spent by an assertion that has expired since (its ttl passed).
            "attribute_not_exists(#pk) OR #ttl < :now",
            {"now": epoch(now)},
        )
        return write_once(self._client, spent)
