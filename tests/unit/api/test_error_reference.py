"""The error reference every problem's `type` points at: one anchor per code, in the page the
service serves and in docs/errors.md alike."""

from __future__ import annotations

import re

from chalicelib import errors
from chalicelib.api.reference import errors_page
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
