"""docs/errors.md: the error reference, written from the error catalogue (chalicelib/errors.py).

The service serves the same entries at /docs/errors; every problem's `type` is
`/docs/errors#<code>`. Run after changing the catalogue (a test fails until the file is
current):

    python -m tools.error_docs
"""

from __future__ import annotations

from chalicelib.api.reference import anchor, error_entries
from chalicelib.api.remedies import REMEDIES
from chalicelib.errors import TITLES
from infra.template import PROJECT_DIR

ERRORS_MD = PROJECT_DIR / "docs" / "errors.md"


def render() -> str:
    lines = [
        "# Errors",
        "",
        "Every error the service answers is RFC 9457 `application/problem+json`:",
        '`{"type", "title", "status", "detail", "code", "error"}`. `code` is stable and safe',
        "to branch on; `error` is the same value again, for clients that read RFC 6749's member",
        "name; `detail` is for people and never holds a secret; `type` is",
        "`/docs/errors#<code>`, this page's entry for the code as the service serves it",
        "(resolve it against the API's origin). The token endpoints (`/v1/auth/exchange`,",
        "`/v1/auth/refresh`) answer RFC 6749 errors, `{\"error\", \"error_description\"}`, listed",
        "last. The full contract: `GET /openapi.json`.",
        "",
        "Each entry gives the status, the `detail` the service sends, and what to do about it.",
        "This file is written by `python -m tools.error_docs` from `chalicelib/errors.py` and",
        "`chalicelib/api/remedies.py`.",
        "",
    ]
    for shape, entry in error_entries():
        suffix = " (RFC 6749, token endpoints)" if shape == "oauth" else ""
        lines += [
            f'<a id="{anchor(shape, entry.code)}"></a>',
            f"## `{entry.code}`{suffix}",
            "",
            f"{entry.status} {TITLES.get(entry.status, 'Error')}. {entry.detail}",
            "",
            f"**What to do:** {REMEDIES[anchor(shape, entry.code)]}",
            "",
        ]
    return "\n".join(lines)


def main() -> int:
    ERRORS_MD.parent.mkdir(exist_ok=True)
    ERRORS_MD.write_text(render())
    print(f"wrote {ERRORS_MD.relative_to(PROJECT_DIR)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
