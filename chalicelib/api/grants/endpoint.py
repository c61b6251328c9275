"""Serving a token request: read once, find its grant, let it validate and issue.

The three token endpoints (`POST /v1/oauth/token`, `/v1/auth/exchange`, `/v1/auth/refresh`)
are this one function with their own models (what a request of a grant_type no grant there
serves is refused by) and, for JSON, the grant a request without `grant_type` names.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from chalice import Response
from chalice.app import Request
from pydantic import BaseModel

from chalicelib import errors, logs
from chalicelib.access.dpop import BadProof, binding, check_proof
from chalicelib.access.headers import identity_headers, origin
from chalicelib.api import edge
from chalicelib.api.grants.registry import TokenRequest, find
from chalicelib.api.operations import (
    FORM,
    Operations,
    oauth_errors,
    oauth_validated,
    query_names,
    token_parameters,
)
from chalicelib.runtime import services

TOKEN_HEADERS = {"Cache-Control": "no-store", "Pragma": "no-cache"}


def serve(
    request: Request,
    endpoint: str,
    body: Mapping[str, type[BaseModel]],
    default_grant_type: str | None = None,
) -> Response:
    """The endpoint's answer to `request`: a token response, or an RFC 6749 error raised."""
    with oauth_errors():
        json_model = body.get(edge.JSON)
        is_form, parameters = token_parameters(
            request, query_names(json_model) if json_model is not None else None
        )
        media = FORM if is_form else edge.JSON
        if "client_secret" in parameters and json_model is None:
            raise errors.INVALID_CLIENT.oauth_error()
        grant_type = parameters.get("grant_type", None if is_form else default_grant_type)
        grant = find(grant_type, parameters, endpoint)
        if grant is None:
            oauth_validated(body[media], parameters)  # its refusal, in the endpoint's order
            raise errors.UNSUPPORTED_GRANT_TYPE.oauth_error()
        parsed = oauth_validated(grant.models[media], parameters)
        jkt = proved_key(request, endpoint)
        seen = origin(request.to_original_event())
        asked = TokenRequest(endpoint, parameters, parsed, is_form, seen)
        served = grant()
        with binding(jkt):  # every token this grant mints is bound to the key proved
            issued = served.issue(asked, served.validate(asked))
    if issued.user_id is not None:
        logs.identify_actor(issued.user_id)
    answer = dict(issued.body)
    if jkt is not None:
        answer["token_type"] = "DPoP"  # RFC 9449 §5
    return edge.json_response(answer, headers=TOKEN_HEADERS, secret=True)


def proved_key(request: Request, endpoint: str) -> str | None:
    """The thumbprint of the key a token request's DPoP proof is signed by (RFC 9449 §5),
    None without a `DPoP` header; an RFC 6749 error when the proof does not pass. Every token
    request with a proof must carry the server's current nonce (§8): without it, or with a
    stale one, `use_dpop_nonce` answers the nonce to sign with in `DPoP-Nonce`."""
    sent = identity_headers(request.to_original_event()).dpop
    if sent.copies == 0:
        return None
    if sent.copies > 1:
        raise errors.OAUTH_INVALID_DPOP_PROOF.oauth_error("Send one DPoP header.")
    svc = services()
    now = svc.clock.now()
    nonces = svc.dpop_nonces
    found = check_proof(
        sent.value,
        "POST",
        svc.settings.issuer + endpoint,
        now.timestamp(),
        nonce_ok=lambda nonce: nonces.accepts(nonce, now),
    )
    if isinstance(found, BadProof) and found.nonce:
        nonce = {"DPoP-Nonce": nonces.current(now)}
        raise errors.USE_DPOP_NONCE.oauth_error(headers=nonce)
    if isinstance(found, BadProof):
        raise errors.OAUTH_INVALID_DPOP_PROOF.oauth_error(found.reason)
    return found.jkt


def token_endpoint(
    blueprint: Operations,
    path: str,
    body: Mapping[str, type[BaseModel]],
    default_grant_type: str,
    **declared: Any,
) -> None:
    """Declares `POST path` (JSON and form), served by `serve`: one view for every token
    endpoint of this kind (`/v1/auth/exchange`, `/v1/auth/refresh`)."""

    def view() -> Response:
        return serve(blueprint.current_request, path, body, default_grant_type)

    view.__name__ = str(declared["name"])
    blueprint.public("POST", path, content_types=list(body), body=body, **declared)(view)
