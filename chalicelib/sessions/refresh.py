"""Refresh tokens: opaque, stored only as their SHA-256, single use, rotated on every use.

Every exchange starts a family (one sign-in); every refresh consumes one token of the
family and issues the next. Presenting a token that was already used means two parties
hold it (OAuth 2.0 Security BCP §4.14): the whole family is revoked, so neither the thief
nor the victim can refresh again, and the user signs in anew.

With one exception, so that a lost answer never logs anyone out: a token presented again
within RETRY_WINDOW (60 s) of its use, while its successor has not been used yet, is a
client retrying a refresh whose answer it never got. The successor is derived from the
token itself (`successors.py`, a keyed MAC in KMS), so the retry is answered that same
successor, and the family lives on. Once the successor has been used, or after the window,
a presented used token is reuse as before. (Within the window, a thief presenting a copied
token gets the same successor as its holder; whichever of them moves on first, the other's
next use of an old token revokes the family.) The MCP OAuth refresh grant follows the same
rule.

Items (see `items.py`):
  REFRESH#<sha256>     REFRESH   one token: userId, familyId, issuedAt, expiresAt, usedAt,
                                 replacedBy (its successor's digest), ttl
  RFAMILY#<familyId>   FAMILY    its family: userId, createdAt, lastRefreshedAt, revokedAt,
                                 revokedReason, revokedBy, ttl, and for an
                                 MCP grant (chalicelib/oauth/) its binding: clientId,
                                 resource, scope, workspaceId

A used token is kept until its own expiry, so that its reuse is still recognised. DynamoDB's
TTL deletes lazily (expired items still come back from reads), so expiry is checked here.
Every write here may have been applied although its answer was lost (and botocore's retry
then meets it): each one recognises its own write when it reads it back.
"""

from __future__ import annotations

import hmac
import re
import secrets
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Any, NoReturn

from botocore.exceptions import ClientError

from chalicelib import ids, items
from chalicelib.access.dpop import bound_key
from chalicelib.clock import epoch, parse_rfc3339, rfc3339
from chalicelib.errors import DependencyUnavailable
from chalicelib.hashing import hash_secret
from chalicelib.logs import logger
from chalicelib.table import (
    EXISTS,
    TTL_ATTRIBUTE,
    Attribute,
    Item,
    Pending,
    Shape,
    commit,
    complete,
    get_consistent,
    is_condition_failure,
    put_if_absent,
    to_item,
    update,
    write_once,
)

REFRESH_TOKEN_LIFETIME = timedelta(days=30)
# How long after its use a token may still be presented by a client retrying a refresh
# whose answer was lost: a client's whole retry budget fits, a stolen copy rarely does.
RETRY_WINDOW = timedelta(seconds=60)
PREFIX = "rt_"  # lets secret scanners (and people) tell a refresh token from an API key
_SHAPE = re.compile(r"^rt_[A-Za-z0-9_-]{43}$")  # 32 random bytes, base64url without padding
GRANT_CLIENT = "clientId"  # present on a family only when it is an MCP grant
GRANT_FIELDS = (GRANT_CLIENT, "resource", "scope", "workspaceId")


def new_refresh_token() -> str:
    return PREFIX + secrets.token_urlsafe(32)


def looks_like_refresh_token(candidate: str) -> bool:
    return bool(_SHAPE.fullmatch(candidate))


def token_hash(plaintext: str) -> str:
    return hash_secret(plaintext)  # SHA-256, as for API keys: stored and compared only hashed


class RefreshRejected(Exception):
    """The refresh token cannot be used. `description` is safe to show."""

    def __init__(self, description: str, family_id: str | None = None):
        super().__init__(description)
        self.description = description
        self.family_id = family_id  # a reuse's: the family it revoked


