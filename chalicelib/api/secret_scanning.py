"""`POST /v1/auth/secret-scanning/github`: leaked-key reports from GitHub's secret scanning.

No bearer credential: the request is authenticated by GitHub's signature over the raw body
(scanning/github.py), checked before anything in the body is read. 401 when it does not
verify (nothing is revoked), 503 when GitHub's key list cannot be had.
"""

from __future__ import annotations

from chalice import Response

from chalicelib import errors
from chalicelib.api import edge
from chalicelib.errors import DependencyUnavailable
from chalicelib.runtime import services
from chalicelib.scanning.github import (
    IDENTIFIER_HEADER,
    SIGNATURE_HEADER,
    KeyListUnavailable,
    MalformedReport,
    parse_report,
    verify,
)

blueprint = edge.Routes(__name__)
PATH = "/v1/auth/secret-scanning/github"
# Reports are machine-made batches: more room than the 16 KiB of the API's own bodies.
MAX_REPORT_BYTES = 1024 * 1024


@blueprint.route(PATH, methods=["POST"], content_types=edge.ANY_MEDIA_TYPE)
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
        report = parse_report(raw)
    except MalformedReport as malformed:
        raise errors.INVALID_REPORT.error(str(malformed)) from None
    return edge.json_response(services().leak_reports.handle(report, edge.origin(request)))
