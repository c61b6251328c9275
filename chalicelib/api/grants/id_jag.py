"""Enterprise-managed authorization: an ID-JAG (Identity Assertion JWT Authorization Grant)
for an MCP access token, without a browser.

An enterprise IdP of ENTERPRISE_IDPS vouches for a person (`sub`) and an MCP client
(`client_id`) for one resource (`resource`) within `scope`. One straight sequence: the
header (`typ` oauth-id-jag+jwt, RS256 or ES256, a `kid`), the unverified `iss` only to pick
the trusted IdP and its keys (fetched SSRF-safely, at most once per 30 s per IdP), the
signature with the pinned algorithm, then `iss`, `aud` (our issuer), `exp` (at most
five minutes ahead), the resource and the client, the scopes (requested ∩ the assertion's ∩
`scopes_supported`), the person (found as at sign-in by (issuer, sub), created on first use)
and their workspace; the `jti` is spent last, so that a refusal the client can fix does not
use the assertion up. The token is the authorization code grant's kind (the decision path
reads its grant); no refresh token.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from chalicelib import errors, ids
from chalicelib.api import oauth_models
from chalicelib.api.grants.registry import Issued
from chalicelib.clock import epoch
from chalicelib.config import EnterpriseIdp, canonical_resource
from chalicelib.errors import OAuthError
from chalicelib.oauth.clients import ClientRejected
from chalicelib.oauth.service import parse_scope
from chalicelib.runtime import services
from chalicelib.sessions.access_tokens import CLOCK_SKEW
from chalicelib.sessions.openid import Identity
from chalicelib.workloads.issuers import ALGORITHMS, UnknownKey, UnusableKey

MAX_AHEAD = 300  # seconds: the furthest an ID-JAG's exp may be
REQUIRED = ["iss", "sub", "aud", "exp", "iat", "jti", "client_id", "resource"]


def refused(description: str) -> OAuthError:
    return errors.INVALID_GRANT.oauth_error(description)


@dataclass(frozen=True)
class Vouched:
    """What a verified ID-JAG says."""

    idp: EnterpriseIdp
    claims: dict[str, Any]


def verified(assertion: str) -> Vouched:
    """The ID-JAG's verified claims, or its invalid_grant."""
    import jwt

    try:
        header = jwt.get_unverified_header(assertion)
        unverified = jwt.decode(assertion, options={"verify_signature": False})
    except jwt.PyJWTError:
        raise refused("The assertion is not a well-formed JWT.") from None
    if str(header.get("typ", "")).lower() != oauth_models.ID_JAG_TYPE:
        raise refused(f"An ID-JAG's typ is {oauth_models.ID_JAG_TYPE}.")
    settings = services().settings
    idp = next((i for i in settings.enterprise_idps if i.issuer == unverified.get("iss")), None)
    if idp is None:
        raise refused("The ID-JAG's issuer is not a trusted enterprise identity provider.")
    algorithm, kid = header.get("alg"), header.get("kid")
    if algorithm not in ALGORITHMS or not isinstance(kid, str) or not kid:
        raise refused("The ID-JAG is not signed with RS256 or ES256 and a key id (kid).")
    keys = services().workload_issuer_keys
    try:
        key = keys.verification_key(idp.issuer, kid, algorithm, idp.jwks_uri)
    except UnknownKey:
        raise refused("The ID-JAG's signing key is not published by its issuer.") from None
    except UnusableKey:
        raise refused("The ID-JAG's algorithm does not match its key.") from None
    try:
        claims: dict[str, Any] = jwt.decode(
            assertion,
            key=key,
            algorithms=[algorithm],  # the key's: pinned, never the header's alone
            audience=settings.issuer,
            issuer=idp.issuer,
            leeway=CLOCK_SKEW,
            options={"require": REQUIRED},
        )
    except jwt.ExpiredSignatureError:
        raise refused("The ID-JAG has expired.") from None
    except jwt.InvalidAudienceError:
        raise refused(f"The ID-JAG's audience (aud) is not {settings.issuer}.") from None
    except jwt.InvalidSignatureError:
        raise refused("The ID-JAG's signature is not valid.") from None
    except jwt.MissingRequiredClaimError as missing:
        raise refused(f"The ID-JAG has no {missing.claim} claim.") from None
    except jwt.PyJWTError:
        raise refused("The ID-JAG is not a valid JWT.") from None
    now = epoch(services().clock.now())
    if not isinstance(claims["exp"], int | float) or claims["exp"] > now + MAX_AHEAD:
        raise refused("The ID-JAG's exp is more than 5 minutes ahead.")
    for name in ("sub", "jti", "client_id", "resource"):
        if not isinstance(claims[name], str) or not 0 < len(claims[name]) <= 2048:
            raise refused(f"The ID-JAG's {name} is not a string.")
    return Vouched(idp, claims)


