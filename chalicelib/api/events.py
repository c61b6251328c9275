"""`/v1/auth/events`: the audit events of the caller's keys and of the workspaces it owns."""

from __future__ import annotations

from chalicelib.api import events_models as models
from chalicelib.api.operations import MANAGER, Call, Operations
from chalicelib.runtime import services

blueprint = Operations(__name__)


@blueprint.operation(
    "GET",
    "/v1/auth/events",
    summary="The audit events of the caller's keys and of the workspaces it owns",
    tag="Audit events",
    policy=MANAGER,
    query=models.EventQuery,
    response=models.EventPageBody,
    status=200,
    answer="A page of events, newest first.",
    description="With a workspace named (header or `workspace_id`), only that workspace's "
    "events. Events are kept 400 days. Actors are named by their current email and name "
    "when known.",
)
def list_events(call: Call) -> models.EventPageBody:
    query: models.EventQuery = call.query
    page = services().event_log.history(
        call.principal, query.limit, query.cursor, query.type, query.key_id
    )
    # Events name their actors by id; the page names them as people, read once per page.
    actors = [str(e.actor["userId"]) for e in page.events if e.actor.get("userId")]
    people = services().users.people(actors) if actors else {}
    return models.EventPageBody(
        events=[models.EventBody.of(e, people) for e in page.events], next_cursor=page.next_cursor
    )
