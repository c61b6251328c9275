"""A search of key labels (`?q=`): what is accepted (strict_parsing.search_text), how labels
are compared (strict_parsing.folded), and the OpenAPI schema of `q` agreeing with the rule."""

from __future__ import annotations

import re

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from chalicelib import strict_parsing
from chalicelib.api import keys_models as models
from chalicelib.api.operations import validated
from chalicelib.errors import ServiceError


@pytest.mark.parametrize(
    ("sent", "search"),
    [("deploy", "deploy"), ("  ci  ", "ci"), ("", None), ("   ", None), ("x" * 100, "x" * 100)],
)
def test_a_search_is_trimmed_and_a_blank_one_is_none(sent: str, search: str | None) -> None:
    assert strict_parsing.search_text(sent) == search


@pytest.mark.parametrize("sent", ["x" * 101, "a\x00b", "a\tb", "a\nb", "\u202eevil", "\u2066x"])
def test_a_search_too_long_or_with_a_control_character_is_refused(sent: str) -> None:
    with pytest.raises(strict_parsing.InvalidText):
        strict_parsing.search_text(sent)


@pytest.mark.parametrize(
    ("label", "search"),
    [
        ("Straße", "STRASSE"),
        ("Ångström", "A\u030angstro\u0308m"),
        ("ﬁle", "FILE"),
        ("ΣΊΣΥΦΟΣ", "σίσυφος"),
        ("Ｆｕｌｌ", "full"),
    ],
)
def test_folded_labels_contain_folded_searches(label: str, search: str) -> None:
    assert strict_parsing.folded(search) in strict_parsing.folded(label)


def test_folding_keeps_accents() -> None:
    assert strict_parsing.folded("e") not in strict_parsing.folded("é")


SCHEMA = models.KeyListQuery.model_json_schema()["properties"]["q"]


def schema_accepts(text: str) -> bool:
    return len(text) <= SCHEMA["maxLength"] and re.fullmatch(SCHEMA["pattern"], text) is not None


def query_accepts(text: str) -> bool:
    try:
        validated(models.KeyListQuery, {"q": text}, query=True)
    except ServiceError as refused:
        assert refused.problem.code == "invalid_parameter"
        assert "q query parameter" in str(refused.detail)
        return False
    return True


@given(st.text(max_size=110))
@example("x" * 101)
@example("a\u0085b")
@example("\u200d")
def test_the_schema_of_q_accepts_exactly_what_the_service_accepts(text: str) -> None:
    assert schema_accepts(text) == query_accepts(text)
