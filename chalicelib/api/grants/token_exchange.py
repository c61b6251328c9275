"""Token exchange (RFC 8693), one class per subject_token_type: a login (an ID token for a
user token), a delegation (a credential for a narrower one) and a workload's exchange (its
OIDC token for a workspace token), at `/v1/auth/exchange` and `POST /v1/oauth/token`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from chalicelib import errors
from chalicelib.api import edge, sessions_models
from chalicelib.api.grants.refresh import token_pair
from chalicelib.api.grants.registry import (
    EXCHANGE_PATH,
    TOKEN_PATH,
    Grant,
    Issued,
    TokenRequest,
    register,
)
from chalicelib.api.operations import FORM
from chalicelib.errors import OAuthError
from chalicelib.runtime import services
from chalicelib.sessions.openid import IdTokenRejected

# A login's user token is the person's, whole: a narrower token is a delegation of it,
# asked for once signed in.
NARROWING = ("scope", "expires_in", "workspace_id", "actor")


def invalid_request(description: str) -> OAuthError:
    return errors.OAUTH_INVALID_REQUEST.oauth_error(description)


class _TokenExchange(Grant):
    grant_type = sessions_models.TOKEN_EXCHANGE_GRANT
    endpoints = frozenset({EXCHANGE_PATH, TOKEN_PATH})
    models = {edge.JSON: sessions_models.ExchangeRequest, FORM: sessions_models.TokenExchangeForm}
    subject_token_types: tuple[str | None, ...] = ()

    @classmethod
    def takes(cls, parameters: Mapping[str, Any]) -> bool:
        return parameters.get("subject_token_type") in cls.subject_token_types

    def subject_token(self, request: TokenRequest) -> str:
        """The subject token of a request we can serve (its model checked the rest): JSON may
        have sent `id_token` instead, which is a login's only. Two rules are not field
        constraints (a parameter the model ignores, the issuer known at run time)."""
        parsed = request.parsed
        if parsed.subject_token is None:
            raise invalid_request("subject_token is required: id_token is for a login only.")
        if request.is_form:
            _served_target(parsed)
        return str(parsed.subject_token)


def _served_target(form: sessions_models.TokenExchangeForm) -> None:
    if form.model_extra and {"actor_token", "actor_token_type"} & set(form.model_extra):
        raise invalid_request("Delegation (actor_token) is not supported.")
    issuer = services().settings.issuer
    for target in ("audience", "resource"):
        value = getattr(form, target)
        if value is not None and value.rstrip("/") != issuer:
            raise errors.INVALID_TARGET.oauth_error(f"The only {target} served here is {issuer}.")


def workspace_token(token: str, expires_in: int, scope: str) -> Issued:
    """RFC 8693 §2.2.1's answer: a token bound to one workspace, no refresh token."""
    body = sessions_models.WorkspaceToken(
        access_token=token,
        issued_token_type=sessions_models.ACCESS_TOKEN_TYPE,
        token_type="Bearer",
        expires_in=expires_in,
        scope=scope,
    )
    return Issued(body.model_dump())


@register
class Login(_TokenExchange):
    """An ID token of a trusted issuer for a user token and refresh token (a sign-in)."""

    subject_token_types = (sessions_models.ID_TOKEN_TYPE, None)

    def validate(self, request: TokenRequest) -> str:
        parsed = request.parsed
        asked = [name for name in NARROWING if getattr(parsed, name) is not None]
        if asked:
            raise invalid_request(
                f"A login takes no {', '.join(asked)}: sign in, then delegate"
                f" (subject_token_type {sessions_models.ACCESS_TOKEN_TYPE}) for a narrower token."
            )
        if request.is_form:
            _served_target(parsed)
            return str(parsed.subject_token)
        return str(parsed.id_token or parsed.subject_token)

    def issue(self, request: TokenRequest, valid: str) -> Issued:
        try:
            pair = services().session_service.exchange(valid, request.origin)
        except IdTokenRejected as rejected:
            raise errors.INVALID_GRANT.oauth_error(rejected.description) from None
        rfc_8693 = request.is_form or request.parsed.id_token is None
        return token_pair(pair, issued_token_type=rfc_8693)


@register
class Delegation(_TokenExchange):
    """A credential (API key, user or delegated token) for a narrower, shorter-lived token
    bound to one workspace."""

    subject_token_types = (sessions_models.ACCESS_TOKEN_TYPE,)

    def validate(self, request: TokenRequest) -> str:
        return self.subject_token(request)

    def issue(self, request: TokenRequest, valid: str) -> Issued:
        parsed = request.parsed
        delegated = services().delegator.delegate(
            valid,
            parsed.workspace_id,
            parsed.scope,
            parsed.expires_in,
            parsed.actor,
            origin=request.origin,
        )
        return workspace_token(delegated.token, delegated.expires_in, " ".join(delegated.scopes))


@register
class WorkloadExchange(_TokenExchange):
    """Workload identity federation: a workload's OIDC token, judged by the workspace's
    trust policies."""

    subject_token_types = (sessions_models.JWT_TOKEN_TYPE,)

    def validate(self, request: TokenRequest) -> str:
        return self.subject_token(request)

    def issue(self, request: TokenRequest, valid: str) -> Issued:
        parsed = request.parsed
        return workload_token(valid, parsed.workspace_id, parsed.scope)


def workload_token(
    assertion: str, workspace_id: str | None, scope: str | None, single_use: bool = False
) -> Issued:
    """The workload token the trust policies grant for `assertion` (both forms: RFC 8693's
    and jwt-bearer's, whose `jti` is `single_use`), or their one refusal."""
    from chalicelib.workloads.exchange import WorkloadRejected

    try:
        minted = services().workload_exchange.exchange(
            assertion, workspace_id, scope, single_use=single_use
        )
    except WorkloadRejected as rejected:
        problem = {
            "invalid_request": errors.OAUTH_INVALID_REQUEST,
            "invalid_scope": errors.OAUTH_INVALID_SCOPE,
        }.get(rejected.error, errors.INVALID_GRANT)
        raise problem.oauth_error(rejected.description) from None
    return workspace_token(minted.token, minted.expires_in, minted.scope)
