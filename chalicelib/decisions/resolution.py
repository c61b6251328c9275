"""Request resolution: `Authorization` + `X-Workspace-Id` to a principal, or a refusal.

The resolution rules 1–8 (docs/architecture.md) live here once. The service's routes and the
data-plane authorizer both call `Resolver.resolve`. One straight sequence: parse, check the
credential, then exactly one strongly consistent store round trip (a `BatchGetItem` of every
item the decision needs), then ordered checks. A bad credential is a `Refusal` (a result);
only a broken dependency raises. After a key resolved, its use is recorded (`lastUsedAt`),
which never changes the result; a key over its daily quota is refused (429) first.

What each credential's one round trip reads:
- a key that names its owner (keys/plaintext.py): its record and the membership it needs;
  a plain or legacy key takes a second read for the membership (the only exception);
- a user token (signature checked locally): its sign-in (the refresh family in `sid`) and the
  membership of the named workspace (one GetItem of the sign-in when none is named), so
  signing out refuses it on the very next request;
- an MCP access token: its grant (the refresh family in `sid`) and its owner's membership of
  the workspace it is bound to, so revoking the grant or removing the member refuses it on
  the very next request;
- a workload token (a `policy` claim): its trust policy (one GetItem), so deleting the policy
  refuses it on the very next request; no membership (a workload is not a user);
- a service client's token (a `client_id` of `scl_…`, here or at an MCP resource): its
  client's item (one GetItem), so deleting the client refuses it on the very next request;
  no membership (a machine is not a member);
- a delegated token whose root is a key: that key's record and the owner's membership of
  the token's workspace (a revoked root or a removed member refuses it on the next request);
  one whose root is a user: that user's sign-in (`sid`) and the membership.
Each further kind of token this service signs (told apart by its claims in `_resolve_jwt`)
states the items it reads the same way, and is judged from them without another read.

A JWT is judged by where it is presented (its audience): without a `resource`, only the
tokens this service issues for itself resolve; at an MCP resource, only the access tokens
issued for that resource do.
"""

from __future__ import annotations

import hmac
from copy import replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

from chalicelib import errors, ids, items
from chalicelib.access.allow_list import allows
from chalicelib.access.dpop import DpopRequest
from chalicelib.access.principal import Origin, Principal, Refusal
from chalicelib.access.scopes import ALL_SCOPES, DATA_PLANE_SCOPES, WORKSPACE
from chalicelib.clock import Clock
from chalicelib.keys.model import ApiKey, seconds_to_midnight, usage_day
from chalicelib.keys.plaintext import ParsedKey, looks_like_key, parse_key
from chalicelib.keys.store import KeyStore, key_from_values
from chalicelib.workspaces.store import WorkspaceStore

if TYPE_CHECKING:
    from chalicelib.config import McpResource

MISSING = Refusal(errors.MISSING_CREDENTIALS)
INVALID = Refusal(errors.INVALID_CREDENTIALS)
EXPIRED = Refusal(errors.EXPIRED_CREDENTIALS)
REVOKED = Refusal(errors.REVOKED_CREDENTIALS)
MISMATCH = Refusal(errors.WORKSPACE_MISMATCH)
NOT_A_MEMBER = Refusal(errors.NOT_A_MEMBER)
IP_NOT_ALLOWED = Refusal(errors.IP_NOT_ALLOWED)
# A key pasted as the whole header is the commonest first mistake: say what to send.
SCHEME_MISSING = Refusal(
    errors.INVALID_CREDENTIALS, "Send the key with its scheme: 'Authorization: Bearer <key>'."
)
# A user token minted before its sign-in was read at every decision (it names none): it
# lived an hour at most; signing in again gives one that ends with its sign-in.
SIGNED_IN_BEFORE_SESSIONS = Refusal(
    errors.INVALID_CREDENTIALS, "This token predates sign-in sessions: sign in again."
)
# Checked once the credential is known good: a typo in X-Workspace-Id is a bad request, not a
# refusal that sends the caller looking for a membership problem.
INVALID_WORKSPACE_ID = Refusal(
    errors.INVALID_WORKSPACE_ID, "X-Workspace-Id must be a workspace id (ws_ and 26 characters)."
)


