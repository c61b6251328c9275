"""The error reference every problem's `type` points at: one anchor per code, in the page the
service serves and in docs/errors.md alike."""

from __future__ import annotations

import re

from chalicelib import errors
from chalicelib.api.reference import anchor, error_entries, errors_page
from chalicelib.api.remedies import REMEDIES
from tools.error_docs import ERRORS_MD, render


def test_docs_errors_md_is_current() -> None:
    assert ERRORS_MD.read_text() == render(), "run: python -m tools.error_docs"


def test_every_problem_code_has_an_anchor_in_both_pages() -> None:
    page_ids = set(re.findall(r'id="([^"]+)"', errors_page()))
    markdown_ids = set(re.findall(r'<a id="([^"]+)"></a>', ERRORS_MD.read_text()))

    for code in errors.PROBLEMS:
        fragment = errors.problem_body(400, code, "x")["type"].split("#", 1)[1]
        assert fragment == code
        assert code in page_ids and code in markdown_ids


def test_every_problem_type_is_the_served_page() -> None:
    body = errors.NOT_FOUND.error().body()

    assert body["type"] == "/docs/errors#not_found"


def test_every_error_says_what_to_do_beyond_its_detail() -> None:
    entries = {anchor(shape, entry.code): entry for shape, entry in error_entries()}

    assert set(REMEDIES) == set(entries), "each code needs a remedy in chalicelib/api/remedies.py"
    for key, entry in entries.items():
        assert REMEDIES[key] and REMEDIES[key] != entry.detail
        assert f"**What to do:** {REMEDIES[key]}" in ERRORS_MD.read_text()
