"""The MCP authorization server's flows: authorize, sign-in callback, consent, token, revoke.

At `/v1/oauth/authorize` every refusal is a `PageError`, shown and never redirected: before
the person has signed in, a redirect to the client's URI would make this origin an open
redirector (RFC 9700 §4.11.2), since anyone can be a client. Only after sign-in (the
provider refused, the person denied) do errors go back to the client (`Redirect` with
`error`, `state` and `iss`).

The token grants answer RFC 6749 errors (`OAuthError`). Like the login flows, they mint the
access token before they write, so a KMS failure (503) leaves the code or refresh token
unused. A grant is a refresh-token family of `chalicelib/sessions/refresh.py` bound to client,
resource, workspace and scope; its access tokens name it (`sid`), and the resource reads it
on every request (`grants.py`).

Consent is remembered (`consents.py`): after sign-in, a request that the person's remembered
consent covers (same client and resource, same or fewer scopes, a workspace they are still a
member of, an https redirect) goes straight back to the client with a code; `prompt=consent`
always asks. Every
revocation of a grant forgets its client's consent first, so a failure leaves the grant in
force to be revoked again, never a revoked grant with its consent still remembered.
"""

from __future__ import annotations

import hmac
import re
import secrets
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any, NoReturn
from urllib.parse import urlencode, urlsplit

from botocore.exceptions import ClientError

from chalicelib import errors, ids
from chalicelib.access.dpop import bound_key
from chalicelib.access.scopes import ALL_SCOPES, DATA_PLANE_SCOPES, ordered
from chalicelib.clock import Clock, epoch
from chalicelib.config import LoginProvider, McpResource, canonical_resource
from chalicelib.errors import OAuthError
from chalicelib.logs import logger
from chalicelib.oauth import browser, metadata
from chalicelib.oauth.clients import Client, ClientRejected, ClientStore
from chalicelib.oauth.codes import AuthorizationCode, CodeStore
from chalicelib.oauth.connected_apps import ConnectedApps
from chalicelib.oauth.consents import ConsentStore
from chalicelib.oauth.login_provider import LoginProviderClient, SignInFailed, s256
from chalicelib.oauth.pending import (
    CONSENTING,
    LIFETIME,
    SIGNING_IN,
    PendingAuthorization,
    PendingStore,
    new_request_id,
)
from chalicelib.sessions.access_tokens import MintedToken, TokenRejected, TokenSigner, TokenVerifier
from chalicelib.sessions.openid import IdTokenRejected, IdTokenVerifier
from chalicelib.sessions.refresh import (
    GRANT_CLIENT,
    REUSED,
    RefreshRejected,
    RefreshTokenStore,
    looks_like_refresh_token,
)
from chalicelib.sessions.successors import RefreshSuccessors
from chalicelib.sessions.users import UserStore
from chalicelib.table import commit, is_condition_failure
from chalicelib.workspaces.model import Workspace
from chalicelib.workspaces.store import WorkspaceStore

PKCE_CHALLENGE = re.compile(r"^[A-Za-z0-9._~-]{43,128}$")  # RFC 7636 §4.1 and §4.2 (S256 output)
MAX_STATE_LENGTH = 500
MAX_HINT_LENGTH = 255
OFFLINE_ACCESS = "offline_access"


class PageError(Exception):
    """Shown to the person in the browser as an error page; never redirected."""

    def __init__(self, status: int, title: str, message: str, code: str | None = None):
        super().__init__(message)
        self.status = status
        self.title = title
        self.message = message
        self.code = code  # shown small, for support


@dataclass(frozen=True)
class Redirect:
    location: str
    set_cookie: str | None = None


@dataclass(frozen=True)
class AuthorizationRequest:
    """What an authorization request asks, as the edge validated it (`AuthorizationQuery`)."""

    redirect_uri: str
    code_challenge: str
    resource: str  # one served here, canonical
    scopes: tuple[str, ...]  # in canonical order
    state: str | None = None
    login_hint: str | None = None
    ask_consent: bool = False