UNKNOWN = "The refresh token is not valid."
EXPIRED = "The refresh token has expired."
REUSED = "The refresh token was already used; this sign-in has been revoked. Sign in again."
REVOKED = "This sign-in has been revoked. Sign in again."
DPOP_BOUND = (
    "The refresh token is bound to a DPoP key: send a DPoP proof signed by that key."
)
DPOP_JKT = "dpopJkt"  # the family's attribute: the thumbprint of the key it is bound to


@dataclass(frozen=True)
class RefreshToken:
    """A stored refresh token, as found by the hash of its plaintext."""

    digest: str
    user_id: str
    family_id: str
    expires_at: datetime
    used_at: datetime | None = None
    successor_digest: str | None = None  # set when it was used
    issued_at: datetime | None = field(default=None, compare=False)
    retain_until: int | None = field(default=None, compare=False)  # its `ttl` (epoch)
    # The family's binding when it is an MCP grant (clientId, resource, scope, workspaceId);
    # None for a sign-in of the service itself.
    grant: Mapping[str, Any] | None = field(default=None, compare=False)

    def __repr__(self) -> str:  # the digest is not a secret, but it has no business in logs
        return f"RefreshToken(user_id={self.user_id!r}, family_id={self.family_id!r})"


@dataclass(frozen=True)
class RefreshFamily:
    """A stored family: one sign-in, or one MCP grant (then `grant` is its binding)."""

    user_id: str
    family_id: str
    created_at: datetime | None = None
    retain_until: int | None = None  # its `ttl` (epoch)
    dpop_jkt: str | None = None  # the thumbprint of the key its refreshes must prove
    last_refreshed_at: datetime | None = None
    revoked_at: datetime | None = None
    revoked_reason: str | None = None
    revoked_by: str | None = None  # the revocation's own mark (it recognises its write)
    # The binding of an MCP grant (clientId, resource, scope, workspaceId), kept under
    # those same names in the item; None for a sign-in of the service itself.
    grant: Mapping[str, Any] | None = None


# The token record's item, declared once: its writes (`_token_item`) and reads follow from it.
TOKEN_SHAPE = Shape(
    RefreshToken,
    [
        Attribute("userId", "user_id"),
        Attribute("familyId", "family_id"),
        Attribute("issuedAt", "issued_at", rfc3339, parse_rfc3339),
        Attribute("expiresAt", "expires_at", rfc3339, parse_rfc3339),
        # Set by its consumption (`rotate`), not by the token's own write.
        Attribute("usedAt", "used_at", read=parse_rfc3339, written=False),
        Attribute("replacedBy", "successor_digest", written=False),
        Attribute(TTL_ATTRIBUTE, "retain_until"),
    ],
)


def _grant_of(values: dict[str, Any], fields: dict[str, Any]) -> dict[str, Any]:
    """A family's MCP grant binding: present only when the item names a client."""
    if GRANT_CLIENT not in values:
        return {"grant": None}
    return {"grant": {name: values[name] for name in GRANT_FIELDS if name in values}}


def family_values(family: RefreshFamily) -> dict[str, Any]:
    """The family's item values: its shape's, and its grant binding's under their names."""
    return {**(family.grant or {}), **FAMILY_SHAPE.values(family)}


# The family record's item, declared once (the grant binding derived from the item's
# `GRANT_FIELDS`): rotation and revocation set the attributes its own write does not.
FAMILY_SHAPE = Shape(
    RefreshFamily,
    [
        Attribute("userId", "user_id"),
        Attribute("familyId", "family_id"),
        Attribute("createdAt", "created_at", rfc3339, parse_rfc3339),
        Attribute(DPOP_JKT, "dpop_jkt"),
        Attribute(TTL_ATTRIBUTE, "retain_until"),
        Attribute("lastRefreshedAt", "last_refreshed_at", read=parse_rfc3339, written=False),
        Attribute("revokedAt", "revoked_at", read=parse_rfc3339, written=False),
        Attribute("revokedReason", "revoked_reason", written=False),
        Attribute("revokedBy", "revoked_by", written=False),
    ],
    _grant_of,
)


