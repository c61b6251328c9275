"""`POST /v1/auth/credentials/revoke`: anyone may report leaked credentials (as GitHub's
public credential revocation API does).

The answer is always 202 with how many strings were received, whatever they are: a live key,
an unknown one and junk look the same, in status, body and time. That is why the request
does no lookup: it hashes every well-formed `svc_` key (the offline checksum drops the
rest) and puts one message on the work queue, the same one message for any list; the worker
then revokes each active key among the hashes as a leak (`LeakReports.revoke_leaked`: the
same path, event and notice as a secret-scanning report). Plaintexts never leave the request.

60 requests per source address per hour, counted by one conditional update of a window
item (`table.WindowCounter`: concurrent requests cannot overshoot; a TTL removes it): past
that, 429 with the seconds to the window's end.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from chalicelib import items
from chalicelib.access.principal import Origin
from chalicelib.events import model as events
from chalicelib.keys.plaintext import PREFIX, parse_key
from chalicelib.scanning.service import LeakReports
from chalicelib.table import WindowCounter

REVOKE = "revoke"  # the queue message's kind
MAX_CREDENTIALS = 1000
# The longest key we issue is about 160 characters; 1,000 strings this long (with JSON's
# quotes and commas) stay inside the 256 KiB body limit, so a list the schema allows is never
# refused as too large, and one it refuses is answered 400, not 413.
MAX_CREDENTIAL_LENGTH = 200
LIMIT = 60  # requests per source address and WINDOW
WINDOW = 3600  # seconds
SOURCE = "public revocation API"


class RevocationLimit(WindowCounter):
    def __init__(self, client: Any, table_name: str, limit: int = LIMIT, window: int = WINDOW):
        super().__init__(client, table_name, items.revocation_window, limit, window)


def digests(credentials: Sequence[str]) -> list[str]:
    """The SHA-256 of each well-formed `svc_` key among `credentials`, once each: CPU only,
    the same work for a live key as for an unknown one."""
    found = []
    for credential in credentials:
        parsed = parse_key(credential) if credential.startswith(PREFIX) else None
        if parsed is not None:
            found.append(parsed.digest)
    return list(dict.fromkeys(found))


class PublicRevocation:
    def __init__(self, send: Callable[[list[dict[str, Any]]], None], leaks: LeakReports):
        self._send = send  # the work queue's `send`: raises when nothing took the message
        self._leaks = leaks

    def accept(self, credentials: Sequence[str], origin: Origin) -> int:
        """Queues the report; how many strings were received."""
        self._send(
            [
                {
                    "kind": REVOKE,
                    "digests": digests(credentials),
                    "sourceIp": origin.source_ip,
                    "userAgent": origin.user_agent,
                }
            ]
        )
        return len(credentials)

    def handle(self, message: dict[str, Any]) -> None:
        """The worker's side: each active key among the digests revoked as a leak."""
        origin = Origin(message.get("sourceIp"), message.get("userAgent"))
        for digest in message.get("digests", []):
            self._leaks.revoke_leaked(
                digest, origin, events.CREDENTIAL_REVOCATION, {"source": SOURCE}
            )
