"""`POST /v1/auth/secret-scanning/github`: leaked-key reports from GitHub's secret scanning.

No bearer credential: the request is authenticated by GitHub's signature over the raw body
(scanning/github.py), checked before anything in the body is read. 401 when it does not
verify (nothing is revoked), 503 when GitHub's key list cannot be had.
"""

from __future__ import annotations

from chalice import Response

from chalicelib import errors, strict_parsing
from chalicelib.access.headers import origin
from chalicelib.api import edge
from chalicelib.api import secret_scanning_models as models
from chalicelib.api.operations import Answer, Operations, validated
from chalicelib.errors import DependencyUnavailable
from chalicelib.runtime import services
from chalicelib.scanning.github import (
    IDENTIFIER_HEADER,
    SIGNATURE_HEADER,
    KeyListUnavailable,
    verify,
)

blueprint = Operations(__name__)
PATH = "/v1/auth/secret-scanning/github"
# Reports are machine-made batches: more room than the 16 KiB of the API's own bodies.
MAX_REPORT_BYTES = 1024 * 1024


@blueprint.public(
    "POST",
    PATH,
    content_types=edge.ANY_MEDIA_TYPE,
    name="githubSecretScanningReport",
    summary="Leaked-key reports from GitHub's secret scanning",
    tag="Leaked-key reports",
    headers=models.GitHubSignature,
    body={edge.JSON: models.LeakReport},
    description=(
        "GitHub's secret scanning partner protocol. Every reported token that names one of our "
        "keys is a `true_positive` (an active one is revoked at once); anything else is a "
        "`false_positive`. Tokens are answered as their SHA-256."
    ),
    answers=(
        Answer(200, "One verdict per reported token.", models.LeakVerdicts),
        Answer(
            400,
            "The report is not GitHub's JSON array of tokens.",
            problems=(errors.INVALID_REPORT, errors.UNKNOWN_PARAMETER, errors.CREDENTIAL_IN_URL),
        ),
        # GitHub's signature authenticates the report, not a bearer credential: no challenge.
        Answer(
            401,
            "The signature does not verify (none, malformed, an unknown key, or another body): "
            "nothing was revoked.",
            problems=(errors.INVALID_SIGNATURE,),
        ),
        Answer(413, "The body is larger than 1 MiB.", problems=(errors.PAYLOAD_TOO_LARGE,)),
        Answer(415, "Send application/json.", problems=(errors.UNSUPPORTED_MEDIA_TYPE,)),
        Answer(
            503,
            "GitHub's key list or DynamoDB is unavailable: nothing was decided, retry later.",
            problems=(errors.DEPENDENCY_UNAVAILABLE,),
        ),
    ),
)
def github_report() -> Response:
    request = blueprint.current_request
    raw = edge.read_body(request, MAX_REPORT_BYTES)
    try:
        verified = verify(
            services().github_keys,
            request.headers.get(IDENTIFIER_HEADER),
            request.headers.get(SIGNATURE_HEADER),
            raw,
        )
    except KeyListUnavailable:
        raise DependencyUnavailable("GitHub's secret scanning key list") from None
    if not verified:
        raise errors.INVALID_SIGNATURE.error()
    edge.query(request, set())
    if edge.media_type(request) != edge.JSON:
        raise errors.UNSUPPORTED_MEDIA_TYPE.error()
    try:
        document = strict_parsing.json_value(raw)
    except strict_parsing.MalformedJson:
        raise errors.INVALID_REPORT.error("The report is not valid JSON.") from None
    report: models.LeakReport = validated(models.LeakReport, document)
    verdicts = services().leak_reports.handle(report.tokens(), origin(request.to_original_event()))
    return edge.json_response(verdicts)
