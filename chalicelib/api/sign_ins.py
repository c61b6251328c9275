"""`/v1/auth/sessions`: a person's sign-ins, listed and ended (chalicelib/sessions/sign_ins.py).

Ending a sign-in refuses its refresh token and every access token it issued (and every token
delegated from one of them) from the very next request.
"""

from __future__ import annotations

from chalicelib import errors
from chalicelib.access.principal import Principal
from chalicelib.api import sign_ins_models as models
from chalicelib.api.operations import Call, Operations, Policy
from chalicelib.runtime import services

blueprint = Operations(__name__)

COLLECTION = "/v1/auth/sessions"
TAG = "Sessions"


def require_user_token(principal: Principal) -> None:
    """A person's sign-ins are theirs to see and end: never through a key or a delegated
    token."""
    if principal.credential != "user_token":
        raise errors.INSUFFICIENT_SCOPE.error("Sessions need a user token.")


PERSON = Policy("person", check=require_user_token, problems=(errors.INSUFFICIENT_SCOPE,))


@blueprint.operation(
    "GET",
    COLLECTION,
    summary="The caller's sign-ins",
    tag=TAG,
    policy=PERSON,
    response=models.SessionList,
    status=200,
    answer="The caller's live sign-ins (the dashboard's, each SDK's, the CLI's), newest "
    "first; `current` marks the one of the token making the request.",
)
def list_sessions(call: Call) -> models.SessionList:
    found = services().sign_ins.list(call.principal.user_id)
    current = call.principal.session_id
    return models.SessionList(sessions=[models.Session.of(s, current) for s in found])


@blueprint.operation(
    "DELETE",
    COLLECTION + "/{session_id}",
    summary="End one sign-in",
    tag=TAG,
    policy=PERSON,
    response=None,
    status=204,
    problems=(errors.NOT_FOUND,),
    description="Its refresh token and every access token it issued are refused from the next "
    "request (401 `revoked_credentials`), the caller's own included when it is the current "
    "one. Another person's sign-in, or one already ended, is 404. Audit event "
    "`session.revoked` (`reason` `ended`).",
)
def end_session(call: Call) -> None:
    services().sign_ins.end(call.principal, call.path["session_id"])


@blueprint.operation(
    "DELETE",
    COLLECTION,
    summary="Sign out everywhere",
    tag=TAG,
    policy=PERSON,
    response=None,
    status=204,
    description="Ends every sign-in of the caller, the current one included: every refresh "
    "and access token of them is refused from the next request. Audit event "
    "`session.revoked` (`reason` `everywhere`) for each.",
)
def end_all_sessions(call: Call) -> None:
    services().sign_ins.end_all(call.principal)