@dataclass(frozen=True)
class ConsentView:
    html_parameters: dict[str, Any]
    redirect_uri: str


@dataclass(frozen=True)
class IssuedTokens:
    access: MintedToken
    refresh_token: str | None = field(repr=False)  # None: the client's grant_types lack it
    scope: str

    def body(self) -> dict[str, Any]:
        body: dict[str, Any] = {
            "access_token": self.access.token,
            "token_type": "Bearer",
            "expires_in": self.access.expires_in,
        }
        if self.refresh_token is not None:
            body["refresh_token"] = self.refresh_token
        body["scope"] = self.scope
        return body


def invalid_grant(description: str) -> OAuthError:
    return errors.INVALID_GRANT.oauth_error(description)


def with_parameters(uri: str, parameters: dict[str, str | None]) -> str:
    present = {name: value for name, value in parameters.items() if value is not None}
    separator = "&" if urlsplit(uri).query else "?"
    return uri + separator + urlencode(present)


def refused_request(error: OAuthError) -> PageError:
    """An authorization request refused before sign-in: shown here, never redirected."""
    return PageError(
        error.status if error.status >= 500 else 400,
        "The application's request cannot be accepted",
        f"The application asked in a way we cannot accept: {error.description}",
        error.error,
    )


def refuse(problem: errors.Problem, description: str | None = None) -> NoReturn:
    raise refused_request(problem.oauth_error(description))


def parse_scope(requested: str | None) -> list[str] | None:
    """The requested scopes in canonical order; default the data-plane ones; None if unknown.

    `offline_access` (OpenID Connect's ask for a refresh token, which some MCP clients add)
    is ignored: whether a client gets refresh tokens is its `grant_types`' decision."""
    names = [name for name in (requested or "").split() if name != OFFLINE_ACCESS]
    if not names:
        return list(DATA_PLANE_SCOPES)
    if not set(names) <= set(ALL_SCOPES):
        return None
    return ordered(names)