class VerifiesTokens(Protocol):
    """Checks a token of ours for an audience (default: this service, i.e. a user token):
    its claims, or `TokenRejected`; `DependencyUnavailable` when the signing keys cannot be
    loaded. Any callable of this shape will do: the runtime passes one that builds the
    verifier (KMS client, PyJWT) only when the first token arrives."""

    def __call__(self, token: str, audience: str | None = None) -> dict[str, Any]: ...


class RecordsUse(Protocol):
    """Counts a key's successful decisions (keys/last_use.py) and knows today's count."""

    def record(self, api_key: ApiKey, now: datetime) -> None: ...

    def counted_today(self, api_key: ApiKey, now: datetime) -> int: ...


class AnnouncesQuota(Protocol):
    """Records `key.quota_exceeded`, at most once per key and day; never raises."""

    def __call__(self, api_key: ApiKey, now: datetime) -> None: ...


# A credential bound to a key pair (RFC 9449), refused without its proof: the challenge says
# DPoP. Sent as Bearer, it says `invalid_token` (RFC 9449 §7.2: the scheme is wrong).
BOUND_AS_BEARER = Refusal(errors.DPOP_REQUIRED, dpop_error="invalid_token")
NOT_BOUND = Refusal(
    errors.INVALID_CREDENTIALS,
    "This credential is not bound to a key pair: send it as 'Authorization: Bearer <credential>'.",
    dpop_error="invalid_token",
)


class Presented(NamedTuple):
    """The credential of an `Authorization` header, and whether it came as `DPoP`."""

    token: str
    dpop: bool


def presented_credential(authorization: str | None) -> Presented | Refusal:
    if authorization is None or not authorization.strip():
        return MISSING
    scheme, _, token = authorization.strip().partition(" ")
    token = token.strip()
    if not token and looks_like_key(scheme):
        return SCHEME_MISSING
    if scheme.lower() not in ("bearer", "dpop") or not token or " " in token:
        return INVALID
    return Presented(token, scheme.lower() == "dpop")


def bearer_token(authorization: str | None) -> str | Refusal:
    found = presented_credential(authorization)
    if isinstance(found, Refusal):
        return found
    return INVALID if found.dpop else found.token


