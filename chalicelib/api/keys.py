"""`/v1/auth/api-keys`: create, list, get, reveal, rotate, update, revoke.

Each route checks in one order: authenticate (401), authorize (403), find the caller's own key
(404), then validate the request (400/413/415), then act (409 and the answer).
"""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Any

from chalice import Response

from chalicelib import errors, idempotency
from chalicelib.access.allow_list import InvalidCidr, parse_cidrs
from chalicelib.access.policy import require_manager
from chalicelib.access.scopes import ADMIN
from chalicelib.api import edge
from chalicelib.keys.model import MAX_GRACE_PERIOD, MAX_LIFETIME_DAYS
from chalicelib.keys.service import IssuedKey, KeyChanges, NewKey
from chalicelib.runtime import services

blueprint = edge.Routes(__name__)
COLLECTION = "/v1/auth/api-keys"
CREATE_FIELDS = {
    "label", "category", "workspaceId", "workspace_id", "scopes", "expiresInDays", "allowedCidrs"
}
UPDATE_FIELDS = {"label", "allowedCidrs"}
ROTATE_FIELDS = {"gracePeriodSeconds"}


def _whole_number(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _allowed_cidrs(value: Any) -> tuple[str, ...] | None:
    if value is None:
        return None
    try:
        return parse_cidrs(value)
    except InvalidCidr as invalid:
        raise errors.INVALID_CIDR.error(str(invalid)) from None


def _new_key(body: dict[str, Any]) -> NewKey:
    label = edge.clean_text(body.get("label"), errors.INVALID_LABEL, "label")
    workspace_id = edge.one_of_spellings(body, "workspaceId", "workspace_id")
    if workspace_id is not None and not isinstance(workspace_id, str):
        raise errors.INVALID_WORKSPACE_ID.error()
    scopes = body.get("scopes")
    if scopes is not None and not (
        isinstance(scopes, list) and all(isinstance(s, str) for s in scopes)
    ):
        raise errors.INVALID_SCOPE.error("scopes must be a list of strings.")
    category = body.get("category")
    if category is None:
        category = ADMIN  # the default when omitted; any other value the key service judges
    days = body.get("expiresInDays", MAX_LIFETIME_DAYS)
    if not _whole_number(days) or not 1 <= days <= MAX_LIFETIME_DAYS:
        raise errors.INVALID_LIFETIME.error()
    return NewKey(
        label=label,
        category=category,
        workspace_id=workspace_id,
        scopes=scopes,
        lifetime_days=days,
        allowed_cidrs=_allowed_cidrs(body.get("allowedCidrs")),
    )


def _grace(body: dict[str, Any]) -> timedelta:
    seconds = body.get("gracePeriodSeconds", 0)
    limit = int(MAX_GRACE_PERIOD.total_seconds())
    if not _whole_number(seconds) or not 0 <= seconds <= limit:
        raise errors.INVALID_GRACE_PERIOD.error()
    return timedelta(seconds=seconds)


def _changes(body: dict[str, Any]) -> KeyChanges:
    label = None
    if "label" in body:
        label = edge.clean_text(body["label"], errors.INVALID_LABEL, "label")
    return KeyChanges(
        label=label,
        cidrs_given="allowedCidrs" in body,
        allowed_cidrs=_allowed_cidrs(body.get("allowedCidrs")),
    )


def _issued(issued: IssuedKey, status: int) -> Response:
    now = services().clock.now()
    headers = {"Location": f"{COLLECTION}/{issued.api_key.id}"} if status == 201 else {}
    if issued.replayed:
        headers[idempotency.REPLAYED_HEADER] = "true"
    return edge.json_response(
        issued.api_key.resource(now, plaintext=issued.plaintext),
        status=status,
        headers=headers,
        secret=True,
    )


@blueprint.route(COLLECTION, methods=["POST"], content_types=edge.ANY_MEDIA_TYPE)
def create_api_key() -> Response:
    request = blueprint.current_request
    principal = edge.authenticate(request)
    require_manager(principal)
    edge.query(request, set())
    body = edge.read_json(request, CREATE_FIELDS)
    idempotent = edge.idempotent_request(request, principal, "create-api-key", None, body)
    return _issued(services().key_service.create(principal, _new_key(body), idempotent), 201)


@blueprint.route(COLLECTION, methods=["GET"], content_types=edge.ANY_MEDIA_TYPE)
def list_api_keys() -> Response:
    request = blueprint.current_request
    principal = edge.authenticate(request, allow_query_workspace=True)
    require_manager(principal)
    params = edge.query(request, {"limit", "cursor", "status", "workspace_id"})
    limit_text = params.get("limit", "50")
    if not re.fullmatch(r"[0-9]{1,3}", limit_text) or not 1 <= int(limit_text) <= 100:
        raise errors.INVALID_PARAMETER.error("limit must be a whole number from 1 to 100.")
    page = services().key_service.list(
        principal, int(limit_text), params.get("cursor"), params.get("status")
    )
    now = services().clock.now()
    return edge.json_response(
        {"keys": [k.resource(now) for k in page.keys], "nextCursor": page.next_cursor}
    )


@blueprint.route(COLLECTION + "/{key_id}", methods=["GET"], content_types=edge.ANY_MEDIA_TYPE)
def get_api_key(key_id: str) -> Response:
    request = blueprint.current_request
    principal = edge.authenticate(request)
    api_key = services().key_service.get(principal, key_id)
    edge.query(request, set())
    return edge.json_response(api_key.resource(services().clock.now()))


@blueprint.route(
    COLLECTION + "/{key_id}/reveal", methods=["GET"], content_types=edge.ANY_MEDIA_TYPE
)
def reveal_api_key(key_id: str) -> Response:
    request = blueprint.current_request
    principal = edge.authenticate(request, allow_query_workspace=True)
    key_service = services().key_service
    api_key, ciphertext = key_service.sealed(principal, key_id)
    edge.query(request, {"workspace_id"})
    return _issued(key_service.reveal(principal, api_key, ciphertext), 200)


@blueprint.route(
    COLLECTION + "/{key_id}/rotate", methods=["POST"], content_types=edge.ANY_MEDIA_TYPE
)
def rotate_api_key(key_id: str) -> Response:
    request = blueprint.current_request
    principal = edge.authenticate(request)
    key_service = services().key_service
    old = key_service.owned(principal, key_id, hands_out=True)
    edge.query(request, set())
    body = edge.read_json(request, ROTATE_FIELDS, required=False)
    grace = _grace(body)
    idempotent = edge.idempotent_request(request, principal, "rotate-api-key", key_id, body)
    return _issued(key_service.rotate(principal, old, grace, idempotent), 201)


@blueprint.route(COLLECTION + "/{key_id}", methods=["PATCH"], content_types=edge.ANY_MEDIA_TYPE)
def update_api_key(key_id: str) -> Response:
    request = blueprint.current_request
    principal = edge.authenticate(request)
    key_service = services().key_service
    api_key = key_service.owned(principal, key_id)
    edge.query(request, set())
    changes = _changes(edge.read_json(request, UPDATE_FIELDS))
    updated = key_service.update(principal, api_key, changes)
    return edge.json_response(updated.resource(services().clock.now()))


@blueprint.route(COLLECTION + "/{key_id}", methods=["DELETE"], content_types=edge.ANY_MEDIA_TYPE)
def revoke_api_key(key_id: str) -> Response:
    request = blueprint.current_request
    principal = edge.authenticate(request)
    key_service = services().key_service
    api_key = key_service.owned(principal, key_id)
    edge.query(request, set())
    key_service.revoke(principal, api_key)
    return edge.empty_response(204)