class OAuthService:
    def __init__(
        self,
        *,
        issuer: str,
        resources: tuple[McpResource, ...],
        login: LoginProviderClient | None,
        clients: ClientStore,
        pending: PendingStore,
        codes: CodeStore,
        consents: ConsentStore,
        refresh_tokens: RefreshTokenStore,
        successors: RefreshSuccessors,
        signer: TokenSigner,
        verifier: TokenVerifier,
        id_tokens: IdTokenVerifier,
        users: UserStore,
        workspaces: WorkspaceStore,
        dynamodb: Any,
        clock: Clock,
        connected_apps: ConnectedApps | None = None,
    ):
        self._issuer = issuer
        self._resources = {resource.uri: resource for resource in resources}
        self._login = login
        self._clients = clients
        self._pending = pending
        self._codes = codes
        self._consents = consents
        self._refresh_tokens = refresh_tokens
        self._successors = successors
        self._signer = signer
        self._verifier = verifier
        self._id_tokens = id_tokens
        self._users = users
        self._workspaces = workspaces
        self._dynamodb = dynamodb
        self._clock = clock
        self._connected_apps = connected_apps
        self._secure = issuer.startswith("https://")

    # -- the browser's part ----------------------------------------------------------------

    def _back(self, redirect_uri: str, state: str | None, **outcome: str) -> Redirect:
        """To the client, with the outcome, its `state` and our `iss` (RFC 9207)."""
        return Redirect(
            with_parameters(redirect_uri, {**outcome, "state": state, "iss": self._issuer})
        )

    def served_resources(self) -> frozenset[str]:
        return frozenset(self._resources)

    def requesting_client(self, client_id: str, redirect_uri: str | None) -> Client:
        """The client of an authorization request, checked first: until its `redirect_uri`
        is one the client registered, nothing about the request can be trusted."""
        try:
            client = self._clients.find(client_id, self._clock.now())
        except ClientRejected as rejected:
            raise PageError(
                400,
                "Unknown application",
                f"We could not tell which application sent you here. {rejected.description}",
                errors.OAUTH_INVALID_REQUEST.code,
            ) from None
        if not redirect_uri or not client.redirect_allowed(redirect_uri):
            raise PageError(
                400,
                "Unknown return address",
                "The application asked to send you back to an address it has not registered"
                " (redirect_uri), so we stopped here.",
                errors.OAUTH_INVALID_REQUEST.code,
            )
        return client

    def authorize(
        self, client: Client, asked: AuthorizationRequest, cookie: str | None
    ) -> Redirect:
        """On to the login provider, for a request `requesting_client` and the edge's model
        accepted. Nothing is redirected before the person has signed in (RFC 9700 §4.11.2):
        anyone can be a client, so an error sent to its redirect URI would make this origin
        an open redirector to any page an attacker lists there."""
        now = self._clock.now()
        if self._login is None:
            logger.error("MCP authorization without LOGIN_PROVIDER")
            refuse(errors.SERVER_ERROR)
        hint = asked.login_hint
        if hint is not None and len(hint) > MAX_HINT_LENGTH:
            hint = None  # a hint, not a rule: a long one is ignored, not refused
        secret = browser.secret_from(cookie, self._secure) or browser.new_secret()
        pending = PendingAuthorization(
            request_id=new_request_id(),
            client_id=client.client_id,
            client_name=client.client_name,
            redirect_uri=asked.redirect_uri,
            code_challenge=asked.code_challenge,
            resource=asked.resource,
            scope=" ".join(asked.scopes),
            state=asked.state,
            ask_consent=asked.ask_consent,
            nonce=secrets.token_urlsafe(16),
            binding_hash=browser.binding_hash(secret),
            expires=epoch(now + LIFETIME),
        )
        location = self._login.authorization_url(
            state=pending.request_id,
            nonce=pending.nonce,
            verifier=browser.login_verifier(secret, pending.request_id),
            login_hint=hint,
        )
        self._pending.create(pending)
        return Redirect(location, browser.set_cookie(secret, self._secure))

    def _bound_pending(
        self, request_id: str | None, cookie: str | None, status: str
    ) -> tuple[PendingAuthorization, str]:
        """The pending authorization this browser started, in the expected step."""
        pending = self._pending.get(request_id or "", self._clock.now())
        if pending is None:
            raise PageError(
                400, "This link has expired",
                "Connecting the application took too long, or this step was already finished.",
            )
        secret = browser.secret_from(cookie, self._secure)
        if secret is None or not browser.bound(secret, pending.binding_hash):
            raise PageError(
                403,
                "Another browser started this",
                "Connecting this application started in another browser, or this browser's"
                " cookies were cleared since. Finish where you started, or start again.",
            )
        if pending.status != status:
            raise PageError(400, "Sign-in already used", "This step was already completed.")
        return pending, secret

    def callback(self, parameters: dict[str, str], cookie: str | None) -> Redirect:
        """The login provider's answer: verified, then on to the consent page."""
        pending, secret = self._bound_pending(parameters.get("state"), cookie, SIGNING_IN)
        assert self._login is not None  # a pending authorization exists only with one
        if not self._login.answered_by_provider(parameters.get("iss")):
            # RFC 9207: an answer from another provider than the one we sent the user to, or
            # without the `iss` that ours always sends: a mix-up; the pending one stays.
            raise PageError(
                400, "Sign-in failed", "The answer does not come from the login provider (iss)."
            )
        if "error" in parameters or "code" not in parameters:
            self._pending.discard(pending)
            return self._back(
                pending.redirect_uri, pending.state, error=errors.ACCESS_DENIED.code,
                error_description="The sign-in did not complete.",
            )
        try:
            id_token = self._login.redeem(
                parameters["code"], browser.login_verifier(secret, pending.request_id)
            )
            identity = self._id_tokens.verify(id_token, nonce=pending.nonce)
        except (SignInFailed, IdTokenRejected) as failed:
            logger.warning("MCP sign-in refused", extra={"client_id": pending.client_id})
            self._pending.discard(pending)
            description = getattr(failed, "description", "The sign-in was refused.")
            return self._back(
                pending.redirect_uri, pending.state, error=errors.ACCESS_DENIED.code,
                error_description=description,
            )
        user_id = self._users.sign_in(identity, self._clock.now())
        try:
            self._pending.signed_in(pending, user_id)
        except ClientError as error:
            if not is_condition_failure(error):
                raise
            raise PageError(
                400, "Sign-in already used", "This step was already completed."
            ) from None
        remembered = self._remembered_workspace(replace(pending, user_id=user_id))
        if remembered is not None:
            return self._grant(replace(pending, status=CONSENTING, user_id=user_id), remembered)
        return Redirect(
            self._issuer + metadata.CONSENT_PATH + "?" + urlencode({"consent": pending.request_id})
        )

    def consent(self, request_id: str | None, cookie: str | None) -> ConsentView:
        pending, secret = self._bound_pending(request_id, cookie, CONSENTING)
        assert pending.user_id is not None
        label = self._users.label(pending.user_id) or pending.user_id
        workspaces: list[Workspace] = self._workspaces.list_for_user(pending.user_id)
        consent = self._consents.find(pending.user_id, pending.client_id)
        return ConsentView(
            {
                "issuer": self._issuer,
                "action": self._issuer + metadata.CONSENT_PATH,
                "consent": pending.request_id,
                "csrf": browser.csrf_token(secret, pending.request_id),
                "client_name": pending.client_name,
                "client_id": pending.client_id,
                "redirect_uri": pending.redirect_uri,
                "resource": pending.resource,
                "scopes": pending.scope.split(),
                "workspaces": sorted(workspaces, key=lambda w: w.name.lower()),
                "selected": consent.workspace_id if consent else None,
                "document_host": _document_host(pending.client_id),
                "user_label": label,
            },
            pending.redirect_uri,
        )

    def decide(self, form: dict[str, str], cookie: str | None) -> Redirect:
        """The consent form: CSRF-checked, then a code (allow) or access_denied (deny)."""
        pending, secret = self._bound_pending(form.get("consent"), cookie, CONSENTING)
        if not browser.csrf_matches(secret, pending.request_id, form.get("csrf")):
            raise PageError(403, "Request refused", "The consent form is not valid; try again.")
        assert pending.user_id is not None
        decision = form.get("decision")
        if decision == "deny":
            if not self._pending.discard(pending):
                raise PageError(400, "Already decided", "This authorization was already decided.")
            return self._back(
                pending.redirect_uri, pending.state, error=errors.ACCESS_DENIED.code,
                error_description="The user denied access.",
            )
        if decision != "allow":
            raise PageError(400, "Request refused", "Choose Allow or Deny.")
        workspace_id = form.get("workspace_id", "")
        if not ids.is_workspace_id(workspace_id) or not self._workspaces.is_member(
            workspace_id, pending.user_id
        ):
            raise PageError(403, "Not a member", "You are not a member of that workspace.")
        return self._grant(pending, workspace_id, consented=True)

    def _remembered_workspace(self, pending: PendingAuthorization) -> str | None:
        """The workspace of the person's remembered consent, if it covers this request."""
        assert pending.user_id is not None
        if pending.ask_consent or urlsplit(pending.redirect_uri).scheme != "https":
            # RFC 8252 §8.6: without proof of the client's identity, a request is handled as
            # if never approved. Any program on the computer can listen on a loopback port or
            # claim an app's scheme; only an https redirect delivers the code to its host.
            return None
        consent = self._consents.find(pending.user_id, pending.client_id)
        if consent is None or not consent.covers(pending.resource, pending.scope.split()):
            return None
        if not self._workspaces.is_member(consent.workspace_id, pending.user_id):
            return None
        return consent.workspace_id

    def _grant(
        self, pending: PendingAuthorization, workspace_id: str, consented: bool = False
    ) -> Redirect:
        """The code, back to the client; the consent remembered when it was just given."""
        assert pending.user_id is not None
        now = self._clock.now()
        code, store_code = self._codes.new(
            client_id=pending.client_id,
            redirect_uri=pending.redirect_uri,
            code_challenge=pending.code_challenge,
            resource=pending.resource,
            scope=pending.scope,
            user_id=pending.user_id,
            workspace_id=workspace_id,
            now=now,
        )
        members = [self._pending.consume(pending), store_code]
        if consented:
            members.append(
                self._consents.remember(
                    user_id=pending.user_id, client_id=pending.client_id,
                    workspace_id=workspace_id, resource=pending.resource,
                    scope=pending.scope, now=now, client_name=pending.client_name,
                )
            )
        keep_client = self._clients.extend(pending.client_id, now)
        if keep_client is not None:
            members.append(keep_client)
        try:
            # Commit point: the authorization under way, deleted only while it awaits
            # consent (of two decisions, one passes); the code and the rest follow it.
            commit(self._dynamodb, members[0], members[1:])
        except ClientError as error:
            if not is_condition_failure(error):
                raise
            raise PageError(
                400, "Already decided", "This authorization was already decided."
            ) from None
        logger.info(
            "MCP authorization granted",
            extra={"user_id": pending.user_id, "client_id": pending.client_id,
                   "workspace_id": workspace_id, "consent": "given" if consented else "remembered"},
        )
        return self._back(pending.redirect_uri, pending.state, code=code)

    # -- the token endpoint ----------------------------------------------------------------

    def _mint(self, user_id: str, grant: dict[str, str], grant_id: str) -> MintedToken:
        return self._signer.mint(
            user_id,
            audience=grant["resource"],
            extra={
                "client_id": grant[GRANT_CLIENT],
                "scope": grant["scope"],
                "workspace_id": grant["workspaceId"],
                "sid": grant_id,
            },
        )

    def served_scopes(self) -> tuple[str, ...]:
        """`scopes_supported` of the metadata: what any MCP token may carry."""
        return tuple(ALL_SCOPES)

    def client(self, client_id: str) -> Client:
        """A client registered here (or its metadata document), else ClientRejected."""
        return self._clients.find(client_id, self._clock.now())

    def issue_by_assertion(
        self, user_id: str, client_id: str, resource: str, scope: str, workspace_id: str
    ) -> IssuedTokens:
        """An MCP access token for `resource` and `client_id`, as the code grant's (its grant
        named in `sid`, so the decision reads it), without a refresh token: an assertion
        grant (ID-JAG) is asked for again when it runs out."""
        now = self._clock.now()
        grant = {
            GRANT_CLIENT: client_id,
            "resource": resource,
            "scope": scope,
            "workspaceId": workspace_id,
        }
        grant_id = ids.ulid(now)
        access = self._mint(user_id, grant, grant_id)
        self._refresh_tokens.open_grant(
            user_id, grant_id, grant, epoch(now) + access.expires_in, now
        )
        logger.info(
            "MCP token issued by assertion",
            extra={"user_id": user_id, "client_id": client_id, "grant_id": grant_id},
        )
        return IssuedTokens(access, None, scope)

    def redeem_code(self, parameters: dict[str, str]) -> IssuedTokens:
        now = self._clock.now()
        code = self._codes.find(parameters.get("code", ""))
        if code is None:
            raise invalid_grant("The authorization code is not valid.")
        if code.used:
            self._code_reused(code, now)
        if code.expires_at <= epoch(now):
            self._codes.spend(code, now)
            raise invalid_grant("The authorization code has expired.")
        problem = self._code_problem(code, parameters)
        if problem is not None:
            self._codes.spend(code, now)  # a code is presented once, right or wrong
            raise problem
        client = self._client_of(code.client_id, now)
        may_refresh = client.may_refresh
        grant = {
            GRANT_CLIENT: code.client_id,
            "resource": code.resource,
            "scope": code.scope,
            "workspaceId": code.workspace_id,
        }
        grant_id = ids.ulid(now)
        access = self._mint(code.user_id, grant, grant_id)
        listed, created = (
            self._connected_apps.created(code.user_id, grant_id, grant, client.client_name, now)
            if self._connected_apps is not None
            else ([], None)
        )
        try:
            refresh_token = self._refresh_tokens.start_family(
                code.user_id, now, family_id=grant_id, grant=grant,
                together_with=[self._codes.consume(code, grant_id, now), *listed],
            )
        except ClientError as error:
            if not is_condition_failure(error):
                raise
            # Redeemed by another request since our read: the same reuse, a moment later.
            again = self._codes.find(parameters.get("code", ""))
            self._code_reused(again or code, now)
        if self._connected_apps is not None:
            self._connected_apps.published(created)
        logger.info(
            "MCP tokens issued",
            extra={"user_id": code.user_id, "client_id": code.client_id, "grant_id": grant_id},
        )
        # The grant is a refresh-token family either way (its access tokens name it); a
        # client without refresh_token in its grant_types never sees the family's token.
        return IssuedTokens(access, refresh_token if may_refresh else None, code.scope)

    def _client_of(self, client_id: str, now: datetime) -> Client:
        """The client as it describes itself now (its registration or metadata document);
        one registered with `dpop_bound_access_tokens` is refused without a DPoP proof."""
        try:
            client = self._clients.find(client_id, now)
        except ClientRejected as rejected:
            raise errors.UNAUTHORIZED_CLIENT.oauth_error(rejected.description) from None
        if client.dpop_bound_access_tokens and bound_key() is None:
            raise errors.OAUTH_INVALID_DPOP_PROOF.oauth_error(
                "This client registered dpop_bound_access_tokens: send a DPoP proof."
            )
        return client

    def _code_problem(
        self, code: AuthorizationCode, parameters: dict[str, str]
    ) -> OAuthError | None:
        if parameters.get("client_id") != code.client_id:
            return invalid_grant("The authorization code was issued to another client.")
        if parameters.get("redirect_uri") != code.redirect_uri:
            return invalid_grant("redirect_uri differs from the authorization request's.")
        verifier = parameters.get("code_verifier", "")
        if not PKCE_CHALLENGE.fullmatch(verifier) or not hmac.compare_digest(
            s256(verifier), code.code_challenge
        ):
            return invalid_grant("The code_verifier does not match the code_challenge.")
        resource = parameters.get("resource")
        if resource is not None and canonical_resource(resource) != code.resource:
            return errors.INVALID_TARGET.oauth_error("resource differs from the authorization's.")
        return None

    def _code_reused(self, code: AuthorizationCode, now: datetime) -> NoReturn:
        if code.grant_id is None:
            # Spent by a refused redemption (wrong verifier, client, redirect URI, expired):
            # nothing was issued, so nothing is revoked; say so rather than mislead.
            raise invalid_grant(
                "The authorization code was already presented in a refused request, which"
                " spent it; nothing was issued. Start a new authorization."
            )
        logger.warning(
            "authorization code reused; revoking its grant",
            extra={"client_id": code.client_id, "grant_id": code.grant_id},
        )
        self._consents.forget(code.user_id, code.client_id)
        self._refresh_tokens.revoke_family(code.grant_id, now, reason="code_reuse")
        raise invalid_grant(
            "The authorization code was already used; what it issued has been revoked."
        )

    def refresh(self, parameters: dict[str, str]) -> IssuedTokens:
        now = self._clock.now()
        presented = parameters.get("refresh_token", "")
        try:
            current = self._refresh_tokens.find(presented, now)
        except RefreshRejected as rejected:
            if rejected.description == REUSED and rejected.family_id is not None:
                # The store revoked the reused token's grant: its consent goes with it.
                self._consents.forget_grant(rejected.family_id)
            raise invalid_grant(rejected.description) from None
        grant = dict(current.grant or {})
        if not grant:  # a sign-in of this service itself: good at /v1/auth/refresh only
            raise invalid_grant("The refresh token is not valid.")
        if parameters.get("client_id") != grant[GRANT_CLIENT]:
            raise invalid_grant("The refresh token was issued to another client.")
        if not self._client_of(grant[GRANT_CLIENT], now).may_refresh:
            raise errors.UNAUTHORIZED_CLIENT.oauth_error(
                "This client's grant_types do not include refresh_token."
            )
        resource = parameters.get("resource")
        if resource is not None and canonical_resource(resource) != grant["resource"]:
            raise errors.INVALID_TARGET.oauth_error("resource differs from the grant's.")
        scope = grant["scope"]
        asked = [name for name in parameters.get("scope", "").split() if name != OFFLINE_ACCESS]
        if asked:
            narrowed = parse_scope(" ".join(asked))
            if narrowed is None or not set(narrowed) <= set(scope.split()):
                raise errors.OAUTH_INVALID_SCOPE.oauth_error(
                    "scope may only narrow the granted scope."
                )
            scope = " ".join(narrowed)
        if not self._workspaces.is_member(grant["workspaceId"], current.user_id):
            raise invalid_grant("You are no longer a member of the granted workspace.")
        # As at /v1/auth/refresh: the successor is derived from the presented token, so a
        # client retrying a refresh whose answer it lost gets it again (sessions/refresh.py).
        successor = self._successors.successor_of(presented)
        access = self._mint(current.user_id, {**grant, "scope": scope}, current.family_id)
        self._refresh_tokens.rotate(current, successor, now)
        return IssuedTokens(access, successor, scope)

    def revoke(self, parameters: dict[str, str]) -> None:
        """RFC 7009: revokes the grant of a refresh or access token. Its holder may always
        end it: without `client_id` the token alone suffices (a public client has no other
        proof of who it is); with a `client_id` that is not the token's, nothing is revoked.
        Unknown tokens, and tokens of other clients, are answered the same (200)."""
        token = parameters.get("token", "")
        client_id = parameters.get("client_id")
        now = self._clock.now()
        grant_id: str | None = None
        if looks_like_refresh_token(token):
            try:
                found = self._refresh_tokens.find(token, now)
            except RefreshRejected:
                return  # unknown, expired, revoked, or a reuse that just revoked it
            if found.grant and client_id in (None, found.grant.get(GRANT_CLIENT)):
                grant_id = found.family_id
        else:
            for resource in self._resources:
                try:
                    claims = self._verifier.verify(token, audience=resource)
                except TokenRejected:
                    continue
                if client_id in (None, claims.get("client_id")) and isinstance(
                    claims.get("sid"), str
                ):
                    grant_id = claims["sid"]
                break
        if grant_id is not None:
            self._consents.forget_grant(grant_id)
            self._refresh_tokens.revoke_family(grant_id, now, reason="revoked")
            logger.info("MCP grant revoked", extra={"client_id": client_id, "grant_id": grant_id})


def _document_host(client_id: str) -> str | None:
    """The host of a client metadata document's URL (None for a registered client)."""
    if not client_id.startswith("https://"):
        return None
    return urlsplit(client_id).hostname


def login_client(
    provider: LoginProvider | None, issuer: str, transport: Any
) -> LoginProviderClient | None:
    if provider is None:
        return None
    return LoginProviderClient(provider, issuer + metadata.CALLBACK_PATH, transport)
