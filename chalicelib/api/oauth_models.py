"""The wire shapes of the MCP authorization server (`api/oauth.py`, the grants in
`api/grants/`): client metadata, the browser steps, the token endpoint's forms (one per
grant), revocation and metadata documents."""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    RootModel,
    Strict,
    ValidationInfo,
    WithJsonSchema,
    model_validator,
)

from chalicelib import errors
from chalicelib.access.scopes import ALL_SCOPES
from chalicelib.api.sessions_models import REFRESH_GRANT, TokenExchangeForm
from chalicelib.api.wire import (
    ANY_TEXT,
    WORKSPACE_ID,
    Invalid,
    OAuthRequest,
    Query,
    RefusedValue,
    absent_or,
)
from chalicelib.config import canonical_resource
from chalicelib.oauth import clients
from chalicelib.oauth.service import (
    MAX_STATE_LENGTH,
    OFFLINE_ACCESS,
    PKCE_CHALLENGE,
    AuthorizationRequest,
    parse_scope,
)
from chalicelib.service_clients import grant


def _redirect_uris(value: Any) -> tuple[str, ...]:
    try:
        return clients.check_redirect_uris(value)
    except clients.InvalidClientMetadata as invalid:
        raise RefusedValue(errors.INVALID_REDIRECT_URI, invalid.description) from None


def _client_name(value: Any) -> str:
    name = clients.client_name(value)
    if name is None:
        raise ValueError("not a name")
    return name


def _with_code_grant(grant_types: list[str]) -> list[str]:
    if "authorization_code" not in grant_types:
        raise ValueError("no authorization_code")
    return grant_types


_REDIRECT_URIS = f"redirect_uris must list 1 to {clients.MAX_REDIRECT_URIS} URIs."


# The fields in the order registration checks them (the first refused answers). A redirect
# URI's rules are `clients.check_redirect_uris`, which a Client ID Metadata Document's are
# held to as well.
class ClientMetadata(OAuthRequest):
    """RFC 7591 client metadata; other metadata is ignored. A redirect URI returns to an app:
    https, a loopback http address (any port), or an app's own scheme; no fragment."""

    redirect_uris: Annotated[
        tuple[str, ...],
        BeforeValidator(_redirect_uris),
        WithJsonSchema(
            {
                "type": "array",
                "minItems": 1,
                "maxItems": clients.MAX_REDIRECT_URIS,
                "items": {"type": "string", "format": "uri", "maxLength": clients.MAX_URI_LENGTH},
            }
        ),
    ]
    token_endpoint_auth_method: Annotated[
        Literal["none"],
        Invalid(
            errors.INVALID_CLIENT_METADATA,
            "Only public clients are registered: token_endpoint_auth_method none.",
        ),
    ] = "none"
    application_type: Annotated[
        Literal["web", "native"],
        Invalid(errors.INVALID_CLIENT_METADATA, "application_type must be web or native."),
    ] = "native"
    grant_types: Annotated[
        list[Literal["authorization_code", "refresh_token"]],
        Field(min_length=1),
        AfterValidator(_with_code_grant),
        WithJsonSchema(
            {
                "type": "array",
                "items": {"enum": ["authorization_code", "refresh_token"]},
                "contains": {"const": "authorization_code"},
            }
        ),
        Invalid(
            errors.INVALID_CLIENT_METADATA,
            "grant_types must include authorization_code, and at most refresh_token too.",
        ),
    ] = ["authorization_code"]  # RFC 7591 §2
    # RFC 9449 §5.2: true, and every token request of the client must carry a DPoP proof.
    dpop_bound_access_tokens: Annotated[
        bool,
        Strict(),  # JSON true or false only: no "true", 1 or "yes"
        Invalid(errors.INVALID_CLIENT_METADATA, "dpop_bound_access_tokens must be a boolean."),
    ] = False
    response_types: Annotated[
        list[Literal["code"]],
        Field(min_length=1, max_length=1),
        Invalid(errors.INVALID_CLIENT_METADATA, 'response_types must be ["code"].'),
    ] = ["code"]
    # Trimmed; sent, even as null, it must be a name.
    client_name: Annotated[
        str | None,
        BeforeValidator(_client_name),
        absent_or({"type": "string", "minLength": 1, "maxLength": clients.MAX_NAME_LENGTH}),
        Invalid(
            errors.INVALID_CLIENT_METADATA,
            f"client_name must be 1 to {clients.MAX_NAME_LENGTH} printable characters.",
        ),
    ] = None

    @model_validator(mode="before")
    @classmethod
    def _redirect_uris_required(cls, data: Any) -> Any:
        """Without redirect_uris, RFC 7591's invalid_redirect_uri (not invalid_request)."""
        if isinstance(data, dict) and "redirect_uris" not in data:
            raise RefusedValue(errors.INVALID_REDIRECT_URI, _REDIRECT_URIS)
        return data


def _described(description: str) -> WithJsonSchema:
    return absent_or({"type": "string", "description": description})


