"""The exchange (RFC 8693, subject_token_type jwt): a workload's OIDC token for a workload
token of one workspace, under the first of its trust policies that matches.

One straight sequence: the token's header and unverified `iss` (only to find candidate
policies and the issuer's keys), the signature with the pinned algorithm of that key
(RS256 or ES256; never `none` or HMAC), then `iss`, `aud`, `exp`, `iat` (required; a
lifetime of at most 24 hours), then the policies in creation order. Every refusal of the
token is one answer, "no trust policy of this workspace accepts this token", whatever failed
(its shape, its issuer, its key, its signature, its claims, the policies): the reason goes to
the service log only. Told apart, the answers would say which issuers a workspace trusts (an
unverifiable token's signature is checked only where its issuer is trusted) and which policy
condition a stolen token misses.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from chalicelib import ids
from chalicelib.access.scopes import ordered
from chalicelib.clock import Clock, epoch
from chalicelib.events import model as events
from chalicelib.events.log import EventLog
from chalicelib.logs import logger
from chalicelib.replays import Replays
from chalicelib.sessions.access_tokens import CLOCK_SKEW, TokenSigner
from chalicelib.workloads.issuers import ALGORITHMS, IssuerKeys, UnknownKey, UnusableKey
from chalicelib.workloads.model import TrustPolicy, workload_subject
from chalicelib.workloads.store import TrustPolicyStore

MAX_SUBJECT_LIFETIME = 24 * 3600  # seconds from iat to exp
MAX_LOGGED_ISSUER = 255  # characters of an unverified `iss` a refusal's log line keeps
NOT_ACCEPTED = "no trust policy of this workspace accepts this token"


class WorkloadRejected(Exception):
    """The exchange is refused (400 invalid_grant, or invalid_scope/invalid_request when
    `error` says so). `description` is safe to show; it holds no token."""

    def __init__(self, description: str, error: str = "invalid_grant"):
        super().__init__(description)
        self.description = description
        self.error = error


class _Refused(Exception):
    """Why the subject token is refused: for the log only (`reason` holds no token)."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class WorkloadToken:
    token: str
    expires_in: int
    scope: str
    policy: TrustPolicy


