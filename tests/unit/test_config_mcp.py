"""MCP_RESOURCES and LOGIN_PROVIDER parsing, and the authorizer's MCP answers (no I/O)."""

from __future__ import annotations

import json

import pytest

from chalicelib.access.principal import Principal, Refusal
from chalicelib.config import (
    ConfigurationError,
    McpResource,
    Settings,
    canonical_resource,
    parse_login_provider,
    parse_mcp_resources,
    parse_registration_limit,
    resource_for_path,
)
from chalicelib.decisions.authorizer import Unauthorized, authorize
from chalicelib.decisions.resolution import INVALID, MISMATCH
from chalicelib.sessions.openid import TrustedIssuer
from tests.fixtures.events import bearer, request_event

LOGIN = TrustedIssuer("https://login.example", "memory-auth", "https://login.example/jwks")


def test_resources_and_their_metadata_urls() -> None:
    text = '["https://memory.example/mcp", "https://m.example/a/b"]'
    resources = parse_mcp_resources(text, False)
    assert resources[0] == McpResource("https://memory.example/mcp", "/mcp")
    assert resources[0].metadata_url == (
        "https://memory.example/.well-known/oauth-protected-resource/mcp"
    )
    assert resources[1].metadata_url == "https://m.example/.well-known/oauth-protected-resource/a/b"
    assert resource_for_path("/mcp", resources) == resources[0]
    assert resource_for_path("/mcp/sse", resources) == resources[0]
    assert resource_for_path("/mcpx", resources) is None
    assert resource_for_path("/v1/memory", resources) is None


@pytest.mark.parametrize(
    "text",
    [
        "not json",
        '{"a": 1}',
        '["http://memory.example/mcp"]',
        '["https://memory.example"]',
        '["https://memory.example/"]',
        '["https://memory.example/mcp/"]',
        '["https://memory.example/mcp?x=1"]',
        '["https://memory.example/mcp#x"]',
        '["HTTPS://memory.example/mcp"]',
        '["https://a.example/mcp", "https://b.example/mcp/x"]',
    ],
)
def test_bad_resources_are_configuration_errors(text: str) -> None:
    with pytest.raises(ValueError):
        parse_mcp_resources(text, False)


def test_loopback_http_resources_only_in_local_mode() -> None:
    assert parse_mcp_resources('["http://127.0.0.1:8002/mcp"]', True)
    with pytest.raises(ValueError):
        parse_mcp_resources('["http://127.0.0.1:8002/mcp"]', False)


def test_the_login_provider_must_be_a_trusted_issuer_with_its_client_as_audience() -> None:
    ok = parse_login_provider('{"issuer": "https://login.example", "clientId": "memory-auth"}',
                              False, (LOGIN,))
    assert ok is not None and ok.client_id == "memory-auth" and ok.token_endpoint is None
    for text in (
        '{"issuer": "https://login.example", "clientId": "other"}',
        '{"issuer": "https://elsewhere.example", "clientId": "memory-auth"}',
        '{"issuer": "https://login.example"}',
        '{"issuer": "https://login.example", "clientId": "memory-auth", "secret": "x"}',
    ):
        with pytest.raises(ValueError):
            parse_login_provider(text, False, (LOGIN,))


def test_settings_read_both_variables() -> None:
    env = {
        "AUTH_TABLE": "t", "KEY_ENCRYPTION_KEY_ID": "k", "TOKEN_SIGNING_KEY_ID": "s",
        "REFRESH_TOKEN_KEY_ID": "r",
        "TOKEN_ISSUER": "https://auth.example",
        "TRUSTED_ISSUERS": json.dumps([{"issuer": LOGIN.issuer, "audience": LOGIN.audience,
                                        "jwksUri": LOGIN.jwks_uri}]),
        "MCP_RESOURCES": '["https://memory.example/mcp"]',
        "LOGIN_PROVIDER": json.dumps({"issuer": LOGIN.issuer, "clientId": LOGIN.audience}),
    }
    settings = Settings.from_env(env)
    assert settings.mcp_resources[0].uri == "https://memory.example/mcp"
    assert settings.login_provider is not None
    with pytest.raises(ConfigurationError):
        Settings.from_env({**env, "MCP_RESOURCES": "[1]"})


