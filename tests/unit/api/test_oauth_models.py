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
            "subject_token_type must be one of " + ", ".join(models.SUBJECT_TOKEN_TYPES) + ".",
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
