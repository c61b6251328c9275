"""The key lifecycle's refusals are values: the domain names the rule, the routes answer it
(`api/keys.py`), naming the query parameters themselves."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from chalicelib.api.keys import PROBLEMS, problem
from chalicelib.keys import usage
from chalicelib.keys.refusals import KeyRefusal, Rule

NOW = datetime(2026, 11, 21, 12, tzinfo=UTC)


def test_every_rule_is_answered_with_a_problem_of_the_catalogue() -> None:
    assert set(PROBLEMS) == set(Rule)


@pytest.mark.parametrize(
    ("start", "end", "rule", "detail"),
    [
        ("yesterday", None, Rule.USAGE_START_NOT_A_TIME, "from must be an RFC 3339 time, such "
         "as 2026-11-21T00:00:00Z."),
        (None, "2026-11-21T00:00:00", Rule.USAGE_END_NOT_A_TIME, "to must be an RFC 3339 time, "
         "such as 2026-11-21T00:00:00Z."),
        ("2026-11-21T00:00:00Z", "2026-11-20T00:00:00Z", Rule.USAGE_RANGE_BACKWARDS,
         "from must be before to."),
        ("2025-01-01T00:00:00Z", None, Rule.USAGE_RANGE_TOO_LONG, "At most 400 days by day."),
    ],
)
def test_a_usage_range_the_rules_refuse_is_a_refusal_the_edge_answers_400_invalid_parameter(
    start: str | None, end: str | None, rule: Rule, detail: str
) -> None:
    found = usage.span("day", start, end, NOW)

    assert isinstance(found, KeyRefusal) and found.rule is rule
    answered = problem(found)
    assert (answered.status, answered.code, answered.detail) == (400, "invalid_parameter", detail)


def test_the_domains_words_name_no_query_parameter() -> None:
    found = usage.span("hour", "2026-10-01T00:00:00Z", None, NOW)

    assert isinstance(found, KeyRefusal)
    assert found.detail == "At most 31 days by hour."
