"""The published reference: `/openapi.json` (the contract) and `/docs/errors` (what each error
code means, the page every problem's `type` points at). No credential needed for either."""

from __future__ import annotations

import functools
import html

from chalice import Response

from chalicelib import errors
from chalicelib.api import edge, openapi
from chalicelib.api.openapi import Schema
from chalicelib.api.remedies import REMEDIES
from chalicelib.runtime import services

blueprint = edge.Routes(__name__)
PUBLIC_CACHE = {"Cache-Control": "public, max-age=300"}
# The pages are plain HTML: no script, no style, nothing from another origin, never framed.
PAGE_HEADERS = {
    "Content-Type": "text/html; charset=utf-8",
    "Content-Security-Policy": "default-src 'none'; frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    **PUBLIC_CACHE,
}


@blueprint.route("/openapi.json", methods=["GET"])
def openapi_document() -> Response:
    edge.query(blueprint.current_request, set())
    return edge.json_response(published_document(services().settings.issuer), headers=PUBLIC_CACHE)


@functools.cache
def published_document(server_url: str) -> Schema:
    """The document, built once per container (about 120 ms): it follows from the code and
    the stage's issuer alone. Shared by every request: read, never changed."""
    return openapi.document(server_url)


def error_entries() -> list[tuple[str, errors.Problem]]:
    """(shape, entry) of every documented error: problem+json codes, then RFC 6749 errors."""
    listed = [("problem", p) for p in sorted(errors.PROBLEMS.values(), key=lambda p: p.code)]
    oauth = {p.code: p for p in errors.OAUTH_ERRORS}  # one entry per code
    listed += [("oauth", p) for _, p in sorted(oauth.items())]
    return listed


def anchor(shape: str, code: str) -> str:
    """The fragment of a code's entry: the code itself for a problem (its `type` ends with
    it); RFC 6749 errors, which have no `type`, get an `oauth-` prefix."""
    return code if shape == "problem" else f"oauth-{code}"


def remedy(shape: str, code: str) -> str:
    """What the caller does about an error (`remedies.REMEDIES`), in plain text."""
    return REMEDIES.get(anchor(shape, code), "")


def errors_page() -> str:
    rows = []
    for shape, entry in error_entries():
        title = errors.TITLES.get(entry.status, "Error")
        rows.append(
            f'<section id="{anchor(shape, entry.code)}"><h2><code>{html.escape(entry.code)}'
            f"</code></h2><p>{entry.status} {html.escape(title)}"
            f"{' (RFC 6749 error, token endpoints)' if shape == 'oauth' else ''}</p>"
            f"<p>{html.escape(entry.detail)}</p>"
            f"<p>What to do: {html.escape(remedy(shape, entry.code))}</p></section>"
        )
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        "<title>memory-auth: errors</title></head><body><main><h1>Errors</h1>"
        "<p>Every error is RFC 9457 problem+json whose <code>type</code> links here and whose "
        "<code>code</code> is stable; the token endpoints answer RFC 6749 errors. "
        'The full API: <a href="../openapi.json">/openapi.json</a>.</p>'
        + "".join(rows)
        + "</main></body></html>"
    )


@blueprint.route("/docs/errors", methods=["GET"])
def error_reference() -> Response:
    edge.query(blueprint.current_request, set())
    return Response(body=errors_page(), status_code=200, headers=dict(PAGE_HEADERS))
