"""How many clients one source address may register: a limit (MCP_REGISTRATION_LIMIT,
default `LIMIT`) per `WINDOW`.

Dynamic Client Registration is open to anyone, so each address gets a fixed window counted
by one conditional DynamoDB update (atomic, so concurrent registrations cannot overshoot).
Past the limit the answer is 429 with the seconds until the window ends.

Items (see `table.py`):
  DCRLIMIT#<address>  WINDOW#<start>   count, ttl
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from botocore.exceptions import ClientError

from chalicelib.clock import epoch
from chalicelib.config import DEFAULT_REGISTRATION_LIMIT
from chalicelib.table import TTL_ATTRIBUTE, dynamodb_errors, is_condition_failure, key

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
        try:
            with dynamodb_errors():
                self._client.update_item(
                    TableName=self._table,
                    Key=key(f"DCRLIMIT#{address[:64]}", f"WINDOW#{start}"),
                    UpdateExpression="ADD #count :one SET #ttl = :ttl",
                    # Counted and checked in one write: no read-then-write race.
                    ConditionExpression="attribute_not_exists(#count) OR #count < :limit",
                    ExpressionAttributeNames={"#count": "count", "#ttl": TTL_ATTRIBUTE},
                    ExpressionAttributeValues={
                        ":one": {"N": "1"},
                        ":limit": {"N": str(self._limit)},
                        ":ttl": {"N": str(start + 2 * self._window)},
                    },
                )
        except ClientError as error:
            if not is_condition_failure(error):
                raise
            return max(1, start + self._window - seconds)
        return None
