"""Discovery: the authorization server's metadata (RFC 8414) and each resource's (RFC 9728)."""

from __future__ import annotations

from typing import Any

from chalicelib.access.scopes import ALL_SCOPES, DATA_PLANE_SCOPES
from chalicelib.config import McpResource

AUTHORIZE_PATH = "/v1/oauth/authorize"
TOKEN_PATH = "/v1/oauth/token"
REGISTER_PATH = "/v1/oauth/register"
REVOKE_PATH = "/v1/oauth/revoke"
CALLBACK_PATH = "/v1/oauth/callback"
CONSENT_PATH = "/v1/oauth/consent"
JWKS_PATH = "/.well-known/jwks.json"


ID_JAG_PROFILE = "urn:ietf:params:oauth:grant-profile:id-jag"


def authorization_server(issuer: str, grant_types: list[str]) -> dict[str, Any]:
    """RFC 8414 metadata; `grant_types` are the token endpoint's (its registered grants)."""
    return {
        "issuer": issuer,
        "authorization_endpoint": issuer + AUTHORIZE_PATH,
        "token_endpoint": issuer + TOKEN_PATH,
        "registration_endpoint": issuer + REGISTER_PATH,
        "revocation_endpoint": issuer + REVOKE_PATH,
        "jwks_uri": issuer + JWKS_PATH,
        "response_types_supported": ["code"],
        "response_modes_supported": ["query"],
        "grant_types_supported": grant_types,
        # Enterprise-managed authorization: the JWT bearer grant takes ID-JAGs.
        "authorization_grant_profiles_supported": [ID_JAG_PROFILE],
        "code_challenge_methods_supported": ["S256"],
        # `none` for MCP clients (public), `private_key_jwt` for service clients.
        "token_endpoint_auth_methods_supported": ["none", "private_key_jwt"],
        "token_endpoint_auth_signing_alg_values_supported": ["RS256", "ES256"],
        "revocation_endpoint_auth_methods_supported": ["none"],
        "scopes_supported": list(ALL_SCOPES),
        "client_id_metadata_document_supported": True,
        "authorization_response_iss_parameter_supported": True,
        # RFC 9449 §5.1: DPoP proofs at the token endpoint, by these algorithms.
        "dpop_signing_alg_values_supported": ["ES256", "RS256", "EdDSA"],
    }


def protected_resource(resource: McpResource, issuer: str) -> dict[str, Any]:
    return {
        "resource": resource.uri,
        "authorization_servers": [issuer],
        # What an MCP client asks for by default (MCP clients request the resource's
        # scopes_supported): the data-plane scopes, not workspace administration.
        "scopes_supported": list(DATA_PLANE_SCOPES),
        "bearer_methods_supported": ["header"],
    }
