"""`/v1/auth/api-keys`: create, list, get, reveal, rotate, revoke (spec §4)."""

from __future__ import annotations

import re
from typing import Any

from chalice import Blueprint, Response

from chalicelib import errors
from chalicelib.access.scopes import ADMIN
from chalicelib.api import edge
from chalicelib.keys.service import IssuedKey, NewKey
from chalicelib.runtime import services

blueprint = Blueprint(__name__)
COLLECTION = "/v1/auth/api-keys"
CREATE_FIELDS = {"label", "category", "workspaceId", "workspace_id", "scopes"}


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
    return NewKey(label=label, category=category, workspace_id=workspace_id, scopes=scopes)


def _issued(issued: IssuedKey, status: int) -> Response:
    now = services().clock.now()
    return edge.json_response(
        issued.api_key.resource(now, plaintext=issued.plaintext),
        status=status,
        headers={"Location": f"{COLLECTION}/{issued.api_key.id}"} if status == 201 else None,
        secret=True,
    )


@blueprint.route(COLLECTION, methods=["POST"])
def create_api_key() -> Response:
    request = blueprint.current_request
    edge.query(request, set())
    principal = edge.authenticate(request)
    body = edge.read_json(request, CREATE_FIELDS)
    return _issued(services().key_service.create(principal, _new_key(body)), 201)


@blueprint.route(COLLECTION, methods=["GET"])
def list_api_keys() -> Response:
    request = blueprint.current_request
    params = edge.query(request, {"limit", "cursor", "status", "workspace_id"})
    principal = edge.authenticate(request, allow_query_workspace=True)
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


@blueprint.route(COLLECTION + "/{key_id}", methods=["GET"])
def get_api_key(key_id: str) -> Response:
    request = blueprint.current_request
    edge.query(request, set())
    principal = edge.authenticate(request)
    api_key = services().key_service.get(principal, key_id)
    return edge.json_response(api_key.resource(services().clock.now()))


@blueprint.route(COLLECTION + "/{key_id}/reveal", methods=["GET"])
def reveal_api_key(key_id: str) -> Response:
    request = blueprint.current_request
    edge.query(request, {"workspace_id"})
    principal = edge.authenticate(request, allow_query_workspace=True)
    return _issued(services().key_service.reveal(principal, key_id), 200)


@blueprint.route(COLLECTION + "/{key_id}/rotate", methods=["POST"])
def rotate_api_key(key_id: str) -> Response:
    request = blueprint.current_request
    edge.query(request, set())
    principal = edge.authenticate(request)
    edge.read_json(request, set(), required=False)
    return _issued(services().key_service.rotate(principal, key_id), 201)


@blueprint.route(COLLECTION + "/{key_id}", methods=["DELETE"])
def revoke_api_key(key_id: str) -> Response:
    request = blueprint.current_request
    edge.query(request, set())
    principal = edge.authenticate(request)
    services().key_service.revoke(principal, key_id)
    return edge.empty_response(204)
