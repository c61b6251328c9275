"""The token endpoints' declared models refuse what the endpoints refuse, with the RFC 6749
error and description each endpoint answers (never pydantic's message)."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from chalicelib.api import models
from chalicelib.api.operations import oauth_validated
from chalicelib.errors import OAuthError

EXCHANGE = models.TOKEN_EXCHANGE_GRANT
SUBJECT = {"subject_token": "a.b.c", "subject_token_type": models.ID_TOKEN_TYPE}


def refused(model: type[BaseModel], parameters: dict[str, Any]) -> tuple[str, str]:
    try:
        oauth_validated(model, parameters)
    except OAuthError as error:
        return error.error, error.description
    raise AssertionError("accepted")


@pytest.mark.parametrize(
    ("model", "parameters", "error", "description"),
    [
        (models.RefreshForm, {"refresh_token": "r"}, "invalid_request", "grant_type is required."),
        (
            models.RefreshForm,
            {"grant_type": "password", "refresh_token": "r"},
            "unsupported_grant_type",
            "Use grant_type=refresh_token.",
        ),
        (
            models.RefreshRequest,
            {"grant_type": "password"},
            "unsupported_grant_type",
            "Use grant_type=refresh_token.",
        ),
        (models.RefreshRequest, {}, "invalid_request", "refresh_token is required."),
        (models.ExchangeRequest, {}, "invalid_request", "id_token is required."),
        (models.RevocationForm, {"client_id": "c"}, "invalid_request", "token is required."),
        (
            models.TokenExchangeForm,
            {"grant_type": "password", **SUBJECT},
            "unsupported_grant_type",
            f"Use grant_type={EXCHANGE}.",
        ),
        (
            models.TokenExchangeForm,
            {"grant_type": EXCHANGE, "subject_token": "a.b.c", "subject_token_type": "jwt"},
            "invalid_request",
            f"subject_token_type must be {models.ID_TOKEN_TYPE}.",
        ),
        (
            models.TokenExchangeForm,
            {"grant_type": EXCHANGE, **SUBJECT, "requested_token_type": "refresh"},
            "invalid_request",
            f"requested_token_type must be {models.ACCESS_TOKEN_TYPE}.",
        ),
        (
            models.TokenExchangeForm,
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
    form = oauth_validated(models.TokenExchangeForm, {"grant_type": EXCHANGE, **SUBJECT, "x": "1"})

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
            "Use authorization_code or refresh_token.",
        ),
        (
            {"grant_type": "password", "client_id": "c"},
            "unsupported_grant_type",
            "Use authorization_code or refresh_token.",
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
    answered = refused(models.TokenForm, parameters)

    assert answered == (error, description)


@pytest.mark.parametrize(
    ("parameters", "grant"),
    [
        ({**CODE, "redirect_uri": "r", "code_verifier": "v"}, models.AuthorizationCodeGrant),
        (
            {"grant_type": "refresh_token", "client_id": "c", "refresh_token": "r"},
            models.RefreshTokenGrant,
        ),
    ],
)
def test_the_mcp_token_form_is_the_model_of_its_grant_type(
    parameters: dict[str, str], grant: type[BaseModel]
) -> None:
    form = oauth_validated(models.TokenForm, parameters)

    assert type(form.root) is grant