@dataclass(frozen=True)
class Judged:
    """An accepted ID-JAG: what its token is for."""

    vouched: Vouched
    user_id: str
    client_id: str
    resource: str
    scope: str
    workspace_id: str


def judged(parsed: oauth_models.JwtBearerForm) -> Judged:
    """The ID-JAG verified and every rule of the request checked, or its RFC 6749 error."""
    svc = services()
    vouched = verified(parsed.assertion)
    claims = vouched.claims
    oauth = svc.oauth_service
    resource = canonical_resource(claims["resource"])
    if resource not in oauth.served_resources():
        raise errors.INVALID_TARGET.oauth_error("The ID-JAG's resource is not served here.")
    if parsed.resource is not None and canonical_resource(parsed.resource) != resource:
        raise errors.INVALID_TARGET.oauth_error("resource differs from the ID-JAG's.")
    client_id = claims["client_id"]
    if parsed.client_id is not None and parsed.client_id != client_id:
        raise refused("client_id differs from the ID-JAG's.")
    try:
        oauth.client(client_id)
    except ClientRejected as rejected:
        raise refused(
            f"The ID-JAG's client_id is not a client registered here. {rejected.description}"
        ) from None
    scope = _scope(parsed.scope, claims.get("scope"), oauth.served_scopes())
    identity = Identity(vouched.idp.issuer, claims["sub"], **_profile(claims))
    user_id = svc.users.sign_in(identity, svc.clock.now())
    workspace_id = _workspace(user_id, parsed.workspace_id)
    return Judged(vouched, user_id, client_id, resource, scope, workspace_id)


def issue(judged: Judged) -> Issued:
    """The MCP access token, once the ID-JAG's `jti` is spent (last: a refusal the client can
    fix, such as a missing workspace_id, does not use the assertion up)."""
    svc = services()
    claims = judged.vouched.claims
    issuer, now = judged.vouched.idp.issuer, svc.clock.now()
    if not svc.replays.spend(issuer, claims["jti"], int(claims["exp"]), now):
        raise refused("The ID-JAG was already used (its jti is single use).")
    issued = svc.oauth_service.issue_by_assertion(
        judged.user_id, judged.client_id, judged.resource, judged.scope, judged.workspace_id
    )
    return Issued(issued.body(), user_id=judged.user_id)


def _scope(requested: str | None, allowed: Any, supported: tuple[str, ...]) -> str:
    """requested ∩ the assertion's `scope` ∩ scopes_supported (requested: default the
    data-plane scopes), in canonical order; none left is invalid_scope."""
    asked = parse_scope(requested)
    if asked is None:
        raise errors.OAUTH_INVALID_SCOPE.oauth_error("scope names a scope not served here.")
    vouched_for = set(allowed.split()) if isinstance(allowed, str) else set()
    granted = [name for name in asked if name in vouched_for and name in supported]
    if not granted:
        raise errors.OAUTH_INVALID_SCOPE.oauth_error(
            "No requested scope is allowed by the ID-JAG's scope."
        )
    return " ".join(granted)


def _profile(claims: dict[str, Any]) -> dict[str, Any]:
    email, name = claims.get("email"), claims.get("name")
    verified_email = claims.get("email_verified") is True
    return {
        "email": email if isinstance(email, str) else None,
        "email_verified": verified_email if isinstance(email, str) else None,
        "name": name if isinstance(name, str) else None,
    }


def _workspace(user_id: str, workspace_id: str | None) -> str:
    """The workspace the token is bound to: the one named (the person must be a member),
    else the person's only one."""
    svc = services()
    if workspace_id is not None:
        if not ids.is_workspace_id(workspace_id):
            raise errors.OAUTH_INVALID_REQUEST.oauth_error(
                "workspace_id must be a workspace id (ws_…)."
            )
        if not svc.workspace_store.is_member(workspace_id, user_id):
            raise refused("The person is not a member of this workspace (workspace_id).")
        return workspace_id
    workspaces = svc.workspace_store.list_for_user(user_id)
    if len(workspaces) == 1:
        return workspaces[0].id
    if not workspaces:
        raise refused("The person is a member of no workspace.")
    raise errors.OAUTH_INVALID_REQUEST.oauth_error(
        "workspace_id is required: the person is a member of several workspaces."
    )
