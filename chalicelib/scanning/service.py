"""What a verified leaked-key report does: revoke every active key it names, at once.

Each reported `svc_` token whose checksum holds and which names one of our keys is a true
positive; an active one is revoked on the spot (a rotation's grace is ignored) with a
`key.leaked` event carrying the report's `url` and `source`. Anything else is a false
positive, and nothing more is said about it. Tokens are only ever handled as their SHA-256.
"""

from __future__ import annotations

from chalicelib.access.principal import Origin
from chalicelib.clock import Clock
from chalicelib.events import model as events
from chalicelib.events.log import EventLog
from chalicelib.hashing import hash_secret
from chalicelib.keys.plaintext import PREFIX, parse_key
from chalicelib.keys.store import KeyStore
from chalicelib.logs import logger
from chalicelib.scanning.github import ReportedToken

TRUE_POSITIVE = "true_positive"
FALSE_POSITIVE = "false_positive"


class LeakReports:
    def __init__(self, keys: KeyStore, events_log: EventLog, clock: Clock):
        self._keys = keys
        self._events = events_log
        self._clock = clock

    def handle(self, report: list[ReportedToken], origin: Origin) -> list[dict[str, str]]:
        return [self._one(reported, origin) for reported in report]

    def _one(self, reported: ReportedToken, origin: Origin) -> dict[str, str]:
        digest = hash_secret(reported.token)
        answer = {"token_hash": digest, "token_type": reported.type, "label": FALSE_POSITIVE}
        parsed = parse_key(reported.token) if reported.token.startswith(PREFIX) else None
        if parsed is None:  # a look-alike: its checksum fails, no read needed
            return answer
        data = {"url": reported.url, "source": reported.source, "tokenType": reported.type}
        if self.revoke_leaked(parsed.digest, origin, events.SECRET_SCANNING, data):
            answer["label"] = TRUE_POSITIVE
        return answer

    def revoke_leaked(
        self, digest: str, origin: Origin, reporter: str, data: dict[str, str | None]
    ) -> bool:
        """Revokes the active key whose plaintext hashes to `digest`, with a `key.leaked`
        event by `reporter` (a system actor): True when the digest names one of our keys
        (active or not). The one path of every leak report."""
        api_key = self._keys.find_by_hash(digest)
        now = self._clock.now()
        if api_key is None or api_key.gone(now):
            return False
        if api_key.status(now) != "active":
            return True
        event = self._events.new(
            events.KEY_LEAKED,
            api_key.owner_id,
            events.system(reporter),
            origin,
            key_id=api_key.id,
            workspace_id=api_key.workspace_id,
            data=data,
        )
        if self._keys.revoke(api_key, now, [self._events.member(event)]):
            self._events.published(event)
            logger.warning("leaked api key revoked", extra={"key_id": api_key.id})
        return True