class WorkloadExchange:
    def __init__(
        self,
        policies: TrustPolicyStore,
        issuer_keys: IssuerKeys,
        signer: TokenSigner,
        events: EventLog,
        clock: Clock,
        replays: Replays | None = None,
    ):
        self._replays = replays
        self._policies = policies
        self._keys = issuer_keys
        self._signer = signer
        self._events = events
        self._clock = clock

    def exchange(
        self,
        subject_token: str,
        workspace_id: str | None,
        scope: str | None,
        single_use: bool = False,
    ) -> WorkloadToken:
        """The workload token for `subject_token`. `single_use` (the jwt-bearer form, RFC
        7523): the token must carry a `jti`, spent here once accepted; a replay is refused
        with the same one answer as every other refusal."""
        if not workspace_id:
            raise WorkloadRejected("workspace_id is required.", "invalid_request")
        if not ids.is_workspace_id(workspace_id):
            raise WorkloadRejected("workspace_id must be a workspace id (ws_…).", "invalid_request")
        issuer: str | None = None
        try:
            issuer = self._unverified_issuer(subject_token)
            policy, claims = self._accepting(subject_token, workspace_id, issuer)
            if single_use:
                self._spend(issuer, claims)
        except _Refused as refused:
            # One answer for every refusal; which one it was is the operator's to read.
            logger.info(
                "workload token refused",
                extra={
                    "workspace_id": workspace_id,
                    "issuer": issuer[:MAX_LOGGED_ISSUER] if issuer else None,  # the token's
                    "reason": refused.reason,
                },
            )
            raise WorkloadRejected(NOT_ACCEPTED) from None
        granted = self._scopes(policy, scope)
        lifetime = min(policy.max_lifetime_seconds, int(claims["exp"]) - epoch(self._clock.now()))
        subject = claims["sub"]
        self._record(policy, subject)
        minted = self._signer.mint(
            workload_subject(policy.id, subject),
            extra={
                "workspace_id": workspace_id,
                "scope": " ".join(granted),
                "policy": policy.id,
                "act": {"sub": subject, "iss": policy.issuer},
            },
            lifetime=lifetime,
        )
        return WorkloadToken(minted.token, minted.expires_in, " ".join(granted), policy)

    def _spend(self, issuer: str, claims: dict[str, Any]) -> None:
        """The accepted token's `jti`, spent (one conditional write): a second presentation
        is refused. Checked last, so that only a token that would be accepted spends it."""
        jti = claims.get("jti")
        if not isinstance(jti, str) or not 0 < len(jti) <= 255:
            raise _Refused("no jti claim (the jwt-bearer form needs one)")
        if self._replays is None or not self._replays.spend(
            issuer, jti, int(claims["exp"]), self._clock.now()
        ):
            raise _Refused("its jti was already used")

    def _unverified_issuer(self, token: str) -> str:
        """The token's `iss`, unverified: only to find the candidate policies and which
        issuer's keys to use; nothing is trusted before the verified decode."""
        import jwt

        try:
            header = jwt.get_unverified_header(token)
            claims = jwt.decode(token, options={"verify_signature": False})
        except jwt.PyJWTError:
            raise _Refused("not a well-formed JWT") from None
        if header.get("alg") not in ALGORITHMS:  # `none`, HS256 (key confusion), anything else
            raise _Refused("not signed with RS256 or ES256")
        issuer = claims.get("iss")
        if not isinstance(issuer, str):
            raise _Refused("no iss claim")
        return issuer

    def _accepting(
        self, token: str, workspace_id: str, issuer: str
    ) -> tuple[TrustPolicy, dict[str, Any]]:
        """The first policy (in creation order) accepting the token, and its verified claims."""
        candidates = [p for p in self._policies.list(workspace_id) if p.issuer == issuer]
        if not candidates:
            raise _Refused("no trust policy of the workspace names this issuer")
        claims = self._verified(token, issuer, candidates)
        policy = next((p for p in candidates if p.matches(claims)), None)
        if policy is None:
            raise _Refused("no trust policy of the workspace matches its claims")
        if int(claims["exp"]) <= epoch(self._clock.now()):
            raise _Refused("expired")
        return policy, claims

    def _verified(self, token: str, issuer: str, candidates: list[TrustPolicy]) -> dict[str, Any]:
        import jwt

        header = jwt.get_unverified_header(token)
        algorithm = header["alg"]
        kid = header.get("kid")
        if not isinstance(kid, str) or not kid:
            raise _Refused("no key id (kid)")
        try:
            key = self._keys.verification_key(issuer, kid, algorithm)
        except UnknownKey:
            raise _Refused("its signing key (kid) is not published by the issuer") from None
        except UnusableKey as unusable:
            raise _Refused(str(unusable)) from None
        try:
            claims: dict[str, Any] = jwt.decode(
                token,
                key=key,
                algorithms=[algorithm],  # the one the key is for: pinned, never the header's
                audience=sorted({p.audience for p in candidates}),
                issuer=issuer,
                leeway=CLOCK_SKEW,
                options={"require": ["exp", "iat", "iss", "aud", "sub"]},
            )
        except jwt.ExpiredSignatureError:
            raise _Refused("expired") from None
        except jwt.InvalidAudienceError:
            raise _Refused("no trust policy of the workspace names its audience") from None
        except jwt.InvalidSignatureError:
            raise _Refused("signature not valid") from None
        except jwt.MissingRequiredClaimError as missing:
            raise _Refused(f"no {missing.claim} claim") from None
        except jwt.PyJWTError:
            raise _Refused("not a valid JWT") from None
        issued, expires = claims["iat"], claims["exp"]
        if not isinstance(issued, int | float) or not isinstance(expires, int | float):
            raise _Refused("iat or exp not a number")
        if expires - issued > MAX_SUBJECT_LIFETIME:
            raise _Refused("it lives longer than 24 hours")
        if not isinstance(claims["sub"], str) or not 0 < len(claims["sub"]) <= 255:
            raise _Refused("sub is not a string of 1 to 255 characters")
        return claims

    def _scopes(self, policy: TrustPolicy, scope: str | None) -> list[str]:
        if scope is None:
            return list(policy.scopes)
        asked = scope.split()
        if not asked or not set(asked) <= set(policy.scopes):
            raise WorkloadRejected(
                "scope must be a subset of the trust policy's scopes.", "invalid_scope"
            )
        return ordered(asked)

    def _record(self, policy: TrustPolicy, subject: str) -> None:
        """workload.exchanged, at most once per policy and workload sub per five minutes.
        Written before the token is handed out, like a reveal's: no credential without its
        audit record (a failed write is a 503)."""
        logger.info(
            "workload exchanged",
            extra={"policy_id": policy.id, "workload_sub": subject, "issuer": policy.issuer},
        )
        event = self._events.new(
            events.WORKLOAD_EXCHANGED,
            policy.created_by,
            events.system(events.WORKLOAD_IDENTITY),
            workspace_id=policy.workspace_id,
            data={"policyId": policy.id, "sub": subject, "iss": policy.issuer},
        )
        now = self._clock.now()
        if self._policies.record_exchange(policy, subject, now, self._events.member(event)):
            self._events.published(event)
