"""Login exchange and refresh: an identity-provider login in, a user token pair out.

`exchange` verifies an OpenID Connect ID token, maps its (issuer, subject) to our user and
starts a sign-in (a refresh-token family, which its access tokens name in `sid`); `refresh`
trades one refresh token for a new pair; `revoke` ends the sign-in (sign_ins.py).

`refresh` calls KMS (the successor's MAC, the access token's signature) before it writes
anything, so that a KMS failure (503) leaves the caller's refresh token unused. A failure
after the write (the answer lost) is settled by the retry: the refresh token's successor is
derived from it, so a retry within `refresh.RETRY_WINDOW` is answered the same successor
(`refresh.py`). `exchange` writes first: the user (created on a first login, its profile
updated on the others) before `start` signs the access token. A KMS failure there leaves a
user and no sign-in, which the retry finds and signs in (the login maps to the same user);
`start` itself signs before it writes the sign-in and its refresh-token family, so no
sign-in is left half made.
"""

from __future__ import annotations

from dataclasses import dataclass

from chalicelib import ids
from chalicelib.access.principal import Origin
from chalicelib.clock import Clock
from chalicelib.logs import logger
from chalicelib.sessions.access_tokens import MintedToken, TokenSigner
from chalicelib.sessions.openid import IdTokenVerifier
from chalicelib.sessions.refresh import UNKNOWN, RefreshRejected, RefreshTokenStore
from chalicelib.sessions.sign_ins import SignIns
from chalicelib.sessions.successors import RefreshSuccessors
from chalicelib.sessions.users import UserStore


@dataclass(frozen=True)
class TokenPair:
    user_id: str
    access: MintedToken
    refresh_token: str

    def __repr__(self) -> str:
        return f"TokenPair(user_id={self.user_id!r})"


class SessionService:
    def __init__(
        self,
        id_tokens: IdTokenVerifier,
        users: UserStore,
        refresh_tokens: RefreshTokenStore,
        successors: RefreshSuccessors,
        signer: TokenSigner,
        clock: Clock,
        sign_ins: SignIns,
    ):
        self._id_tokens = id_tokens
        self._users = users
        self._refresh_tokens = refresh_tokens
        self._successors = successors
        self._signer = signer
        self._clock = clock
        self._sign_ins = sign_ins

    def exchange(self, id_token: str, origin: Origin | None = None) -> TokenPair:
        """IdTokenRejected for an unacceptable ID token; DependencyUnavailable → 503.
        `origin`: where the sign-in comes from (its user agent and address are listed)."""
        identity = self._id_tokens.verify(id_token)
        user_id = self._users.sign_in(identity, self._clock.now())
        pair = self.start(user_id, origin)
        logger.info("signed in", extra={"user_id": user_id, "issuer": identity.issuer})
        return pair

    def start(self, user_id: str, origin: Origin | None = None) -> TokenPair:
        """A new sign-in of a known user: its access token names it (`sid`), so it ends
        with the sign-in. The local stack and the tools sign their users in here too."""
        now = self._clock.now()
        family_id = ids.ulid(now)
        access = self._signer.mint(user_id, extra={"sid": family_id})
        self._sign_ins.listed(user_id, family_id, now, origin)
        refresh_token = self._refresh_tokens.start_family(user_id, now, family_id=family_id)
        return TokenPair(user_id, access, refresh_token)

    def refresh(self, refresh_token: str) -> TokenPair:
        """RefreshRejected for an unknown, expired, revoked or reused refresh token."""
        now = self._clock.now()
        current = self._refresh_tokens.find(refresh_token, now)
        if current.grant is not None:
            # An MCP client's refresh token is good at /v1/oauth/token only: here it would
            # turn a token for one resource and workspace into a user token with every scope.
            raise RefreshRejected(UNKNOWN)
        successor = self._successors.successor_of(refresh_token)
        access = self._signer.mint(current.user_id, extra={"sid": current.family_id})
        # Listed at least as long as the family lives (the rotation moves its end).
        self._sign_ins.kept(current.user_id, current.family_id, now)
        self._refresh_tokens.rotate(current, successor, now)
        return TokenPair(current.user_id, access, successor)

    def revoke(self, refresh_token: str, origin: Origin | None = None) -> None:
        """Sign-out (RFC 7009): a login refresh token ends its sign-in, so neither it, nor
        any successor, nor any access token of the sign-in works again. Anything else is
        silently nothing to revoke: an unknown, expired or revoked token, and an MCP
        client's (revoked at /v1/oauth/revoke, or as a connected app)."""
        now = self._clock.now()
        try:
            current = self._refresh_tokens.find(refresh_token, now)
        except RefreshRejected:
            return
        if current.grant is not None:
            return
        self._sign_ins.signed_out(current.user_id, current.family_id, origin)
        logger.info(
            "signed out", extra={"user_id": current.user_id, "family_id": current.family_id}
        )
