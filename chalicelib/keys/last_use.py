"""`lastUsedAt`: recorded by the request path itself, off the path's result.

Every successful resolution of an API key (by the routes and by the data-plane authorizer)
may record its use, at a precision of 5 minutes and at most once per key and window:

- the path has just read the key's credential item, `lastUsedAt` included, so it writes only
  when that value is older than the current window;
- inside one container, a memo lets only the first request per key and window try (a burst
  of requests that all read the old value makes one write, not hundreds);
- across containers, the write's condition lets only one of them change the item.

The write has its own client: a short timeout and no retry. It never fails a request: any
failure is logged (a key id and an outcome, nothing else) and dropped. Nothing here caches a
lookup: the memo only suppresses writes, and revocation is still read on every request.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from datetime import datetime
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from chalicelib import items
from chalicelib.clock import rfc3339
from chalicelib.keys.model import ApiKey, last_used_window
from chalicelib.table import EXISTS, update

# A DynamoDB write in the same region answers in single milliseconds; half a second is ample
# and bounds what a slow store can add to a request (connect and read, one attempt).
TIMEOUT_SECONDS = 0.5
MEMO_SIZE = 10_000

# A child of the service's logger: through Powertools' handler where the routes run, through
# the runtime's root handler in the authorizer, which never loads Powertools.
log = logging.getLogger("memory-auth.last-use")


def update_request(table: str, key_hash: str, window: datetime) -> dict[str, Any]:
    """The one write: only when `lastUsedAt` is absent or older than `window`, so that
    concurrent writers for one window leave exactly one change (the others' condition fails).
    """
    member = update(
        table,
        items.credential(key_hash),
        "SET #lastUsedAt = :window",
        f"{EXISTS} AND (attribute_not_exists(#lastUsedAt) OR #lastUsedAt < :window)",
        {"window": rfc3339(window)},
    )
    request: dict[str, Any] = member["Update"]
    request["ReturnValues"] = "NONE"
    return request


class LastUse:
    def __init__(self, client: Callable[[], Any], table_name: str, memo_size: int = MEMO_SIZE):
        self._client = client  # built on the first write: most decisions never need one
        self._table = table_name
        self._memo: dict[str, datetime] = {}
        self._memo_size = memo_size
        self._lock = threading.Lock()

    def _claim(self, key_id: str, window: datetime) -> bool:
        """True for the first caller per key and window in this container."""
        with self._lock:
            seen = self._memo.get(key_id)
            if seen is not None and seen >= window:
                return False
            if len(self._memo) >= self._memo_size:
                self._memo.clear()  # forgetting only costs one extra conditional write
            self._memo[key_id] = window
            return True

    def record(self, api_key: ApiKey, now: datetime) -> None:
        if not api_key.needs_last_use(now):
            return
        window = last_used_window(now)
        if not self._claim(api_key.id, window):
            return
        try:
            self._client().update_item(**update_request(self._table, api_key.key_hash, window))
            outcome = "written"
        except ClientError as error:
            code = error.response.get("Error", {}).get("Code")
            outcome = "already written" if code == "ConditionalCheckFailedException" else "failed"
        except BotoCoreError:
            outcome = "failed"
        except Exception:  # bookkeeping: whatever went wrong, the request goes on
            outcome = "failed"
        # The caller is this key's owner using it: the line names them as every line of a
        # request names its actor (the routes identify theirs only after resolution).
        actor = {"user_id": api_key.owner_id, "key_id": api_key.id}
        log.info(
            "api key use recorded",
            extra={"key_id": api_key.id, "outcome": outcome, "actor": actor},
        )
