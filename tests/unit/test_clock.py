"""RFC 3339 times as the service writes and reads them."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from chalicelib.clock import parse_rfc3339, rfc3339


def test_a_written_time_reads_back_as_the_same_aware_utc_time() -> None:
    moment = datetime(2026, 1, 31, 23, 59, 59, tzinfo=UTC)

    assert parse_rfc3339(rfc3339(moment)) == moment


@pytest.mark.parametrize("text", [None, ""])
def test_no_time_reads_as_none(text: str | None) -> None:
    assert parse_rfc3339(text) is None


@pytest.mark.parametrize(
    "text",
    [
        "2026-01-31 23:59:59Z",  # space separator
        "2026-01-31T23:59:59+00:00",  # offset instead of Z
        "2026-01-31T23:59:59.5Z",  # fraction
        "2026-1-31T23:59:59Z",  # unpadded month
        "2026-W05-6T23:59:59Z",  # ISO week date
        "2026-01-31T23:59:5aZ",
        "2026-13-31T23:59:59Z",  # no month 13
        "2026-02-30T23:59:59Z",  # no 30 February
        "2026-01-31T23:59:59z",
    ],
)
def test_anything_but_the_written_form_is_refused(text: str) -> None:
    with pytest.raises(ValueError) as raised:
        parse_rfc3339(text)

    assert raised.type is ValueError