def family_from_values(values: dict[str, Any]) -> RefreshFamily:
    """A family record from its item's plain values (a reader outside this store)."""
    return FAMILY_SHAPE.record(values)


# What a sign-in's end by reuse writes with its commit point, and what runs once it is done.
SignInEnd = tuple[Sequence[dict[str, Any] | Pending], Callable[[], None]]


class RefreshTokenStore:
    def __init__(
        self,
        client: Any,
        table_name: str,
        on_sign_in_reused: Callable[[RefreshToken, datetime], SignInEnd] | None = None,
    ):
        """`on_sign_in_reused`: asked when a reused token is about to revoke a sign-in of the
        service itself (not an MCP grant): what the revocation writes with it (its
        `session.revoked` event, through the outbox) and what to do once it did (publish it);
        sessions/sign_ins.py."""
        self._client = client
        self._table = table_name
        self._on_sign_in_reused = on_sign_in_reused

    # -- items -----------------------------------------------------------------------------

    def _token_item(self, digest: str, user_id: str, family_id: str, now: datetime) -> Any:
        expires = now + REFRESH_TOKEN_LIFETIME
        token = RefreshToken(
            digest, user_id, family_id, expires, issued_at=now, retain_until=epoch(expires)
        )
        item = to_item(TOKEN_SHAPE.values(token))
        item.update(items.refresh_token(digest))
        # A fresh 256-bit token never collides; the condition makes that an error, not a merge.
        return put_if_absent(self._table, item)

    # -- operations ------------------------------------------------------------------------

    def open_grant(
        self, user_id: str, family_id: str, grant: Mapping[str, str], expires_at: int,
        now: datetime,
    ) -> None:
        """An MCP grant without a refresh token (a JWT bearer grant's): its family item only,
        which its access tokens name in `sid` and the decision reads, living as long as they
        do. One conditional put is the commit point (a new family id never exists: the
        condition only keeps a retried write from reviving a revoked grant)."""
        family = to_item(
            family_values(RefreshFamily(user_id, family_id, now, expires_at, grant=dict(grant)))
        )
        family.update(items.refresh_family(family_id))
        if not write_once(self._client, put_if_absent(self._table, family)):
            raise DependencyUnavailable("DynamoDB")

    def start_family(
        self,
        user_id: str,
        now: datetime,
        family_id: str | None = None,
        grant: Mapping[str, str] | None = None,
        together_with: Sequence[dict[str, Any] | Pending] = (),
    ) -> str:
        """A new sign-in's first refresh token (plaintext, returned once, never stored).

        An MCP grant names its `family_id` (its access tokens carry it) and its `grant`
        binding; `together_with` are written with it, its first member the commit point (the
        authorization code it consumes). A failed condition raises the ClientError, unless
        it failed because an earlier attempt of this very write was applied.
        """
        family_id = family_id or ids.ulid(now)
        plaintext = new_refresh_token()
        digest = token_hash(plaintext)
        record = RefreshFamily(
            user_id,
            family_id,
            now,
            epoch(now + REFRESH_TOKEN_LIFETIME),
            # Started by a DPoP token request: every refresh of the family needs a proof by
            # the same key (RFC 9449 §5; our clients are public).
            dpop_jkt=bound_key(),
            grant=dict(grant) if grant else None,
        )
        family = to_item(family_values(record))
        family.update(items.refresh_family(family_id))
        # Commit point: the first member of `together_with` (an MCP grant's authorization
        # code, used once), else the family, put only if absent. The family and the token
        # follow it: until they exist the sign-in is unknown, and its answer is not given.
        family_put = put_if_absent(self._table, family)
        token_put = self._token_item(digest, user_id, family_id, now)
        point: dict[str, Any] = family_put
        writes: list[dict[str, Any] | Pending] = [token_put]
        if together_with:
            code, *rest = together_with
            if isinstance(code, Pending):
                raise TypeError("a sign-in's commit point is a write of its own")
            point, writes = code, [family_put, token_put, *rest]
        try:
            commit(self._client, point, writes)
        except ClientError as error:
            if not is_condition_failure(error):
                raise
            # A 256-bit token never collides: if it is there, an earlier attempt of this
            # same write was applied and its answer lost. Otherwise the commit point failed
            # (a code used twice, or a family id given twice): the caller's to settle.
            if not self._ours(point, family_id):
                raise
            # An earlier send of this very commit point was applied, its answer lost (a new
            # family id is never given twice; a code names the grant that used it).
            for member in writes:
                write_once(self._client, member.member if isinstance(member, Pending) else member)
            complete(self._client, point)
        return plaintext

    def _ours(self, point: dict[str, Any], family_id: str) -> bool:
        ((_, request),) = point.items()
        item_key = request["Item"] if "Item" in request else request["Key"]
        found = self._get({name: item_key[name] for name in ("pk", "sk")})
        return found is not None and family_id in (found.get("familyId"), found.get("grantId"))

    def find(self, plaintext: str, now: datetime) -> RefreshToken:
        """The stored, unexpired token of a live family, or RefreshRejected.

        A token that was already used revokes its family here, before the rejection, unless
        it is a retry (see `_retrying`): then it is returned, still marked used.
        """
        if not looks_like_refresh_token(plaintext):
            raise RefreshRejected(UNKNOWN)
        digest = token_hash(plaintext)
        item = self._get(items.refresh_token(digest))
        if item is None:
            raise RefreshRejected(UNKNOWN)
        token = self._token(digest, item)
        if now >= token.expires_at:
            raise RefreshRejected(EXPIRED)
        family = self._family(token.family_id)
        if family is None or family.revoked_at is not None:
            raise RefreshRejected(REVOKED)
        bound = family.dpop_jkt
        if bound is not None and not hmac.compare_digest(bound, bound_key() or ""):
            # A copy of a bound refresh token is useless without its key; nothing is revoked
            # (the holder's next refresh, with its proof, goes on).
            raise RefreshRejected(DPOP_BOUND)
        if family.grant is not None:
            token = replace(token, grant=family.grant)
        if token.used_at is not None and not self._retrying(token, now):
            self._reused(token, now)
        return token

    @staticmethod
    def _token(digest: str, item: dict[str, Any]) -> RefreshToken:
        return TOKEN_SHAPE.record(item, digest=digest)

    def _retrying(self, token: RefreshToken, now: datetime) -> bool:
        """A used token presented again by a client whose refresh answer was lost: within
        RETRY_WINDOW of its use, and its successor not used yet (else the successor's
        holder, whoever that is, has moved on, and this is reuse)."""
        assert token.used_at is not None
        if now - token.used_at > RETRY_WINDOW or token.successor_digest is None:
            return False
        found = self._get(items.refresh_token(token.successor_digest))
        return found is not None and self._token(token.successor_digest, found).used_at is None

    def rotate(self, token: RefreshToken, successor_plaintext: str, now: datetime) -> None:
        """Consumes `token` and issues its successor (no transaction: the successor item,
        then the token's consumption, the commit point, then the family's new expiry);
        RefreshRejected if the token was consumed otherwise (or its family revoked) since it
        was read.

        `successor_plaintext` is the one successor of `token` (`successors.py`). A token
        `find` let through as a retry was consumed by this same rotation before: nothing is
        written again, and the caller answers the same successor.
        """
        successor = token_hash(successor_plaintext)
        if token.used_at is not None:
            if not self._is_successor(token, successor):
                self._reused(token, now)
            return
        successor_item = self._token_item(successor, token.user_id, token.family_id, now)
        # The successor first: unknown to anyone until this answer gives it, and the same
        # for every rotation of this token (successors.py), so a concurrent one finds it.
        if not write_once(self._client, successor_item):
            found = self._get(items.refresh_token(successor))
            if found is None or self._token(successor, found).family_id != token.family_id:
                self._reused(token, now)
        consume = update(
            self._table,
            items.refresh_token(token.digest),
            "SET #usedAt = :now, #replacedBy = :next",
            # Commit point. Single use: of two concurrent refreshes with one token, exactly
            # one passes, in any Region.
            f"{EXISTS} AND attribute_not_exists(#usedAt)",
            {"now": rfc3339(now), "next": successor},
        )
        try:
            commit(self._client, consume)
        except ClientError as error:
            if not is_condition_failure(error):
                raise
            # Either this very rotation was applied by an earlier attempt whose answer was
            # lost (or by a concurrent retry of the same token): the token now names our
            # successor. Or someone else used the token in the meantime: reuse, seen late.
            item = self._get(items.refresh_token(token.digest))
            if item is None or not self._is_successor(self._token(token.digest, item), successor):
                self._reused(token, now)
        extend_family = update(
            self._table,
            items.refresh_family(token.family_id),
            "SET #ttl = :ttl, #lastRefreshedAt = :now",
            # A family revoked between our read and this write stays revoked, and the
            # successor it would have answered is refused with it.
            f"{EXISTS} AND attribute_not_exists(#revokedAt)",
            {"ttl": epoch(now + REFRESH_TOKEN_LIFETIME), "now": rfc3339(now)},
        )
        if not write_once(self._client, extend_family):
            raise RefreshRejected(REVOKED)

    @staticmethod
    def _is_successor(token: RefreshToken, successor_digest: str) -> bool:
        return token.successor_digest is not None and hmac.compare_digest(
            token.successor_digest, successor_digest
        )

    def _reused(self, token: RefreshToken, now: datetime) -> NoReturn:
        logger.warning(
            "refresh token reused; revoking its family",
            extra={"user_id": token.user_id, "family_id": token.family_id},
        )
        also: Sequence[dict[str, Any] | Pending] = ()
        done: Callable[[], None] | None = None
        if token.grant is None and self._on_sign_in_reused is not None:
            also, done = self._on_sign_in_reused(token, now)
        if self.revoke_family(token.family_id, now, "reuse", also) and done is not None:
            done()
        raise RefreshRejected(REUSED, token.family_id)

    def revoke_family(
        self,
        family_id: str,
        now: datetime,
        reason: str,
        also: Sequence[dict[str, Any] | Pending] = (),
    ) -> bool:
        """Revokes every token of the family, now and later. Revoking twice is harmless:
        True only for the call that revoked it (so that its event, in `also`, through the
        outbox of this commit point, is recorded once)."""
        mark = secrets.token_urlsafe(12)
        revoked = update(
            self._table,
            items.refresh_family(family_id),
            "SET #revokedAt = :now, #revokedReason = :reason, #revokedBy = :mark",
            # Of two revocations (a sign-out racing a reuse), one is the family's end.
            f"{EXISTS} AND attribute_not_exists(#revokedAt)",
            {"now": rfc3339(now), "reason": reason, "mark": mark},
        )
        try:
            commit(self._client, revoked, also)
            return True
        except ClientError as error:
            if not is_condition_failure(error):
                raise
        # Already revoked, gone (deleted by TTL: nothing is left to revoke), or revoked by
        # this very write, applied although its answer was lost (a retry met it): then what
        # follows it is completed here.
        found = self._family(family_id)
        if found is None or found.revoked_by != mark:
            return False
        complete(self._client, revoked)
        return True

    def _family(self, family_id: str) -> RefreshFamily | None:
        found = self._get(items.refresh_family(family_id))
        return FAMILY_SHAPE.record(found) if found is not None else None

    def _get(self, item_key: Item) -> dict[str, Any] | None:
        return get_consistent(self._client, self._table, item_key)