@pytest.mark.parametrize(("text", "limit"), [("", 20), ("  ", 20), ("200", 200), ("1", 1)])
def test_the_registration_limit_is_read_with_a_default_of_20(text: str, limit: int) -> None:
    assert parse_registration_limit(text) == limit


@pytest.mark.parametrize("text", ["0", "-1", "2.5", "many", "100001", "\u0662\u0660"])
def test_a_registration_limit_that_is_not_a_whole_number_in_range_is_refused(text: str) -> None:
    with pytest.raises(ValueError):
        parse_registration_limit(text)


def test_settings_read_the_registration_limit_of_the_stage() -> None:
    env = {
        "AUTH_TABLE": "t", "KEY_ENCRYPTION_KEY_ID": "k", "TOKEN_SIGNING_KEY_ID": "s",
        "REFRESH_TOKEN_KEY_ID": "r", "TOKEN_ISSUER": "https://auth.example",
    }
    assert Settings.from_env(env).registration_limit == 20
    assert Settings.from_env({**env, "MCP_REGISTRATION_LIMIT": "500"}).registration_limit == 500
    with pytest.raises(ConfigurationError):
        Settings.from_env({**env, "MCP_REGISTRATION_LIMIT": "none"})


@pytest.mark.parametrize(
    ("sent", "canonical"),
    [
        ("HTTPS://Memory.Example/mcp", "https://memory.example/mcp"),
        ("https://MEMORY.example:8443/mcp", "https://memory.example:8443/mcp"),
        ("https://memory.example/MCP", "https://memory.example/MCP"),  # the path is exact
        ("HTTPS://Memory.Example", "https://memory.example"),
        ("not a url", "not a url"),
    ],
)
def test_a_resource_is_compared_with_its_scheme_and_host_in_lower_case(
    sent: str, canonical: str
) -> None:
    assert canonical_resource(sent) == canonical


# -- the authorizer at an MCP resource ---------------------------------------------------------

RESOURCES = parse_mcp_resources('["https://memory.example/mcp"]', False)
METADATA = "https://memory.example/.well-known/oauth-protected-resource/mcp"


class StandIn:
    def __init__(self, answer: Principal | Refusal):
        self.answer = answer
        self.resources: list[object] = []

    def resolve(self, authorization: str | None, workspace: str | None,
                resource: object = None, origin: object = None,
                dpop: object = None) -> Principal | Refusal:
        self.resources.append(resource)
        return self.answer


def mcp_principal(scopes: frozenset[str], workspace: str | None = "ws_1") -> Principal:
    return Principal("usr_1", "mcp_token", scopes, workspace, client_id="cli_1")


def test_the_authorizer_resolves_mcp_paths_with_their_resource() -> None:
    resolver = StandIn(mcp_principal(frozenset({"memory"})))
    answer = authorize(request_event("/mcp", bearer("t")), resolver, RESOURCES)
    assert answer["policyDocument"]["Statement"][0]["Effect"] == "Allow"
    assert answer["context"]["clientId"] == "cli_1"
    assert resolver.resources == [RESOURCES[0]]
    elsewhere = StandIn(mcp_principal(frozenset({"memory"})))
    authorize(request_event("/v1/memory/x", bearer("t")), elsewhere, RESOURCES)
    assert elsewhere.resources == [None]


def test_mcp_denials_carry_the_challenge_and_401_stays_unauthorized() -> None:
    scope = authorize(
        request_event("/mcp", bearer("t")), StandIn(mcp_principal(frozenset({"skills"}))),
        RESOURCES,
    )
    assert scope["context"] == {
        "code": "insufficient_scope",
        "wwwAuthenticate": (
            f'Bearer error="insufficient_scope", scope="memory", resource_metadata="{METADATA}"'
        ),
    }
    mismatch = authorize(request_event("/mcp", bearer("t")), StandIn(MISMATCH), RESOURCES)
    assert mismatch["context"]["wwwAuthenticate"] == f'Bearer resource_metadata="{METADATA}"'
    with pytest.raises(Unauthorized):
        authorize(request_event("/mcp", bearer("t")), StandIn(INVALID), RESOURCES)
    no_workspace = authorize(
        request_event("/mcp", bearer("t")),
        StandIn(Principal("usr_1", "api_key", frozenset({"memory"}), None, "key_1", "admin")),
        RESOURCES,
    )
    assert no_workspace["context"]["code"] == "workspace_required"
