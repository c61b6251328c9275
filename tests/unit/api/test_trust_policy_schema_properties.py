"""A trust policy's rules (chalicelib/workloads/model.py) and the document's schema for them
(api/trust_policies_models.NewTrustPolicy) say the same thing: a text the schema allows is
accepted, and a text it refuses is refused. The contract tests generate bodies from the
schema, so a rule the schema does not state turns their generated policies into 400s."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st

from chalicelib.api.trust_policies_models import NewTrustPolicy
from chalicelib.workloads import model as trust

SCHEMA = NewTrustPolicy.model_json_schema(mode="validation")["properties"]
TEXT = SCHEMA["audience"]
ISSUER = SCHEMA["issuer"]
SUBJECT = SCHEMA["subject"]
CLAIM_NAME = SCHEMA["claims"]["propertyNames"]


def allowed(schema: dict[str, Any], text: str) -> bool:
    """JSON Schema's reading of a string schema: `pattern` is a search, lengths in code points."""
    if not schema["minLength"] <= len(text) <= schema["maxLength"]:
        return False
    if re.search(schema["pattern"], text) is None:
        return False
    refused = schema.get("not", {}).get("pattern")
    return refused is None or re.search(refused, text) is None


def accepted(check: Callable[[Any], str], text: str) -> bool:
    try:
        check(text)
    except trust.InvalidPolicy:
        return False
    return True


def claim_name(name: str) -> str:
    return next(iter(trust.check_claims({name: "x"})))


# Texts near every rule: spaces around, stars, separators, controls, bidirectional controls,
# reserved claim names, URL parts.
NEAR = st.lists(
    st.sampled_from(
        list(" \t\n\x00\x85\u00a0\u202e\u2066\u200d*:/ab.é-9?#@")
        + ["https://", "http://", "repo:", "sub", "iss", ":443", "a" * 60]
    ),
    max_size=12,
).map("".join)
# Hosts near the address rule: digits, hex letters, x, dots, hyphens, a letter no number has.
HOSTS = st.builds(
    "https://{}{}".format,
    st.text(alphabet="0179afAFxXg.-", min_size=1, max_size=12),
    st.sampled_from(["", "/", ":443", "/tenant"]),
)
TEXTS = st.text(max_size=40) | NEAR | HOSTS


@given(TEXTS)
@example(" memory-service ")
@example("a\n")
@example("a\u202eb")
def test_a_policy_text_is_allowed_exactly_when_it_is_accepted(text: str) -> None:
    assert allowed(TEXT, text) == accepted(trust.check_audience, text)


@given(TEXTS)
@example("repo:acme/*")
@example("ab:cde*")
@example("ab:cd*")
@example("abcdef*")
@example(":abcde*")
@example("abcde:*")
@example("*")
@example("repo:a*b")
@example(" repo:acme/* ")
def test_a_subject_is_allowed_exactly_when_it_is_accepted(text: str) -> None:
    assert allowed(SUBJECT, text) == accepted(trust.check_subject, text)


@given(TEXTS)
@example("https://token.actions.githubusercontent.com")
@example("https://issuer.example:8443/tenant/v2.0")
@example("https://a/b?")
@example("https://user@a")
@example("https://a/#x")
@example("https://a/b c")
@example("http://127.0.0.1:9")
@example(" https://a.example ")
@example("https://10.0.0.1")
@example("https://2130706433")
@example("https://0x7f000001")
@example("https://0177.0.0.1.")
@example("https://0x")
@example("https://0xcafe")
@example("https://cafe")
@example("https://0x1x.example")
@example("https://example.123:443/a")
@example("https://1e2")
@example("https://...")
def test_an_issuer_is_allowed_exactly_when_it_is_accepted(text: str) -> None:
    assert allowed(ISSUER, text) == accepted(lambda value: trust.check_issuer(value, False), text)


@given(TEXTS)
@example("sub")
@example(" iss ")
@example("repository_owner")
def test_a_claim_name_is_allowed_exactly_when_it_is_accepted(text: str) -> None:
    assert allowed(CLAIM_NAME, text) == accepted(claim_name, text)


# What a generator makes from the patterns (as the contract tests do: `from_regex` without
# fullmatch, which may pad what `^` and `$` allow) is accepted.
@settings(max_examples=300)
@given(
    st.from_regex(SUBJECT["pattern"]).filter(lambda text: len(text) <= trust.MAX_TEXT),
    st.from_regex(ISSUER["pattern"]).filter(lambda text: len(text) <= trust.MAX_TEXT),
    st.from_regex(TEXT["pattern"]).filter(lambda text: len(text) <= trust.MAX_TEXT),
)
def test_generated_policy_texts_are_accepted(subject: str, issuer: str, text: str) -> None:
    assert trust.check_subject(subject) == subject.strip()
    assert trust.check_issuer(issuer, False) == issuer.strip()
    assert trust.check_audience(text) == text.strip()


def test_repeated_scopes_are_refused_by_the_schema_too() -> None:
    assert SCHEMA["scopes"]["uniqueItems"] is True


def test_claims_named_twice_once_trimmed_are_refused() -> None:
    try:
        trust.check_claims({"owner": "a", " owner": "a"})
    except trust.InvalidPolicy as invalid:
        assert "twice" in str(invalid)
    else:
        raise AssertionError("accepted a claim named twice")
