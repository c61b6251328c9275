"""The `client_credentials` grant with a `private_key_jwt` assertion (RFC 6749 §4.4,
RFC 7523 §2.2 and §3): a service client's workspace token, no secret stored or sent.

The grant's domain half, Authlib's shape: `validate` (the assertion, then the scope, resource
and lifetime asked), then `issue` (the token); the registry's class
(`api/grants/client_credentials.py`) declares it and hands it the parameters. The assertion
is judged in one straight sequence: its header (alg pinned to RS256 or ES256, never the
header's word for which key), its unverified `iss` only to find the client (one GetItem), the
client's key by `kid`, the signature with that key's algorithm, then `iss` = `sub` = the
client, `aud` our issuer or the token endpoint, `exp` at most MAX_AHEAD ahead, and last its
`jti`, spent once (so that a refused assertion spends nothing).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from chalicelib import errors, ids
from chalicelib.access.scopes import ordered
from chalicelib.clock import Clock, epoch
from chalicelib.config import McpResource, canonical_resource
from chalicelib.errors import OAuthError
from chalicelib.events import model as events
from chalicelib.events.log import EventLog
from chalicelib.logs import logger
from chalicelib.replays import Replays
from chalicelib.service_clients.model import ALGORITHMS, ServiceClient
from chalicelib.service_clients.store import ServiceClientStore
from chalicelib.sessions.access_tokens import CLOCK_SKEW, TokenSigner
from chalicelib.workloads.issuers import IssuerKeys, UnknownKey

if TYPE_CHECKING:
    from jwt import PyJWK

ASSERTION_TYPE = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
MAX_AHEAD = 300  # seconds: an assertion expires at most this far ahead
DEFAULT_LIFETIME = 900
MIN_LIFETIME, MAX_LIFETIME = 60, 3600
MAX_JTI = 255


def refused(description: str) -> OAuthError:
    """401 `invalid_client`: the client did not authenticate (RFC 6749 §5.2)."""
    return errors.INVALID_CLIENT.oauth_error(description)


@dataclass(frozen=True)
class ValidatedRequest:
    client: ServiceClient
    scopes: list[str]
    audience: str | None  # an MCP resource we serve, or None: this service
    lifetime: int


class ClientCredentialsGrant:
    def __init__(
        self,
        clients: ServiceClientStore,
        replays: Replays,
        keys: IssuerKeys,
        signer: TokenSigner,
        events: EventLog,
        clock: Clock,
        issuer: str,
        resources: tuple[McpResource, ...],
    ):
        self._clients = clients
        self._replays = replays
        self._keys = keys
        self._signer = signer
        self._events = events
        self._clock = clock
        self._issuer = issuer
        self._resources = resources

    def validate(self, parameters: Mapping[str, Any]) -> ValidatedRequest:
        if "client_secret" in parameters:
            raise refused("Service clients authenticate with private_key_jwt: send no secret.")
        if parameters.get("client_assertion_type") != ASSERTION_TYPE:
            raise errors.OAUTH_INVALID_REQUEST.oauth_error(
                f"client_assertion_type must be {ASSERTION_TYPE}."
            )
        assertion = parameters.get("client_assertion")
        if not assertion:
            raise refused("client_assertion is required.")
        client = self._authenticated(assertion, parameters.get("client_id"))
        return ValidatedRequest(
            client,
            self._scopes(client, parameters.get("scope")),
            self._audience(parameters.get("resource")),
            self._lifetime(parameters.get("expires_in")),
        )

    def issue(self, request: ValidatedRequest) -> dict[str, Any]:
        client = request.client
        self._record(client)
        scope = " ".join(request.scopes)
        minted = self._signer.mint(
            client.id,
            audience=request.audience,
            extra={"client_id": client.id, "workspace_id": client.workspace_id, "scope": scope},
            lifetime=request.lifetime,
        )
        return {
            "access_token": minted.token,
            "token_type": "Bearer",
            "expires_in": minted.expires_in,
            "scope": scope,
        }

    def _authenticated(self, assertion: str, client_id: str | None) -> ServiceClient:
        import jwt

        try:
            header = jwt.get_unverified_header(assertion)
            unverified = jwt.decode(assertion, options={"verify_signature": False})
        except jwt.PyJWTError:
            raise refused("client_assertion is not a well-formed JWT.") from None
        algorithm = header.get("alg")
        if algorithm not in ALGORITHMS:  # `none`, HS256 (key confusion), anything else
            raise refused("client_assertion must be signed with RS256 or ES256.")
        claimed = unverified.get("iss")
        if not ids.is_service_client_id(claimed) or unverified.get("sub") != claimed:
            raise refused("client_assertion's iss and sub must both be the client id (scl_…).")
        if client_id is not None and client_id != claimed:
            raise refused("client_id differs from the assertion's iss.")
        assert isinstance(claimed, str)
        client = self._clients.get(claimed)
        if client is None:
            raise refused("No such service client.")
        key = self._key(client, algorithm, header.get("kid"))
        try:
            claims: dict[str, Any] = jwt.decode(
                assertion,
                key=key.key,
                algorithms=[algorithm],  # the one the key is for, pinned above
                audience=[self._issuer, self._issuer + "/v1/oauth/token"],
                issuer=client.id,
                leeway=CLOCK_SKEW,
                options={"require": ["exp", "iss", "sub", "aud", "jti"]},
            )
        except jwt.ExpiredSignatureError:
            raise refused("client_assertion has expired.") from None
        except jwt.InvalidAudienceError:
            raise refused("client_assertion's aud must be our issuer or token endpoint.") from None
        except jwt.InvalidSignatureError:
            raise refused("client_assertion's signature is not valid.") from None
        except jwt.PyJWTError as error:
            raise refused(f"client_assertion is not valid: {error}.") from None
        now = epoch(self._clock.now())
        expires, jti = claims["exp"], claims["jti"]
        if not isinstance(expires, int | float) or expires > now + MAX_AHEAD + CLOCK_SKEW:
            raise refused(f"client_assertion's exp must be at most {MAX_AHEAD} s ahead.")
        if not isinstance(jti, str) or not 0 < len(jti) <= MAX_JTI:
            raise refused(f"client_assertion's jti must be a string of 1 to {MAX_JTI} characters.")
        # Last: a refused assertion spends no jti; kept until the assertion could not pass.
        spent_until = int(expires) + CLOCK_SKEW
        if not self._replays.spend(client.id, jti, spent_until, self._clock.now()):
            raise refused("client_assertion was used before: its jti is single use.")
        return client

    def _key(self, client: ServiceClient, algorithm: str, kid: Any) -> PyJWK:
        import jwt

        if client.jwks is not None:
            candidates = [
                jwk
                for jwk in client.jwks
                if jwk["alg"] == algorithm and (kid is None or jwk["kid"] == kid)
            ]
            jwk = candidates[0] if len(candidates) == 1 else None
        elif isinstance(kid, str) and kid and client.jwks_uri is not None:
            try:
                # Cached per client and URI: at most one fetch per 30 s (issuers.py).
                jwk = self._keys.key(client.id, kid, jwks_uri=client.jwks_uri)
            except UnknownKey:
                jwk = None
        else:
            jwk = None
        if jwk is None:
            raise refused("No key of this client matches the assertion's kid and alg.")
        if jwk.get("kty") != ALGORITHMS[algorithm] or jwk.get("alg", algorithm) != algorithm:
            raise refused("The assertion's algorithm does not match its key.")
        try:
            return jwt.PyJWK(jwk, algorithm)
        except jwt.PyJWTError:
            raise refused("The client's key is not usable.") from None

    def _scopes(self, client: ServiceClient, scope: str | None) -> list[str]:
        if scope is None:
            return list(client.scopes)
        asked = scope.split()
        if not asked or not set(asked) <= set(client.scopes):
            raise errors.OAUTH_INVALID_SCOPE.oauth_error(
                "scope must name only scopes of the service client: " + " ".join(client.scopes)
            )
        return ordered(asked)

    def _audience(self, resource: str | None) -> str | None:
        if resource is None:
            return None
        served = {r.uri for r in self._resources}
        try:
            asked = canonical_resource(resource)
        except ValueError:
            asked = None
        if asked not in served:
            raise errors.INVALID_TARGET.oauth_error("resource is not an MCP resource served here.")
        return asked

    @staticmethod
    def _lifetime(expires_in: str | None) -> int:
        if expires_in is None:
            return DEFAULT_LIFETIME
        if not expires_in.isdigit() or not MIN_LIFETIME <= int(expires_in) <= MAX_LIFETIME:
            raise errors.OAUTH_INVALID_REQUEST.oauth_error(
                f"expires_in must be a whole number of seconds from {MIN_LIFETIME} to "
                f"{MAX_LIFETIME}."
            )
        return int(expires_in)

    def _record(self, client: ServiceClient) -> None:
        """`service_client.token_issued`, at most once per client and hour. Written before
        the token is handed out: no credential without its audit record (a failure: 503)."""
        logger.info("service client token", extra={"client_id": client.id})
        event = self._events.new(
            events.SERVICE_CLIENT_TOKEN_ISSUED,
            client.created_by,
            events.system(events.SERVICE_CLIENT),
            workspace_id=client.workspace_id,
            data={"clientId": client.id, "name": client.name},
        )
        if self._clients.token_event_due(client, self._clock.now(), [self._events.member(event)]):
            self._events.published(event)