class BrowserStep(BaseModel):
    """A browser step's parameters (the provider's answer, the consent page and form):
    strings as sent, others ignored. Nothing here refuses: each refusal needs the pending
    authorization first (expired, another browser, the CSRF token), so the flow checks
    these in that order and answers an error page (`OAuthService`)."""

    model_config = ConfigDict(frozen=True)

    def parameters(self) -> dict[str, str]:
        return self.model_dump(exclude_none=True)


class CallbackQuery(BrowserStep):
    """The login provider's answer (RFC 6749 §4.1.2, RFC 9207's `iss`)."""

    state: Annotated[str | None, _described("The pending authorization's id.")] = None
    iss: Annotated[str | None, _described("The provider's issuer (RFC 9207).")] = None
    code: ANY_TEXT = None
    error: ANY_TEXT = None
    error_description: ANY_TEXT = None


class ConsentQuery(BrowserStep):
    consent: Annotated[str | None, _described("The pending authorization's id.")] = None


class ConsentForm(BrowserStep):
    """The consent page's form."""

    consent: Annotated[str | None, _described("The pending authorization's id.")] = None
    csrf: ANY_TEXT = None
    # Checked after the CSRF token (in this order): anything else is "Choose Allow or Deny".
    decision: Annotated[
        str | None, WithJsonSchema({"type": "string", "enum": ["allow", "deny"]})
    ] = None
    # With allow: one of the person's workspaces (checked after the decision).
    workspace_id: Annotated[str | None, WithJsonSchema(WORKSPACE_ID)] = None


CODE_GRANT = "authorization_code"
CLIENT_CREDENTIALS_GRANT = "client_credentials"
TOKEN_GRANTS = (CODE_GRANT, REFRESH_GRANT)


# The fields in the order the endpoint checks them (the first refused answers).
class AuthorizationCodeGrant(OAuthRequest):
    """RFC 6749 §4.1.3, with PKCE (RFC 7636 §4.5) and RFC 8707's `resource`."""

    grant_type: Literal["authorization_code"]
    client_id: Annotated[str, Field(min_length=1)]
    code: Annotated[str, Field(min_length=1)]
    redirect_uri: Annotated[str, Field(min_length=1)]
    code_verifier: Annotated[str, Field(min_length=1)]
    resource: ANY_TEXT = None


class RefreshTokenGrant(OAuthRequest):
    """RFC 6749 §6, with RFC 8707's `resource`; `scope` may only narrow the grant's."""

    grant_type: Literal["refresh_token"]
    client_id: Annotated[str, Field(min_length=1)]
    refresh_token: Annotated[str, Field(min_length=1)]
    resource: ANY_TEXT = None
    scope: ANY_TEXT = None


class ClientCredentialsForm(OAuthRequest):
    """RFC 6749 §4.4 for a service client, authenticated by a `private_key_jwt` assertion
    (RFC 7523 §2.2); `resource` (RFC 8707) names an MCP resource served here."""

    grant_type: Literal["client_credentials"]
    client_assertion_type: Literal["urn:ietf:params:oauth:client-assertion-type:jwt-bearer"]
    client_assertion: Annotated[str, Field(min_length=1)]
    client_id: ANY_TEXT = None
    scope: ANY_TEXT = None
    resource: ANY_TEXT = None
    expires_in: Annotated[
        str | None,
        WithJsonSchema(
            {
                "type": "string",
                "pattern": "^[0-9]+$",
                "default": str(grant.DEFAULT_LIFETIME),
                "description": f"Seconds, from {grant.MIN_LIFETIME} to {grant.MAX_LIFETIME}.",
            }
        ),
    ] = None


class TokenForm(
    RootModel[
        Annotated[AuthorizationCodeGrant | RefreshTokenGrant, Field(discriminator="grant_type")]
    ]
):
    """`POST /v1/oauth/token`'s form: one grant's, by its `grant_type`."""

    @model_validator(mode="before")
    @classmethod
    def _client_then_grant_type(cls, data: Any) -> Any:
        """The endpoint's order, which a tagged union (its tag first) cannot state: a client
        secret is refused (clients here are public), then a missing client_id, then a grant
        type it does not serve (missing or unknown alike)."""
        if isinstance(data, dict):
            if "client_secret" in data:
                raise RefusedValue(errors.INVALID_CLIENT)
            if "client_id" not in data:
                raise RefusedValue(errors.OAUTH_INVALID_REQUEST, "client_id is required.")
            if data.get("grant_type") not in TOKEN_GRANTS:
                raise RefusedValue(
                    errors.UNSUPPORTED_GRANT_TYPE,
                    "This grant_type is not served: see grant_types_supported in the metadata.",
                )
        return data


JWT_BEARER_GRANT = "urn:ietf:params:oauth:grant-type:jwt-bearer"  # RFC 7523 §2.1
ID_JAG_TYPE = "oauth-id-jag+jwt"  # an Identity Assertion JWT Authorization Grant's `typ`
ID_JAG_PROFILE = "urn:ietf:params:oauth:grant-profile:id-jag"


