"""The token endpoints' declared models refuse what the endpoints refuse, with the RFC 6749
error and description each endpoint answers (never pydantic's message)."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from chalicelib.api import oauth_models, sessions_models
from chalicelib.api.operations import oauth_validated
from chalicelib.errors import OAuthError

EXCHANGE = sessions_models.TOKEN_EXCHANGE_GRANT
SUBJECT = {"subject_token": "a.b.c", "subject_token_type": sessions_models.ID_TOKEN_TYPE}


def refused(model: type[BaseModel], parameters: dict[str, Any]) -> tuple[str, str]:
    try:
        oauth_validated(model, parameters)
    except OAuthError as error:
        return error.error, error.description
    raise AssertionError("accepted")


@pytest.mark.parametrize(
    ("model", "parameters", "error", "description"),
    [
        (
            sessions_models.RefreshForm,
            {"refresh_token": "r"},
            "invalid_request",
            "grant_type is required.",
        ),
        (
            sessions_models.RefreshForm,
            {"grant_type": "password", "refresh_token": "r"},
            "unsupported_grant_type",
            "Use grant_type=refresh_token.",
        ),
        (
            sessions_models.RefreshRequest,
            {"grant_type": "password"},
            "unsupported_grant_type",
            "Use grant_type=refresh_token.",
        ),
        (sessions_models.RefreshRequest, {}, "invalid_request", "refresh_token is required."),
        (sessions_models.ExchangeRequest, {}, "invalid_request", "id_token is required."),
        (oauth_models.RevocationForm, {"client_id": "c"}, "invalid_request", "token is required."),
        (
            sessions_models.TokenExchangeForm,
            {"grant_type": "password", **SUBJECT},
            "unsupported_grant_type",
            f"Use grant_type={EXCHANGE}.",
        ),
        (
            sessions_models.TokenExchangeForm,
            {"grant_type": EXCHANGE, "subject_token": "a.b.c", "subject_token_type": "jwt"},
            "invalid_request",
            "subject_token_type must be one of "
            + ", ".join(sessions_models.SUBJECT_TOKEN_TYPES)
            + ".",
        ),
        (
            sessions_models.TokenExchangeForm,
            {"grant_type": EXCHANGE, **SUBJECT, "requested_token_type": "refresh"},
            "invalid_request",
            f"requested_token_type must be {sessions_models.ACCESS_TOKEN_TYPE}.",
        ),
        (
            sessions_models.TokenExchangeForm,
            {"subject_token_type": "jwt"},
            "invalid_request",
            "grant_type is required.",
        ),
    ],
)
def test_a_token_request_model_refuses_with_the_endpoints_oauth_error(
    model: type[BaseModel], parameters: dict[str, Any], error: str, description: str
) -> None:
    answered = refused(model, parameters)

    assert answered == (error, description)


def test_a_token_exchange_form_ignores_parameters_it_does_not_name() -> None:
    form = oauth_validated(
        sessions_models.TokenExchangeForm, {"grant_type": EXCHANGE, **SUBJECT, "x": "1"}
    )

    assert form.subject_token == "a.b.c"


CODE = {"grant_type": "authorization_code", "client_id": "c", "code": "x"}


@pytest.mark.parametrize(
    ("parameters", "error", "description"),
    [
        (
            {"grant_type": "refresh_token", "client_id": "c", "client_secret": "s"},
            "invalid_client",
            "Clients here are public: send no secret.",
        ),
        ({"grant_type": "password"}, "invalid_request", "client_id is required."),
        (
            {"client_id": "c"},
            "unsupported_grant_type",
            "This grant_type is not served: see grant_types_supported in the metadata.",
        ),
        (
            {"grant_type": "password", "client_id": "c"},
            "unsupported_grant_type",
            "This grant_type is not served: see grant_types_supported in the metadata.",
        ),
        ({**CODE, "code_verifier": "v"}, "invalid_request", "redirect_uri is required."),
        ({**CODE, "redirect_uri": "r"}, "invalid_request", "code_verifier is required."),
        (
            {"grant_type": "refresh_token", "client_id": "c", "code": "x"},
            "invalid_request",
            "refresh_token is required.",
        ),
    ],
)
def test_the_mcp_token_form_refuses_in_the_endpoints_order(
    parameters: dict[str, str], error: str, description: str
) -> None:
    answered = refused(oauth_models.TokenForm, parameters)

    assert answered == (error, description)


@pytest.mark.parametrize(
    ("parameters", "grant"),
    [
        ({**CODE, "redirect_uri": "r", "code_verifier": "v"}, oauth_models.AuthorizationCodeGrant),
        (
            {"grant_type": "refresh_token", "client_id": "c", "refresh_token": "r"},
            oauth_models.RefreshTokenGrant,
        ),
    ],
)
def test_the_mcp_token_form_is_the_model_of_its_grant_type(
    parameters: dict[str, str], grant: type[BaseModel]
) -> None:
    form = oauth_validated(oauth_models.TokenForm, parameters)

    assert type(form.root) is grant


CALLBACK = "https://app.test.example/cb"
GRANT_TYPES_RULE = "grant_types must include authorization_code, and at most refresh_token too."


@pytest.mark.parametrize(
    ("metadata", "error", "description"),
    [
        ({}, "invalid_redirect_uri", "redirect_uris must list 1 to 10 URIs."),
        ({"redirect_uris": []}, "invalid_redirect_uri", "redirect_uris must list 1 to 10 URIs."),
        (
            {"redirect_uris": ["http://evil.test.example/cb"], "application_type": "desktop"},
            "invalid_redirect_uri",
            "http redirect URIs must be loopback (127.0.0.1 or [::1]).",
        ),
        (
            {"redirect_uris": [CALLBACK], "token_endpoint_auth_method": None},
            "invalid_client_metadata",
            "Only public clients are registered: token_endpoint_auth_method none.",
        ),
        (
            {"redirect_uris": [CALLBACK], "application_type": "desktop", "grant_types": []},
            "invalid_client_metadata",
            "application_type must be web or native.",
        ),
        (
            {"redirect_uris": [CALLBACK], "grant_types": ["refresh_token"], "response_types": []},
            "invalid_client_metadata",
            GRANT_TYPES_RULE,
        ),
        (
            {"redirect_uris": [CALLBACK], "grant_types": "authorization_code"},
            "invalid_client_metadata",
            GRANT_TYPES_RULE,
        ),
        (
            {"redirect_uris": [CALLBACK], "response_types": ["code", "token"]},
            "invalid_client_metadata",
            'response_types must be ["code"].',
        ),
        (
            {"redirect_uris": [CALLBACK], "client_name": None},
            "invalid_client_metadata",
            "client_name must be 1 to 100 printable characters.",
        ),
        (
            {"redirect_uris": [CALLBACK], "client_name": "a\u202eb"},
            "invalid_client_metadata",
            "client_name must be 1 to 100 printable characters.",
        ),
    ],
)
def test_client_metadata_refuses_with_registrations_rfc_7591_error(
    metadata: dict[str, Any], error: str, description: str
) -> None:
    answered = refused(oauth_models.ClientMetadata, metadata)

    assert answered == (error, description)


def test_client_metadata_defaults_to_a_native_code_client_and_trims_its_name() -> None:
    metadata = oauth_validated(
        oauth_models.ClientMetadata,
        {"redirect_uris": [CALLBACK], "client_name": " Notes ", "software_id": "x"},
    )

    assert (metadata.redirect_uris, metadata.application_type, metadata.grant_types) == (
        (CALLBACK,),
        "native",
        ["authorization_code"],
    )
    assert metadata.client_name == "Notes"


SERVED = {"resources": frozenset({"https://memory.test.example/mcp"})}
AUTHORIZATION = {
    "client_id": "c",
    "redirect_uri": CALLBACK,
    "response_type": "code",
    "code_challenge": "a" * 43,
    "code_challenge_method": "S256",
    "resource": "https://memory.test.example/mcp",
}


@pytest.mark.parametrize(
    ("changes", "error", "description"),
    [
        (
            {"state": "s" * 501, "response_type": "token"},
            "invalid_request",
            "state is too long.",
        ),
        (
            {"response_type": None},
            "unsupported_response_type",
            "Only the authorization code flow is served here.",
        ),
        (
            {"code_challenge_method": "plain", "code_challenge": "short"},
            "invalid_request",
            "PKCE is required, with code_challenge_method S256.",
        ),
        (
            {"code_challenge": None},
            "invalid_request",
            "code_challenge must be an S256 challenge.",
        ),
        (
            {"resource": "https://memory.test.example/mcp/", "scope": "openid"},
            "invalid_target",
            "resource must name an MCP server served here.",
        ),
        (
            {"resource": None},
            "invalid_target",
            "resource must name an MCP server served here.",
        ),
        (
            {"scope": "memory openid"},
            "invalid_scope",
            "The scope asks for something this server does not grant.",
        ),
    ],
)
def test_an_authorization_request_is_refused_with_the_first_error_in_the_endpoints_order(
    changes: dict[str, str | None], error: str, description: str
) -> None:
    parameters = {**AUTHORIZATION, **changes}
    present = {name: value for name, value in parameters.items() if value is not None}

    try:
        oauth_validated(oauth_models.AuthorizationQuery, present, context=SERVED)
    except OAuthError as refused:
        answered = (refused.error, refused.description)
    else:
        answered = ("accepted", "")

    assert answered == (error, description)


def test_an_authorization_request_names_a_resource_only_the_stage_serves() -> None:
    parameters = {**AUTHORIZATION, "resource": "HTTPS://Memory.Test.Example/mcp"}

    asked = oauth_validated(oauth_models.AuthorizationQuery, parameters, context=SERVED).request()
    unserved = refused(oauth_models.AuthorizationQuery, parameters)

    assert asked.resource == "https://memory.test.example/mcp"
    assert unserved[0] == "invalid_target"


def test_an_authorization_request_ignores_a_prompt_other_than_consent() -> None:
    asked = oauth_validated(
        oauth_models.AuthorizationQuery,
        {**AUTHORIZATION, "prompt": "login", "scope": "skills memory offline_access"},
        context=SERVED,
    ).request()

    assert (asked.ask_consent, asked.scopes) == (False, ("memory", "skills"))


def test_the_providers_answer_keeps_what_it_sent_and_ignores_the_rest() -> None:
    answered = oauth_models.CallbackQuery.model_validate(
        {"state": "p", "iss": "https://login.test.example", "error": "", "session_state": "x"}
    )

    assert answered.parameters() == {
        "state": "p",
        "iss": "https://login.test.example",
        "error": "",
    }


def test_the_consent_form_refuses_nothing_before_its_pending_authorization_is_found() -> None:
    fields = oauth_models.ConsentForm.model_validate(
        {"consent": "p", "decision": "maybe", "workspace_id": "nope", "extra": "x"}
    )

    assert fields.parameters() == {"consent": "p", "decision": "maybe", "workspace_id": "nope"}
