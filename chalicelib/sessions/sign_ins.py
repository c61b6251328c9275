"""A person's sign-ins, as their access tokens name them, and as the person lists and ends them.

A sign-in is the refresh-token family a login starts (refresh.py); every access token of it
carries the family's id in `sid`, and its decision reads the family in its one round trip
(decisions/resolution.py), so ending the sign-in (sign-out, reuse detection, "sign out
everywhere", ending it from the list) refuses its access tokens on the very next request.

Items (see `items.py`):
  RFAMILY#<familyId>   FAMILY            the sign-in itself (refresh.py): the commit point of
                                         its start and of its end; its `ttl` is its end
  USER#<userId>        SIGNIN#<familyId> the sign-in as its person lists it: familyId,
                                         createdAt, userAgent, ipAddress, ttl

The person's item is written before the family (at the login) and its `ttl` moved before the
family's (at each refresh), so every live sign-in is listed: an item whose family never came
to be, or has ended, is simply not listed, and expires. Nothing here is a transaction: a
sign-in's end is the family's revocation (one conditional write), its `session.revoked`
event in that write's outbox.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from chalicelib import errors, items
from chalicelib.access.principal import Origin, Principal
from chalicelib.clock import Clock, epoch, parse_rfc3339, rfc3339
from chalicelib.events.model import (
    REFRESH_TOKEN_REUSE,
    SESSION_REVOKED,
    Actor,
    Event,
    actor_of,
    system,
)
from chalicelib.sessions.refresh import (
    GRANT_CLIENT,
    REFRESH_TOKEN_LIFETIME,
    RefreshToken,
    RefreshTokenStore,
    SignInEnd,
)
from chalicelib.table import (
    TTL_ATTRIBUTE,
    get_many,
    put,
    to_item,
    under,
    update,
    write,
)

if TYPE_CHECKING:
    from chalicelib.events.log import EventLog

MAX_USER_AGENT = 200  # characters of a sign-in's user agent kept (the list shows them)
_ULID = frozenset("0123456789ABCDEFGHJKMNPQRSTVWXYZ")

# Why a sign-in ended (the `reason` of its `session.revoked` event).
SIGN_OUT = "sign_out"  # its refresh token was revoked (POST /v1/auth/revoke)
EVERYWHERE = "everywhere"  # DELETE /v1/auth/sessions
REUSE_DETECTED = "reuse_detected"  # a used refresh token of it was presented again
ENDED = "ended"  # DELETE /v1/auth/sessions/{id}


def live(family: dict[str, Any] | None, user_id: str, now: datetime) -> bool:
    """The family as read (None: gone) is a sign-in of `user_id` that still signs them in at
    `now`: not an MCP grant, not revoked, not past its `ttl` (DynamoDB deletes lazily)."""
    if family is None or GRANT_CLIENT in family or family.get("revokedAt"):
        return False
    return family.get("userId") == user_id and int(family.get(TTL_ATTRIBUTE, 0)) > epoch(now)


def is_sign_in_id(candidate: str) -> bool:
    """A family id this service could have issued (a ULID): anything else is no sign-in."""
    return len(candidate) == 26 and set(candidate) <= _ULID


@dataclass(frozen=True)
class SignIn:
    id: str
    created_at: datetime
    last_refreshed_at: datetime | None
    expires_at: datetime
    user_agent: str | None
    ip_address: str | None


class SignIns:
    def __init__(
        self,
        client: Any,
        table: str,
        refresh_tokens: RefreshTokenStore,
        events: EventLog | None,
        clock: Clock,
    ):
        self._client = client
        self._table = table
        self._refresh_tokens = refresh_tokens
        self._events = events
        self._clock = clock

    # -- the person's item -----------------------------------------------------------------

    def listed(self, user_id: str, family_id: str, now: datetime, origin: Origin | None) -> None:
        """Lists a new sign-in (with where it came from) before its family is written."""
        user_agent = origin.user_agent if origin is not None else None
        item = to_item(
            {
                "familyId": family_id,
                "createdAt": rfc3339(now),
                "userAgent": user_agent[:MAX_USER_AGENT] if user_agent else None,
                "ipAddress": origin.source_ip if origin is not None else None,
                TTL_ATTRIBUTE: epoch(now + REFRESH_TOKEN_LIFETIME),
            }
        )
        item.update(items.user_sign_in(user_id, family_id))
        # A fresh family id: nothing to overwrite, and a retried write writes the same item.
        write(self._client, put(self._table, item))

    def kept(self, user_id: str, family_id: str, now: datetime) -> None:
        """Keeps a sign-in listed as long as its refresh at `now` keeps it alive: called
        before the family's `ttl` moves. A sign-in started before sign-ins were listed is
        listed from its first refresh on."""
        kept = update(
            self._table,
            items.user_sign_in(user_id, family_id),
            "SET #familyId = :family, #createdAt = if_not_exists(#createdAt, :now), #ttl = :ttl",
            values={
                "family": family_id,
                "now": rfc3339(now),
                "ttl": epoch(now + REFRESH_TOKEN_LIFETIME),
            },
        )
        write(self._client, kept)

    # -- what the person sees and does ----------------------------------------------------

    def list(self, user_id: str) -> list[SignIn]:
        """The live sign-ins of `user_id`, newest first."""
        now = self._clock.now()
        indexed = [
            values
            for values in under(
                self._client,
                self._table,
                items.user_pk(user_id),
                items.SIGN_IN_PREFIX,
                consistent=True,
            )
            if int(values.get(TTL_ATTRIBUTE, 0)) > epoch(now)
        ]
        families = get_many(
            self._client, self._table, [items.refresh_family(v["familyId"]) for v in indexed]
        )
        found = [
            _sign_in(values, family)
            for values, family in zip(indexed, families, strict=True)
            if family is not None and live(family, user_id, now)
        ]
        return sorted(found, key=lambda sign_in: (sign_in.created_at, sign_in.id), reverse=True)

    def end(self, principal: Principal, sign_in_id: str) -> None:
        """Ends one of the caller's live sign-ins (someone else's, an ended one, or none:
        404)."""
        user_id = principal.user_id
        if not is_sign_in_id(sign_in_id):
            raise errors.NOT_FOUND.error()
        listed, family = get_many(
            self._client,
            self._table,
            [items.user_sign_in(user_id, sign_in_id), items.refresh_family(sign_in_id)],
        )
        if listed is None or not live(family, user_id, self._clock.now()):
            raise errors.NOT_FOUND.error()
        self._end(user_id, sign_in_id, ENDED, actor_of(principal), principal.origin)

    def end_all(self, principal: Principal) -> None:
        """Ends every live sign-in of the caller, the one it calls with included: that one
        last, so that a request failed halfway can be retried with the same token."""
        found = self.list(principal.user_id)
        for sign_in in sorted(found, key=lambda s: s.id == principal.session_id):
            self._end(
                principal.user_id, sign_in.id, EVERYWHERE, actor_of(principal), principal.origin
            )

    def signed_out(self, user_id: str, family_id: str, origin: Origin | None) -> None:
        """Sign-out with the sign-in's refresh token (POST /v1/auth/revoke): the person,
        signed in (an actor's credential is one of those the event log has always named)."""
        actor: Actor = {"userId": user_id, "credential": "user_token", "keyId": None}
        self._end(user_id, family_id, SIGN_OUT, actor, origin)

    def reuse_detected(self, token: RefreshToken, now: datetime) -> SignInEnd:
        """The refresh-token store is revoking the sign-in of a reused token (at `now`): its
        event, for the revocation's outbox, and its publication once revoked. Nobody in
        particular ended it: the store did."""
        actor = system(REFRESH_TOKEN_REUSE)
        event = self._event(token.user_id, token.family_id, REUSE_DETECTED, actor, None)
        if event is None or self._events is None:
            return (), lambda: None
        events = self._events
        return [events.member(event)], lambda: events.published(event)

    def _end(
        self, user_id: str, family_id: str, reason: str, actor: Actor, origin: Origin | None
    ) -> None:
        # The commit point: the family's revocation, with its event in the outbox. Of two
        # ends racing, one records it.
        event = self._event(user_id, family_id, reason, actor, origin)
        also = [self._events.member(event)] if event is not None and self._events else []
        ended = self._refresh_tokens.revoke_family(family_id, self._clock.now(), reason, also)
        if ended and event is not None and self._events is not None:
            self._events.published(event)

    def _event(
        self, user_id: str, family_id: str, reason: str, actor: Actor, origin: Origin | None
    ) -> Event | None:
        if self._events is None:
            return None
        return self._events.new(
            SESSION_REVOKED,
            audience=user_id,
            actor=actor,
            origin=origin,
            data={"sessionId": family_id, "reason": reason},
        )


def _sign_in(values: dict[str, Any], family: dict[str, Any]) -> SignIn:
    created = parse_rfc3339(family.get("createdAt")) or parse_rfc3339(values.get("createdAt"))
    return SignIn(
        id=values["familyId"],
        created_at=created or datetime.fromtimestamp(0, UTC),
        last_refreshed_at=parse_rfc3339(family.get("lastRefreshedAt")),
        expires_at=datetime.fromtimestamp(int(family[TTL_ATTRIBUTE]), UTC),
        user_agent=values.get("userAgent"),
        ip_address=values.get("ipAddress"),
    )
