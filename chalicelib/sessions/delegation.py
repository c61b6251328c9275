"""Delegation (RFC 8693 token exchange, subject_token_type access_token): a credential in, a
short-lived token bound to one workspace, with at most the credential's scopes, out.

The subject is judged exactly as a data-plane request with it in that workspace would be (the
same resolver, the same refusals), so nobody delegates more than they could do themselves.
The delegated token only ever narrows: its scopes are a subset of the subject's data-plane
scopes, its workspace is the subject's (a bound subject cannot be retargeted), and it expires
no later than the subject. Its `root` names the credential at the top of the chain, which
every decision on it re-reads (decisions/resolution.py): revoking a root key refuses every
token delegated from it, at any depth, on the next request; a user root's token carries the
root's sign-in (`sid`) and ends with it. No event is stored per
delegation (a browser may mint one per page load); the log line names root, jti and act.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from chalicelib import errors
from chalicelib.access.principal import Origin, Principal, Refusal, Resolves
from chalicelib.access.scopes import DATA_PLANE_SCOPES, ordered
from chalicelib.clock import Clock, epoch
from chalicelib.errors import OAuthError
from chalicelib.logs import logger
from chalicelib.sessions.access_tokens import TokenSigner

MIN_LIFETIME = 60
MAX_LIFETIME = 3600
DEFAULT_LIFETIME = 900
# RFC 8693 §4.1 nests `act` for each hand-over; a chain deeper than this is refused.
MAX_DEPTH = 4
DEFAULT_ACTOR = "delegate"


@dataclass(frozen=True)
class Delegated:
    token: str = field(repr=False)
    expires_in: int
    scopes: tuple[str, ...]
    workspace_id: str
    root: str


def depth(act: dict[str, Any] | None) -> int:
    """How many hand-overs an `act` claim records."""
    levels = 0
    while isinstance(act, dict):
        levels += 1
        act = act.get("act")
    return levels


def _refusal(refusal: Refusal) -> OAuthError:
    """The subject's data-plane refusal on this endpoint: same status, RFC 6749 shape, the
    data-plane code in the description."""
    problem = {
        401: errors.INVALID_SUBJECT_TOKEN,
        403: errors.SUBJECT_NOT_ALLOWED,
    }.get(refusal.status, errors.OAUTH_INVALID_REQUEST)
    return problem.oauth_error(f"{refusal.code}: {refusal.detail or refusal.problem.detail}")


class Delegator:
    def __init__(self, resolver: Resolves, signer: TokenSigner, clock: Clock):
        self._resolver = resolver
        self._signer = signer
        self._clock = clock

    def delegate(
        self,
        subject_token: str,
        workspace_id: str | None,
        scope: str | None,
        expires_in: int | None,
        actor: str | None,
        origin: Origin | None = None,
    ) -> Delegated:
        """The delegated token, or the OAuthError to answer (the subject's 401/403,
        invalid_scope, invalid_request). DependencyUnavailable when a store or KMS fails."""
        lifetime = DEFAULT_LIFETIME if expires_in is None else expires_in
        if not MIN_LIFETIME <= lifetime <= MAX_LIFETIME:
            raise errors.OAUTH_INVALID_REQUEST.oauth_error(
                f"expires_in must be from {MIN_LIFETIME} to {MAX_LIFETIME} seconds."
            )
        subject = self._resolver.resolve(f"Bearer {subject_token}", workspace_id, origin=origin)
        if isinstance(subject, Refusal):
            raise _refusal(subject)
        if subject.credential not in ("api_key", "user_token", "delegated"):
            raise errors.OAUTH_INVALID_REQUEST.oauth_error(
                "Only an API key, a user token or a delegated token can be delegated."
            )
        if subject.workspace_id is None:
            raise errors.OAUTH_INVALID_REQUEST.oauth_error(
                "workspace_id is required: the token is bound to one workspace."
            )
        if depth(subject.act) >= MAX_DEPTH:
            raise errors.OAUTH_INVALID_REQUEST.oauth_error(
                f"A delegated token may be handed on at most {MAX_DEPTH} times."
            )
        scopes = _narrowed(subject, scope)
        now = self._clock.now()
        seconds = lifetime
        if subject.expires_at is not None:
            # Never outlives its subject (a key's end, a token's exp).
            seconds = min(seconds, int((subject.expires_at - now).total_seconds()))
        if seconds <= 0:
            raise errors.INVALID_SUBJECT_TOKEN.oauth_error(
                "expired_credentials: " + errors.EXPIRED_CREDENTIALS.detail
            )
        act: dict[str, Any] = {"sub": actor or DEFAULT_ACTOR}
        if subject.act is not None:
            act["act"] = subject.act
        root = _root_of(subject)
        claims: dict[str, Any] = {
            "scope": " ".join(scopes),
            "workspace_id": subject.workspace_id,
            "act": act,
            "root": root,
        }
        if subject.session_id is not None:
            claims["sid"] = subject.session_id  # a user root: it ends with that sign-in
        minted = self._signer.mint(subject.user_id, extra=claims, lifetime=seconds)
        logger.info(
            "delegated",
            extra={
                "root": root,
                "jti": minted.jti,
                "act": act,
                "workspace_id": subject.workspace_id,
                "expires_at": epoch(now) + seconds,
            },
        )
        return Delegated(minted.token, seconds, scopes, subject.workspace_id, root)


def _narrowed(subject: Principal, scope: str | None) -> tuple[str, ...]:
    """The requested scopes, each one the subject holds on the data plane; default all of
    them. A delegated token never manages anything, so `workspace:admin` is never granted."""
    held = subject.scopes & frozenset(DATA_PLANE_SCOPES)
    if scope is None:
        wanted = set(held)
    else:
        wanted = set(scope.split())
        refused = sorted(wanted - held)
        if refused or not wanted:
            raise errors.OAUTH_INVALID_SCOPE.oauth_error(
                f"scope {refused[0][:64]!r} is not one the subject_token holds on the data plane."
                if refused
                else "scope names no scope."
            )
    if not wanted:
        raise errors.OAUTH_INVALID_SCOPE.oauth_error(
            "The subject_token holds no data-plane scope to delegate."
        )
    return tuple(ordered(wanted))


def _root_of(subject: Principal) -> str:
    if subject.credential == "delegated":
        assert subject.root is not None
        return subject.root
    if subject.credential == "api_key":
        assert subject.key_id is not None
        return subject.key_id
    return subject.user_id

