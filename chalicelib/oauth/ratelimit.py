"""How many clients one source address may register: a limit (MCP_REGISTRATION_LIMIT,
default `LIMIT`) per `WINDOW`.

Dynamic Client Registration is open to anyone, so each address gets a fixed window counted
by one conditional DynamoDB update (`table.WindowCounter`: concurrent registrations cannot
overshoot). Past the limit the answer is 429 with the seconds until the window ends.

Items (see `items.py`):
  DCRLIMIT#<address>  WINDOW#<start>   count, ttl
"""

from __future__ import annotations

from typing import Any

from chalicelib import items
from chalicelib.config import DEFAULT_REGISTRATION_LIMIT
from chalicelib.table import WindowCounter

LIMIT = DEFAULT_REGISTRATION_LIMIT
WINDOW = 3600  # seconds


class RegistrationLimit(WindowCounter):
    def __init__(self, client: Any, table_name: str, limit: int = LIMIT, window: int = WINDOW):
        super().__init__(client, table_name, items.registration_window, limit, window)