class Resolver:
    def __init__(
        self,
        keys: KeyStore,
        workspaces: WorkspaceStore,
        clock: Clock,
        verify_token: VerifiesTokens,
        last_use: RecordsUse | None = None,
        quota_exceeded: AnnouncesQuota | None = None,
    ):
        self._keys = keys
        self._workspaces = workspaces
        self._clock = clock
        self._verify_token = verify_token
        self._last_use = last_use
        self._quota_exceeded = quota_exceeded

    def resolve(
        self,
        authorization: str | None,
        workspace_id: str | None,
        resource: McpResource | None = None,
        origin: Origin | None = None,
        dpop: DpopRequest | None = None,
    ) -> Principal | Refusal:
        """`resource`: the MCP resource the request is for, if any (the authorizer knows);
        `origin`: where the request came from (a key's allow-list is checked against it);
        `dpop`: the request's DPoP proof and what it is checked against (None: no proof can
        be checked, so a bound credential is refused)."""
        found = self._resolve(authorization, workspace_id, resource, origin, dpop)
        if (
            isinstance(found, Refusal)
            and found.status == 401
            and found.dpop_error is None
            and authorization is not None
            and authorization.strip().lower().startswith("dpop ")
        ):
            # Sent with the DPoP scheme: the challenge answers in it (RFC 9449 §7.1).
            return found._replace(dpop_error="invalid_token")
        return found

    def _resolve(
        self,
        authorization: str | None,
        workspace_id: str | None,
        resource: McpResource | None,
        origin: Origin | None,
        dpop: DpopRequest | None,
    ) -> Principal | Refusal:
        sent = presented_credential(authorization)
        if isinstance(sent, Refusal):
            return sent
        token = sent.token
        proof_jkt: str | None = None
        if sent.dpop:
            # Checked before any read: a bad proof costs no store round trip. Whether its key
            # is the one the credential is bound to is known once the credential is.
            checked_proof = self._check_proof(token, dpop)
            if isinstance(checked_proof, Refusal):
                return checked_proof
            proof_jkt = checked_proof
        if workspace_id is not None:
            # Sent but empty names no workspace: clients render "none" as an empty value.
            workspace_id = workspace_id.strip() or None
        record = None
        member: bool | None = None  # the membership, when read with the key
        found: Principal | Refusal
        if looks_like_key(token):
            resolved = self._resolve_key(token, workspace_id, origin, proof_jkt)
            if isinstance(resolved, Refusal):
                return resolved
            found, record, member = resolved
        else:
            resolved_token = self._resolve_jwt(token, workspace_id, resource, origin, proof_jkt)
            if isinstance(resolved_token, Refusal):
                return resolved_token
            found, member, record = resolved_token
        checked = self._check_membership(found, member)
        if record is None or not isinstance(checked, Principal):
            return checked
        now = self._clock.now()
        if record.requests_per_day is not None:
            counted = (
                self._last_use.counted_today(record, now)
                if self._last_use is not None
                else record.requests_on(usage_day(now))
            )
            if counted >= record.requests_per_day:
                # Refused requests are not counted: the quota caps what the key gets done.
                if self._quota_exceeded is not None:
                    self._quota_exceeded(record, now)
                return Refusal(errors.QUOTA_EXCEEDED, retry_after=seconds_to_midnight(now))
        if self._last_use is not None:
            self._last_use.record(record, now)
        return checked

    def _check_proof(self, credential: str, dpop: DpopRequest | None) -> str | Refusal:
        """The thumbprint of the key whose valid proof came with this credential, or the
        refusal (`invalid_dpop_proof`, saying why). No read: the proof carries its key."""
        from chalicelib.access.dpop import BadProof, check_proof  # the bearer path never loads it

        if dpop is None:
            return Refusal(errors.INVALID_DPOP_PROOF, dpop_error="invalid_dpop_proof")
        proof = check_proof(
            dpop.proof, dpop.method, dpop.url, self._clock.now().timestamp(), credential
        )
        if isinstance(proof, BadProof):
            return Refusal(errors.INVALID_DPOP_PROOF, proof.reason, dpop_error="invalid_dpop_proof")
        return proof.jkt

    def _resolve_key(
        self, token: str, workspace_id: str | None, origin: Origin | None, proof_jkt: str | None
    ) -> tuple[Principal, ApiKey, bool | None] | Refusal:
        parsed = parse_key(token)
        if parsed is None:  # checksum or shape wrong: no read needed
            return INVALID
        membership = _membership_named_by(parsed, workspace_id)
        member: bool | None = None
        if membership is None:
            record = self._keys.find_by_hash(parsed.digest)
        else:
            record, member = self._keys.find_by_hash_with_membership(parsed.digest, *membership)
        now = self._clock.now()
        if record is None or record.gone(now):
            return INVALID
        if parsed.located and (parsed.owner_id, parsed.workspace_id) != (
            record.owner_id,
            record.workspace_id,
        ):
            # The hash decides; ids that disagree with the record it found mean the plaintext
            # was not minted for it (tampered, then given a valid checksum).
            return INVALID
        status = record.status(now)
        if status == "revoked":  # rule 7: effective on the next request
            return REVOKED
        if status == "expired":  # rule 8
            return EXPIRED
        bound = _binding(record.dpop_jkt, proof_jkt)
        if bound is not None:
            return bound
        if record.allowed_cidrs is not None and not allows(
            record.allowed_cidrs, origin.source_ip if origin else None
        ):
            return IP_NOT_ALLOWED
        if workspace_id is not None and not ids.is_workspace_id(workspace_id):
            return INVALID_WORKSPACE_ID
        if record.category == WORKSPACE:
            # Rules 1 and 2: a bound key is never retargeted.
            if workspace_id is not None and workspace_id != record.workspace_id:
                return MISMATCH
            workspace_id = record.workspace_id
        principal = Principal(
            user_id=record.owner_id,
            credential="api_key",
            scopes=frozenset(record.scopes),
            workspace_id=workspace_id,
            key_id=record.id,
            category=record.category,
            origin=origin,
            expires_at=record.expires_at,
            dpop_jkt=record.dpop_jkt,
        )
        return principal, record, member

    def _resolve_jwt(
        self,
        token: str,
        workspace_id: str | None,
        resource: McpResource | None,
        origin: Origin | None,
        proof_jkt: str | None,
    ) -> tuple[Principal, bool | None, ApiKey | None] | Refusal:
        """A token this service signed: verified for the audience it is presented at, told
        apart by its claims, then judged from the one round trip its kind states. Returns the
        principal, the membership when it was read here (None: `_check_membership` reads
        it), and the key the request counts on (a delegated token's root key, as its judge
        read it: its use is recorded and its daily quota applies), else None."""
        # Imported only when a JWT arrives: the API-key path never loads the token modules.
        from chalicelib.sessions.access_tokens import TokenRejected, looks_like_jwt

        if not looks_like_jwt(token):
            return INVALID
        try:
            claims = (
                self._verify_token(token)
                if resource is None
                else self._verify_token(token, resource.uri)
            )
        except TokenRejected as rejected:
            return EXPIRED if rejected.expired else INVALID
        cnf = claims.get("cnf")
        bound_to = cnf.get("jkt") if isinstance(cnf, dict) else None
        refused = _binding(bound_to if isinstance(bound_to, str) else None, proof_jkt)
        if refused is not None:  # before the read: a stolen bound token costs none
            return refused
        judged_jwt = self._judge_jwt(claims, workspace_id, resource, origin)
        if isinstance(judged_jwt, Refusal) or proof_jkt is None:
            return judged_jwt
        principal, member, record = judged_jwt
        return replace(principal, dpop_jkt=proof_jkt), member, record

    def _judge_jwt(
        self,
        claims: dict[str, Any],
        workspace_id: str | None,
        resource: McpResource | None,
        origin: Origin | None,
    ) -> tuple[Principal, bool | None, ApiKey | None] | Refusal:
        if ids.is_service_client_id(claims.get("client_id")):
            # Here or at an MCP resource alike: its audience was checked above.
            judged = self._judge_service_client_token(claims, workspace_id, origin)
            return judged if isinstance(judged, Refusal) else (*judged, None)
        if resource is not None:
            judged = self._judge_mcp_token(claims, workspace_id, origin)
            return judged if isinstance(judged, Refusal) else (*judged, None)
        if "root" in claims:
            return self._judge_delegated_token(claims, workspace_id, origin)
        if workspace_id is not None and not ids.is_workspace_id(workspace_id):
            return INVALID_WORKSPACE_ID
        if "policy" in claims:
            judged = self._judge_workload_token(claims, workspace_id, origin)
            return judged if isinstance(judged, Refusal) else (*judged, None)
        judged = self._judge_user_token(claims, workspace_id, origin)
        return judged if isinstance(judged, Refusal) else (*judged, None)

    def _judge_user_token(
        self, claims: dict[str, Any], workspace_id: str | None, origin: Origin | None
    ) -> tuple[Principal, bool | None] | Refusal:
        """A user token: its sign-in (`sid`) is read, with the membership of the workspace
        named (one `BatchGetItem`; one GetItem when none is named), so that signing out
        refuses it on the very next request. A token without `sid` (issued before sign-ins
        were read) is refused: it would outlive its sign-out."""
        from chalicelib.sessions.sign_ins import is_sign_in_id, live

        user_id, session_id = claims["sub"], claims.get("sid")
        if not isinstance(session_id, str) or not is_sign_in_id(session_id):
            return SIGNED_IN_BEFORE_SESSIONS
        family = items.refresh_family(session_id)
        member: bool | None = None
        if workspace_id is None:
            found = self._workspaces.read(family)
        else:
            found, member = self._workspaces.read_with_membership(family, workspace_id, user_id)
        if not live(found, user_id, self._clock.now()):
            return REVOKED  # signed out, ended, or a reused refresh token ended the sign-in
        principal = Principal(
            user_id=user_id,
            credential="user_token",
            scopes=frozenset(ALL_SCOPES),  # a user token carries every scope of its user
            workspace_id=workspace_id,
            origin=origin,
            expires_at=_expiry(claims),
            session_id=session_id,
        )
        return principal, member

    def _judge_delegated_token(
        self, claims: dict[str, Any], workspace_id: str | None, origin: Origin | None
    ) -> tuple[Principal, bool | None, ApiKey | None] | Refusal:
        """A delegated token (sessions/delegation.py): bound to its workspace with exactly its
        scopes. Its root is re-judged at every decision, so that revoking the root key or
        removing its owner from the workspace refuses the token on the very next request: a
        key root's record and the membership in one `BatchGetItem`; a user root's sign-in
        (the token's `sid`) and the membership, the same way, so that the token ends with
        the sign-in it was delegated from."""
        root, bound, scope, user_id, jti, act = (
            claims.get(name) for name in ("root", "workspace_id", "scope", "sub", "jti", "act")
        )
        if not all(isinstance(v, str) and v for v in (root, bound, scope, user_id, jti)):
            return INVALID
        assert isinstance(root, str) and isinstance(bound, str) and isinstance(scope, str)
        assert isinstance(user_id, str) and isinstance(jti, str)
        if not isinstance(act, dict) or not ids.is_workspace_id(bound):
            return INVALID
        record = None
        member: bool | None = None
        session_id = None
        if ids.is_key_id(root):
            values, member = self._workspaces.read_with_membership(
                items.api_key(user_id, root), bound, user_id
            )
            now = self._clock.now()
            record = key_from_values(values) if values is not None else None
            if record is None or record.gone(now) or record.owner_id != user_id:
                return REVOKED  # the root key is gone: deleted after its revocation
            status = record.status(now)
            if status == "revoked":  # revoked, or rotated and out of its grace
                return REVOKED
            if status == "expired":
                return EXPIRED
        elif root != user_id:
            return INVALID  # a user root is the token's own subject
        else:
            # A user root ends with its sign-in: the sign-in and the membership together.
            from chalicelib.sessions.sign_ins import is_sign_in_id, live

            session_id = claims.get("sid")
            if not isinstance(session_id, str) or not is_sign_in_id(session_id):
                return SIGNED_IN_BEFORE_SESSIONS
            family, member = self._workspaces.read_with_membership(
                items.refresh_family(session_id), bound, user_id
            )
            if not live(family, user_id, self._clock.now()):
                return REVOKED
        if workspace_id is not None and not ids.is_workspace_id(workspace_id):
            return INVALID_WORKSPACE_ID
        if workspace_id is not None and workspace_id != bound:
            return MISMATCH  # bound to its workspace, like a workspace key
        principal = Principal(
            user_id=user_id,
            credential="delegated",
            scopes=frozenset(scope.split()) & frozenset(DATA_PLANE_SCOPES),
            workspace_id=bound,
            origin=origin,
            token_id=jti,
            root=root,
            act=act,
            expires_at=_expiry(claims),
            session_id=session_id,
        )
        return principal, member, record

    def _judge_mcp_token(
        self, claims: dict[str, Any], workspace_id: str | None, origin: Origin | None
    ) -> tuple[Principal, bool | None] | Refusal:
        """An MCP access token: bound to its workspace like a workspace key; its grant and
        its owner's membership are read together (one `BatchGetItem`)."""
        from chalicelib.oauth.grants import in_force

        grant_id, bound, scope, client_id, user_id = (
            claims.get(name) for name in ("sid", "workspace_id", "scope", "client_id", "sub")
        )
        if not all(isinstance(v, str) and v for v in (grant_id, bound, scope, client_id, user_id)):
            return INVALID  # signed by us for this resource, yet not an MCP access token
        assert isinstance(grant_id, str) and isinstance(bound, str) and isinstance(scope, str)
        assert isinstance(user_id, str)
        if not ids.is_workspace_id(bound):
            return INVALID
        family, member = self._workspaces.read_with_membership(
            items.refresh_family(grant_id), bound, user_id
        )
        if not in_force(family, self._clock.now()):
            return REVOKED  # the user revoked the grant, or a reused code or token did
        if workspace_id is not None and workspace_id != bound:
            return MISMATCH  # bound to its workspace, like a workspace key
        principal = Principal(
            user_id=user_id,
            credential="mcp_token",
            scopes=frozenset(scope.split()) & frozenset(ALL_SCOPES),
            workspace_id=bound,
            client_id=str(client_id),
            origin=origin,
        )
        return principal, member

    def _judge_workload_token(
        self, claims: dict[str, Any], workspace_id: str | None, origin: Origin | None
    ) -> tuple[Principal, bool | None] | Refusal:
        """A workload token: bound to its workspace like a workspace key, with exactly its
        scopes; its trust policy is re-read (one GetItem) so a deleted policy refuses it."""
        from chalicelib.workloads.store import to_policy

        policy_id, bound, scope, subject = (
            claims.get(name) for name in ("policy", "workspace_id", "scope", "sub")
        )
        if not all(isinstance(v, str) and v for v in (policy_id, bound, scope, subject)):
            return INVALID  # signed by us, yet not a workload token
        assert isinstance(policy_id, str) and isinstance(bound, str)
        assert isinstance(scope, str) and isinstance(subject, str)
        if not ids.is_workspace_id(bound) or not ids.is_trust_policy_id(policy_id):
            return INVALID
        found = self._workspaces.read(items.trust_policy(bound, policy_id))
        if found is None:
            return REVOKED  # the owner deleted the policy: its tokens stop on the next request
        policy = to_policy(found)
        if workspace_id is not None and workspace_id != bound:
            return MISMATCH  # bound to its workspace, like a workspace key
        act = claims.get("act")
        principal = Principal(
            user_id=subject,
            credential="workload",
            # Never more than the policy holds now, nor than a workspace key may.
            scopes=frozenset(scope.split()) & frozenset(policy.scopes),
            workspace_id=bound,
            token_id=str(claims.get("jti") or "") or None,
            policy_id=policy_id,
            act=act if isinstance(act, dict) else None,
            origin=origin,
        )
        return principal, True  # no membership applies: a workload is not a user

    def _judge_service_client_token(
        self, claims: dict[str, Any], workspace_id: str | None, origin: Origin | None
    ) -> tuple[Principal, bool | None] | Refusal:
        """A service client's token (client_credentials): bound to its workspace like a
        workspace key, with its scopes as the client holds them now; the client's item is
        read (one GetItem), so deleting the client refuses its tokens on the next request."""
        client_id, bound, scope = (
            claims.get(name) for name in ("client_id", "workspace_id", "scope")
        )
        if not isinstance(bound, str) or not isinstance(scope, str) or claims["sub"] != client_id:
            return INVALID  # signed by us, yet not a service client's token
        if not ids.is_workspace_id(bound):
            return INVALID
        assert isinstance(client_id, str)  # is_service_client_id said so
        found = self._workspaces.read(items.service_client(client_id))
        if found is None or found.get("workspaceId") != bound:
            return REVOKED  # the owner deleted the client: its tokens stop on the next request
        if workspace_id is not None and workspace_id != bound:
            return INVALID_WORKSPACE_ID if not ids.is_workspace_id(workspace_id) else MISMATCH
        principal = Principal(
            user_id=client_id,
            credential="service_client",
            # Never more than the client holds now.
            scopes=frozenset(scope.split()) & frozenset(found.get("scopes") or ()),
            workspace_id=bound,
            client_id=client_id,
            token_id=str(claims.get("jti") or "") or None,
            origin=origin,
            expires_at=_expiry(claims),
        )
        return principal, True  # no membership applies: a machine is not a member

    def _check_membership(self, principal: Principal, member: bool | None) -> Principal | Refusal:
        """Rule 3: the caller (the key's owner) must be a member of the resolved workspace.

        `member` is the membership of exactly this workspace and user when it was read with
        the key (the ids the key names are the record's, checked above), else None.
        """
        workspace_id = principal.workspace_id
        if workspace_id is None:
            return principal
        if not ids.is_workspace_id(workspace_id):
            # No workspace we could have issued: refused without a read (and never sent to
            # DynamoDB as part of a key).
            return NOT_A_MEMBER
        if member is None:
            member = self._workspaces.is_member(workspace_id, principal.user_id)
        if not member:
            return NOT_A_MEMBER
        return principal


def _binding(bound_to: str | None, proof_jkt: str | None) -> Refusal | None:
    """A bound credential needs the proof of its own key; an unbound one takes none."""
    if bound_to is None:
        return None if proof_jkt is None else NOT_BOUND
    if proof_jkt is None:
        return BOUND_AS_BEARER
    if not hmac.compare_digest(bound_to, proof_jkt):
        return Refusal(
            errors.INVALID_DPOP_PROOF,
            "The DPoP proof is signed by another key than the one this credential is bound to.",
            dpop_error="invalid_dpop_proof",
        )
    return None


def _expiry(claims: dict[str, Any]) -> datetime | None:
    exp = claims.get("exp")
    return datetime.fromtimestamp(exp, UTC) if isinstance(exp, int) else None


def _membership_named_by(parsed: ParsedKey, workspace_id: str | None) -> tuple[str, str] | None:
    """(workspace, user) of the membership a located key's decision needs, known before its
    record is read: its owner in its bound workspace, or (an admin key) in the one the request
    names. None when no membership will be needed or the key does not name its owner."""
    if parsed.owner_id is None:
        return None
    workspace = parsed.workspace_id or workspace_id
    if workspace is None or not ids.is_workspace_id(workspace):
        return None
    return workspace, parsed.owner_id
