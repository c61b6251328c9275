"""GitHub's leaked-key report, validated with its declared model: every refusal is
`invalid_report` with the detail the route answers, for the first thing refused."""

from __future__ import annotations

import json
from typing import Any

import pytest

from chalicelib import errors
from chalicelib.api import secret_scanning_models
from chalicelib.api.operations import validated


def test_a_report_is_read_into_the_tokens_it_names() -> None:
    report = validated(
        secret_scanning_models.LeakReport,
        [
            {"token": "t1", "type": "svc", "url": "https://github.com/x", "source": "content"},
            {"token": "t2", "other": "ignored"},
        ],
    )

    first, second = report.tokens()
    assert (first.token, first.type, first.url, first.source) == (
        "t1",
        "svc",
        "https://github.com/x",
        "content",
    )
    assert (second.type, second.url, second.source) == ("", None, None)
    assert "t1" not in repr(first)


ARRAY = "The report must be a JSON array of 1 to 1000 objects."
TOKEN = "Each reported token needs a token string."


@pytest.mark.parametrize(
    ("document", "detail"),
    [
        ({}, ARRAY),
        ([], ARRAY),
        ([{"token": 1}] * 1001, ARRAY),
        ([1], "Each reported token must be an object."),
        ([{"type": "a"}], TOKEN),
        ([{"token": ""}], TOKEN),
        ([{"token": 1}], TOKEN),
        ([{"token": "t" * 1025}], TOKEN),
        ([{"token": "t", "url": 5}], "url must be a string of at most 2048 characters."),
        ([{"token": "t", "type": "x" * 201}], "type must be a string of at most 200 characters."),
        (
            [{"token": "t", "source": None, "type": 1}, {"token": None}],
            "type must be a string of at most 200 characters.",
        ),
        (
            [{"token": "t"}, {"token": "t", "source": []}],
            "source must be a string of at most 200 characters.",
        ),
    ],
)
def test_a_malformed_report_is_invalid_report_with_the_first_fault(
    document: Any, detail: str
) -> None:
    try:
        validated(secret_scanning_models.LeakReport, document)
    except errors.ServiceError as refused:
        answered = (refused.code, refused.detail)
    else:
        answered = ("accepted", json.dumps(document)[:40])

    assert answered == ("invalid_report", detail)
