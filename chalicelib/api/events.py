"""`/v1/auth/events`: the audit events of the caller's keys and of the workspaces it owns."""

from __future__ import annotations

import re

from chalice import Response

from chalicelib import errors
from chalicelib.access.policy import require_manager
from chalicelib.api import edge
from chalicelib.runtime import services

blueprint = edge.Routes(__name__)
COLLECTION = "/v1/auth/events"


@blueprint.route(COLLECTION, methods=["GET"], content_types=edge.ANY_MEDIA_TYPE)
def list_events() -> Response:
    request = blueprint.current_request
    principal = edge.authenticate(request, allow_query_workspace=True)
    require_manager(principal)
    params = edge.query(request, {"limit", "cursor", "type", "keyId", "workspace_id"})
    limit_text = params.get("limit", "50")
    if not re.fullmatch(r"[0-9]{1,3}", limit_text) or not 1 <= int(limit_text) <= 100:
        raise errors.INVALID_PARAMETER.error("limit must be a whole number from 1 to 100.")
    page = services().event_log.history(
        principal, int(limit_text), params.get("cursor"), params.get("type"), params.get("keyId")
    )
    return edge.json_response(
        {"events": [e.resource() for e in page.events], "nextCursor": page.next_cursor}
    )