# The fields in the order the endpoint checks them (the first refused answers).
class JwtBearerForm(OAuthRequest):
    """RFC 7523 §2.1: a workload's JWT (judged by the workspace's trust policies) or an
    enterprise IdP's ID-JAG (its `typ` oauth-id-jag+jwt), for a token of one workspace."""

    grant_type: Literal["urn:ietf:params:oauth:grant-type:jwt-bearer"]
    assertion: Annotated[str, Field(min_length=1)]
    workspace_id: ANY_TEXT = None
    scope: ANY_TEXT = None
    resource: ANY_TEXT = None
    client_id: ANY_TEXT = None


class TokenEndpointForm(
    RootModel[
        Annotated[
            AuthorizationCodeGrant
            | RefreshTokenGrant
            | TokenExchangeForm
            | JwtBearerForm
            | ClientCredentialsForm,
            Field(discriminator="grant_type"),
        ]
    ]
):
    """`POST /v1/oauth/token`'s form: one grant's, by its `grant_type` (the grants of
    `grant_types_supported`)."""


class RevocationForm(OAuthRequest):
    """RFC 7009."""

    token: Annotated[str, Field(min_length=1)]
    token_type_hint: ANY_TEXT = None
    client_id: ANY_TEXT = None


class Metadata(RootModel[dict[str, Any]]):
    """An RFC 8414, RFC 9728 or RFC 7591 metadata document."""


class AccessToken(RootModel[dict[str, Any]]):
    """An RFC 6749 §5.1 token response."""



_SPACE = "".join(f"\\u{ord(c):04x}" for c in map(chr, range(0x10000)) if c.isspace())
_SCOPES = "|".join(re.escape(s) for s in (*ALL_SCOPES, OFFLINE_ACCESS))


def _served(value: str, info: ValidationInfo) -> str:
    """A resource served here (the validation's context names them), canonical."""
    resource = canonical_resource(value)
    if resource not in (info.context or {}).get("resources", ()):
        raise ValueError("not served here")
    return resource


def _known_scopes(value: str | None) -> str | None:
    if parse_scope(value) is None:
        raise ValueError("unknown scope")
    return value


class AuthorizationQuery(Query):
    """The authorization request (RFC 6749 §4.1.1, RFC 7636, RFC 8707), its parameters in
    the order they are checked (the first refused answers, on our error page: never
    redirected). `client_id` and `redirect_uri` are checked before this model, against the
    client's registration (`OAuthService.requesting_client`); a repeated parameter before
    that (a mapping cannot show one); an absent parameter is refused like a wrong one."""

    client_id: Annotated[str, Field(min_length=1)]
    redirect_uri: Annotated[str, Field(min_length=1)]
    state: Annotated[
        Annotated[str, Field(max_length=MAX_STATE_LENGTH)] | None,
        Invalid(errors.OAUTH_INVALID_REQUEST, "state is too long."),
    ] = None
    response_type: Annotated[Literal["code"], Invalid(errors.UNSUPPORTED_RESPONSE_TYPE)]
    code_challenge_method: Annotated[
        Literal["S256"],
        Invalid(
            errors.OAUTH_INVALID_REQUEST, "PKCE is required, with code_challenge_method S256."
        ),
    ]
    code_challenge: Annotated[
        str,
        Field(pattern=PKCE_CHALLENGE.pattern),
        Invalid(errors.OAUTH_INVALID_REQUEST, "code_challenge must be an S256 challenge."),
    ]
    # One of MCP_RESOURCES (its scheme and host in any case): validated with them as context.
    resource: Annotated[
        str,
        Field(min_length=1),
        AfterValidator(_served),
        Invalid(errors.INVALID_TARGET, "resource must name an MCP server served here."),
    ]
    # Space-separated scope names, any whitespace Python's `str.split` splits on.
    scope: Annotated[
        str | None,
        AfterValidator(_known_scopes),
        Invalid(errors.OAUTH_INVALID_SCOPE),
        WithJsonSchema(
            {"type": "string", "pattern": rf"^[{_SPACE}]*(?:(?:{_SCOPES})(?:[{_SPACE}]+|$))*$"}
        ),
    ] = None
    # Longer than 255 characters, ignored.
    login_hint: str | None = None
    # `consent`: ask for consent even when the person already gave it (OpenID Connect);
    # other values are ignored.
    prompt: Annotated[
        str | None,
        WithJsonSchema(
            {
                "type": "string",
                "examples": ["consent"],
                "description": "`consent`: ask even where a consent is remembered; "
                "other values are ignored.",
            }
        ),
    ] = None

    @model_validator(mode="before")
    @classmethod
    def _absent_as_wrong(cls, data: Any) -> Any:
        """An absent parameter is refused with the error of a wrong one (no response_type:
        unsupported_response_type), so each required one absent is validated as null."""
        if isinstance(data, dict):
            required = (n for n, info in cls.model_fields.items() if info.is_required())
            return {**dict.fromkeys(required), **data}
        return data

    def request(self) -> AuthorizationRequest:
        return AuthorizationRequest(
            redirect_uri=self.redirect_uri,
            code_challenge=self.code_challenge,
            resource=self.resource,
            scopes=tuple(parse_scope(self.scope) or ()),
            state=self.state,
            login_hint=self.login_hint,
            ask_consent=self.prompt == "consent",
        )
