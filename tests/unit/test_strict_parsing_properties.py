"""Page cursors and the label rule (chalicelib/strict_parsing.py), as properties."""

from __future__ import annotations

import base64
import json
import re
import unicodedata
from typing import Any

from hypothesis import example, given
from hypothesis import strategies as st

from chalicelib import ids, strict_parsing

# -- page cursors ------------------------------------------------------------------------------

# What a key id is, written out here rather than taken from ids.py: `key_` and 26 characters
# of Crockford's base32, nothing before or after.
KEY_ID = re.compile(r"key_[0-9A-HJKMNP-TV-Z]{26}")
key_ids = st.from_regex(KEY_ID, fullmatch=True)


def encoded(document: Any) -> str:
    return base64.urlsafe_b64encode(json.dumps(document).encode()).decode().rstrip("=")


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
    max_leaves=8,
)
# Cursors nobody issued: any text, base64 of any JSON, and `after` holding near-ids (the
# regex's `$`-ish spellings included: `from_regex` without fullmatch pads them).
foreign_cursors = (
    st.text()
    | json_values.map(encoded)
    | st.dictionaries(st.just("after"), json_values | st.from_regex(ids.KEY_ID)).map(encoded)
)


def decode_key_cursor(cursor: str) -> str | None:
    return strict_parsing.decode_cursor(cursor, ids.is_key_id)


@given(key_ids)
def test_a_cursor_round_trips_any_key_id(key_id: str) -> None:
    assert decode_key_cursor(strict_parsing.encode_cursor(key_id)) == key_id


@given(foreign_cursors)
@example(encoded({"after": "key_" + "0" * 26 + "\n"}))
def test_any_other_cursor_is_refused_as_none_or_names_a_key_id(cursor: str) -> None:
    after = decode_key_cursor(cursor)
    assert after is None or KEY_ID.fullmatch(after)


@given(key_ids, st.data())
def test_a_tampered_cursor_is_refused_or_names_a_key_id(key_id: str, data: st.DataObject) -> None:
    cursor = strict_parsing.encode_cursor(key_id)
    at = data.draw(st.integers(0, len(cursor)))
    cut = data.draw(st.integers(0, 2))
    insert = data.draw(st.text(max_size=2))
    after = decode_key_cursor(cursor[:at] + insert + cursor[at + cut :])
    assert after is None or KEY_ID.fullmatch(after)


# -- the label rule ----------------------------------------------------------------------------

# The rule as the service states it: 1 to 100 characters after trimming; no control character
# (Unicode Cc), no bidirectional override or isolate (U+202A-U+202E, U+2066-U+2069), no lone
# surrogate (no UTF-8 can carry one); every other character accepted, joiners included.
BIDI_CONTROLS = {chr(c) for c in (*range(0x202A, 0x202F), *range(0x2066, 0x206A))}


def label_rule(value: str) -> str | None:
    text = value.strip()
    if not 1 <= len(text) <= 100:
        return None
    for char in text:
        if unicodedata.category(char) in ("Cc", "Cs") or char in BIDI_CONTROLS:
            return None
    return text


SPECIAL = sorted(BIDI_CONTROLS) + [
    "\u200c", "\u200d", "\u200b", "\u200e", "\ufeff", "\u00ad", "\x00", "\x1f", "\x7f",
    "\x85", "\t", "\n", " ", "\u3000", "\ud800", "\U000e0067",
]


@st.composite
def labels(draw: st.DrawFn) -> str:
    """Any text, with up to three of the characters the rule is about put in anywhere."""
    text = draw(st.text(max_size=104))
    inserts = st.tuples(st.integers(0, 104), st.sampled_from(SPECIAL))
    for at, char in draw(st.lists(inserts, max_size=3)):
        text = text[:at] + char + text[at:]
    return text


@given(labels())
@example("\U0001f468\u200d\U0001f469\u200d\U0001f467")  # a family: three people, two joiners
@example("\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645")  # Persian, with a ZWNJ
@example("invoice \u202egpj.exe")  # a right-to-left override
def test_a_label_is_accepted_exactly_as_the_rule_says(value: str) -> None:
    expected = label_rule(value)
    try:
        accepted: str | None = strict_parsing.clean_text(value)
    except strict_parsing.InvalidText:
        accepted = None
    assert accepted == expected


@given(st.none() | st.integers() | st.lists(st.text()) | st.binary())
def test_a_label_that_is_not_a_string_is_refused(value: Any) -> None:
    try:
        strict_parsing.clean_text(value)
        refused = False
    except strict_parsing.InvalidText:
        refused = True
    assert refused
