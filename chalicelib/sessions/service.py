"""Login exchange and refresh: an identity-provider login in, a user token pair out.

`exchange` verifies an OpenID Connect ID token, maps its (issuer, subject) to our user and
starts a refresh-token family; `refresh` trades one refresh token for a new pair. Both call
KMS (the successor's MAC, the access token's signature) before they write anything, so that
a KMS failure (503) leaves the caller's refresh token unused. A failure after the write (the
answer lost) is settled by the retry: the refresh token's successor is derived from it, so a
retry within `refresh.RETRY_WINDOW` is answered the same successor (`refresh.py`).
"""

from __future__ import annotations

from dataclasses import dataclass

from chalicelib.clock import Clock
from chalicelib.logs import logger
from chalicelib.sessions.access_tokens import MintedToken, TokenSigner
from chalicelib.sessions.openid import IdTokenVerifier
from chalicelib.sessions.refresh import UNKNOWN, RefreshRejected, RefreshTokenStore
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
    ):
        self._id_tokens = id_tokens
        self._users = users
        self._refresh_tokens = refresh_tokens
        self._successors = successors
        self._signer = signer
        self._clock = clock

    def exchange(self, id_token: str) -> TokenPair:
        """IdTokenRejected for an unacceptable ID token; DependencyUnavailable → 503."""
        identity = self._id_tokens.verify(id_token)
        user_id = self._users.sign_in(identity, self._clock.now())
        access = self._signer.mint(user_id)
        refresh_token = self._refresh_tokens.start_family(user_id, self._clock.now())
        logger.info("signed in", extra={"user_id": user_id, "issuer": identity.issuer})
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
        access = self._signer.mint(current.user_id)
        self._refresh_tokens.rotate(current, successor, now)
        return TokenPair(current.user_id, access, successor)

    def revoke(self, refresh_token: str) -> None:
        """Sign-out (RFC 7009): a login refresh token revokes its whole family, so neither it
        nor any successor refreshes again. Anything else is silently nothing to revoke: an
        unknown, expired or revoked token, and an MCP client's (revoked at /v1/oauth/revoke,
        or as a connected app). A user token itself cannot be revoked: it expires within the
        hour."""
        now = self._clock.now()
        try:
            current = self._refresh_tokens.find(refresh_token, now)
        except RefreshRejected:
            return
        if current.grant is not None:
            return
        self._refresh_tokens.revoke_family(current.family_id, now, reason="signed out")
        logger.info(
            "signed out", extra={"user_id": current.user_id, "family_id": current.family_id}
        )
