"""`POST /v1/auth/credentials/revoke`: anyone may report leaked credentials.

No credential, no oracle: every well-formed report is 202 `{"received": N}`, the same for a
live key, an unknown one and junk (`scanning/revocation.py`); the revocations happen on the
work queue, after the answer.
"""

from __future__ import annotations

from chalice import Response

from chalicelib import errors, strict_parsing
from chalicelib.access.headers import origin
from chalicelib.api import credentials_models as models
from chalicelib.api import edge
from chalicelib.api.operations import Answer, Operations, validated
from chalicelib.errors import DependencyUnavailable
from chalicelib.runtime import services
from chalicelib.webhooks.queue import QueueUnavailable

blueprint = Operations(__name__)
PATH = "/v1/auth/credentials/revoke"
# 1,000 keys of about 100 characters each, with room for JSON.
MAX_REPORT_BYTES = 256 * 1024


@blueprint.public(
    "POST",
    PATH,
    content_types=edge.ANY_MEDIA_TYPE,
    name="revokeLeakedCredentials",
    summary="Report leaked credentials: each live key among them is revoked",
    tag="Leaked-key reports",
    body={edge.JSON: models.CredentialReport},
    description=(
        "Unauthenticated, like GitHub's credential revocation API. The answer is the same "
        "whatever the strings are (a live key, an unknown one, junk): nothing is learned "
        "from it. Each active key among them is revoked shortly after, as a leak "
        "(`key.leaked`). At most 60 requests per source address per hour."
    ),
    answers=(
        Answer(202, "Received: every live key among them will be revoked.",
               models.CredentialsReceived),
        Answer(
            400,
            "The body is not `{\"credentials\": [...]}` with 1 to 1,000 strings.",
            problems=(
                errors.INVALID_JSON,
                errors.UNKNOWN_FIELD,
                errors.INVALID_CREDENTIAL_LIST,
                errors.UNKNOWN_PARAMETER,
                errors.CREDENTIAL_IN_URL,
            ),
        ),
        Answer(413, "The body is larger than 256 KiB.", problems=(errors.PAYLOAD_TOO_LARGE,)),
        Answer(415, "Send application/json.", problems=(errors.UNSUPPORTED_MEDIA_TYPE,)),
        Answer(
            429,
            "60 requests from this address in this hour: retry after `Retry-After` seconds.",
            problems=(errors.TOO_MANY_REQUESTS,),
            headers={"Retry-After": "RetryAfter"},
        ),
        Answer(503, "The work queue and DynamoDB are unavailable: retry later.",
               problems=(errors.DEPENDENCY_UNAVAILABLE,)),
    ),
)
def revoke_credentials() -> Response:
    request = blueprint.current_request
    raw = edge.read_body(request, MAX_REPORT_BYTES)
    edge.query(request, set())
    if edge.media_type(request) != edge.JSON:
        raise errors.UNSUPPORTED_MEDIA_TYPE.error()
    try:
        document = strict_parsing.json_value(raw)
    except strict_parsing.MalformedJson:
        raise errors.INVALID_JSON.error("The request body is not valid JSON.") from None
    if not isinstance(document, dict):
        raise errors.INVALID_JSON.error()
    report: models.CredentialReport = validated(models.CredentialReport, document)
    svc = services()
    if not svc.work_queue.configured:  # a stage without the queue acts on no report
        raise DependencyUnavailable("the work queue")
    seen = origin(request.to_original_event())
    wait = svc.revocation_limit.admit(seen.source_ip or "unknown", svc.clock.now())
    if wait is not None:
        raise errors.TOO_MANY_REQUESTS.error(
            "Too many revocation requests from this address; retry later.",
            headers={"Retry-After": str(wait)},
        )
    try:
        received = svc.public_revocation.accept(report.credentials, seen)
    except QueueUnavailable:
        raise DependencyUnavailable("the work queue") from None
    return edge.json_response(
        models.CredentialsReceived(received=received).model_dump(by_alias=True), status=202
    )
