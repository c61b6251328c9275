"""Strict parsers for untrusted input: a value is taken whole or refused (a None, a False or
an exception the edge turns into a 400), never repaired, never a 500.

Standard library only, so that any module (the authorizer's import path included) can use it.
"""

from __future__ import annotations

import base64
import json
import unicodedata
from collections.abc import Callable
from typing import Any

# Control and format characters, and lone surrogates (valid in JSON's \u escapes, but not
# encodable as UTF-8, so DynamoDB would refuse them later).
_UNPRINTABLE = ("Cc", "Cf", "Cs")


class MalformedJson(ValueError):
    pass


def json_value(raw: bytes | str) -> Any:
    """The parsed JSON, or MalformedJson (bad syntax, bad UTF-8, or nesting too deep)."""
    try:
        return json.loads(raw)
    except (ValueError, UnicodeDecodeError, RecursionError):
        raise MalformedJson from None


def is_printable(text: str) -> bool:
    return not any(unicodedata.category(ch) in _UNPRINTABLE for ch in text)


# Labels of keys and names of workspaces: what a person reads in a list, so short and plain.
MAX_TEXT_LENGTH = 100


class InvalidText(ValueError):
    """Why a label or a name was refused, worded to follow the field's name."""


# What a person typed may hold any character but control characters, bidirectional overrides
# and isolates (they reorder the text shown after them, so one label could pass for another)
# and lone surrogates (no UTF-8 carries one). Other format characters are text someone meant:
# joiners (U+200C, U+200D) make joined emoji and Persian words.
_BIDI_CONTROLS = frozenset(chr(c) for c in (*range(0x202A, 0x202F), *range(0x2066, 0x206A)))


def is_label_character(char: str) -> bool:
    return char not in _BIDI_CONTROLS and unicodedata.category(char) not in ("Cc", "Cs")


def is_label_text(text: str) -> bool:
    """The one rule for what a person reads as a name: key labels, workspace names, a
    person's name from an ID token, an MCP client's `client_name`."""
    return all(map(is_label_character, text))


def clean_text(value: Any) -> str:
    """A label or a name as stored: trimmed, 1 to 100 characters, no control characters
    (`is_label_character`).

    InvalidText otherwise. The API and the legacy-key import apply this one rule.
    """
    if value is None:
        raise InvalidText("is required")
    if not isinstance(value, str):
        raise InvalidText("must be a string")
    text = value.strip()
    if not 1 <= len(text) <= MAX_TEXT_LENGTH:
        raise InvalidText(f"must be 1 to {MAX_TEXT_LENGTH} characters")
    if not is_label_text(text):
        raise InvalidText("must not contain control characters")
    return text


def search_text(value: Any) -> str | None:
    """A search of labels as sent (`?q=`): at most 100 characters, none of them one the label
    rule refuses (`is_label_character`: no label could hold it). Trimmed; an empty or blank
    search is no search (None). InvalidText otherwise."""
    if not isinstance(value, str):
        raise InvalidText("must be a string")
    if len(value) > MAX_TEXT_LENGTH:
        raise InvalidText(f"must be at most {MAX_TEXT_LENGTH} characters")
    if not is_label_text(value):
        raise InvalidText("must not contain control characters")
    return value.strip() or None


def folded(text: str) -> str:
    """Text as a search compares it: NFKC-normalized and case-folded (Unicode's caseless
    match), so "STRASSE" finds "Straße", "ﬁle" finds "file", and a letter typed with a
    combining accent finds the same letter written precomposed."""
    return unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", text).casefold())


def encode_cursor(after: str) -> str:
    """An opaque page cursor: the id of the last item of the page, for the next to start after."""
    return base64.urlsafe_b64encode(json.dumps({"after": after}).encode()).decode().rstrip("=")


def decode_cursor(cursor: str, is_id: Callable[[str], bool]) -> str | None:
    """The id a page starts after, or None for a cursor we did not issue (`is_id` says which
    ids a cursor of this listing may carry)."""
    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        after = json_value(base64.urlsafe_b64decode(padded.encode()))["after"]
    except (ValueError, KeyError, TypeError):
        return None
    return after if isinstance(after, str) and is_id(after) else None


class ConflictingSpellings(ValueError):
    """Two spellings of one field with different values; `names` are the two as sent."""

    def __init__(self, names: tuple[str, str]):
        super().__init__(f"{names[0]} and {names[1]} disagree.")
        self.names = names


def snake_case(name: str) -> str:
    """`refreshToken` -> `refresh_token` (a name already in snake_case is unchanged)."""
    return "".join(f"_{c.lower()}" if c.isupper() else c for c in name).lstrip("_")


def camel_case(name: str) -> str:
    """`refresh_token` -> `refreshToken` (a name already in camelCase is unchanged)."""
    first, *rest = name.split("_")
    return first + "".join(part[:1].upper() + part[1:] for part in rest)


def one_spelling(body: dict[str, Any], names: set[str]) -> dict[str, Any]:
    """`body` with each field under the name its endpoint declares (`names`), whether it was
    sent in snake_case or in camelCase: REST clients that turn every body into camelCase
    (`refreshToken`) and OAuth clients that send RFC 6749's names (`refresh_token`) are both
    served. A field that neither spelling declares keeps its name (and is refused as unknown).

    Both spellings of one field with the same value count once; with different values,
    ConflictingSpellings (which one was meant is not ours to guess). A name the endpoint
    declares in both spellings (an older alias its model judges) is left to the model.
    """
    found: dict[str, Any] = {}
    sent_as: dict[str, str] = {}
    for sent, value in body.items():
        name = sent
        if sent not in names:
            name = next((n for n in (snake_case(sent), camel_case(sent)) if n in names), sent)
        if name in found:
            if found[name] != value:
                raise ConflictingSpellings((sent_as[name], sent))
            continue
        found[name] = value
        sent_as[name] = sent
    return found
