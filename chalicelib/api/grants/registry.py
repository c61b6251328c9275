"""The grant registry: which class serves a token request, at which endpoint.

How a grant is declared and registered (adding one is one class and one line):

1. Write a module in this package with one class per grant, a subclass of `Grant`:

       @register
       class ClientCredentials(Grant):
           grant_type = "client_credentials"
           # The endpoints that serve it (default: `POST /v1/oauth/token` only).
           endpoints = frozenset({TOKEN_PATH})
           # Its request's model per media type (FORM; JSON where the endpoint reads JSON).
           models = {FORM: oauth_models.ClientCredentialsForm}

           @classmethod
           def takes(cls, parameters: Mapping[str, Any]) -> bool:
               # Optional: among the grants of one grant_type, whether this one takes the
               # request (RFC 8693's subject_token_type, a jwt-bearer assertion's `typ`).
               return True

           def validate(self, request: TokenRequest) -> Any:
               ...  # raise an OAuthError (errors.X.oauth_error(...)) to refuse; what it
                    # returns is handed to `issue`

           def issue(self, request: TokenRequest, valid: Any) -> Issued:
               ...  # the RFC 6749 §5.1 body

   `request.parameters` are the request's parameters as read once for every grant
   (`operations.token_parameters`: a form, or JSON in either spelling, each non-empty and
   given once); `request.parsed` is them checked by the grant's model for the media type
   (the model's first refused field answers, before `validate` runs). A dependency failure
   raised anywhere is 503 `temporarily_unavailable` (`operations.oauth_errors`).

2. Declare the module in `DECLARED` below, and add the grant's form model to
   `oauth_models.TokenEndpointForm` (what the OpenAPI document says the token endpoint takes).
   The registry imports the declared modules on first use (none loads onto the
   authorizer's cold start), and the metadata's `grant_types_supported` lists every grant
   `POST /v1/oauth/token` serves.

Single-use assertion ids (`jti`, RFC 7523 §3): `services().replays.spend(iss, jti, exp, now)`
(`chalicelib/replays.py`), one conditional put: False for a replay.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from pydantic import BaseModel

from chalicelib.oauth.metadata import TOKEN_PATH

EXCHANGE_PATH = "/v1/auth/exchange"
REFRESH_PATH = "/v1/auth/refresh"

# Every grant module, in the order `grant_types_supported` lists their grants.
DECLARED = (
    "chalicelib.api.grants.authorization_code",
    "chalicelib.api.grants.refresh",
    "chalicelib.api.grants.token_exchange",
    "chalicelib.api.grants.jwt_bearer",
    "chalicelib.api.grants.client_credentials",
)


@dataclass(frozen=True)
class TokenRequest:
    """One token request as every grant sees it."""

    endpoint: str  # the path it was sent to
    parameters: Mapping[str, Any]  # as read: each non-empty, given once
    parsed: Any  # the parameters checked by the grant's model for the media type
    is_form: bool
    origin: Any  # the caller's address and user agent (`edge.origin`)


@dataclass(frozen=True)
class Issued:
    """An RFC 6749 §5.1 token response's body."""

    body: Mapping[str, Any]
    user_id: str | None = None  # the person it was issued to, for the request's log line


class Grant:
    grant_type: ClassVar[str]
    endpoints: ClassVar[frozenset[str]] = frozenset({TOKEN_PATH})
    models: ClassVar[Mapping[str, type[BaseModel]]]

    @classmethod
    def takes(cls, parameters: Mapping[str, Any]) -> bool:
        return True

    def validate(self, request: TokenRequest) -> Any:
        return None

    def issue(self, request: TokenRequest, valid: Any) -> Issued:
        raise NotImplementedError


_REGISTERED: list[type[Grant]] = []


def register[G: type[Grant]](grant: G) -> G:
    """A class decorator: the registry serves `grant` from now on."""
    if grant not in _REGISTERED:
        _REGISTERED.append(grant)
    return grant


def registered() -> tuple[type[Grant], ...]:
    for module in DECLARED:
        importlib.import_module(module)
    return tuple(_REGISTERED)


def find(grant_type: Any, parameters: Mapping[str, Any], endpoint: str) -> type[Grant] | None:
    """The grant that takes this request at this endpoint; else the first of its
    grant_type there (its model refuses the request); None when the endpoint serves no
    grant of this grant_type."""
    candidates = [g for g in registered() if g.grant_type == grant_type and endpoint in g.endpoints]
    return next((g for g in candidates if g.takes(parameters)), None) or next(
        iter(candidates), None
    )


def grant_types() -> list[str]:
    """`grant_types_supported`: every grant `POST /v1/oauth/token` serves, each once."""
    return list(dict.fromkeys(g.grant_type for g in registered() if TOKEN_PATH in g.endpoints))
