"""Forgiving parsers for untrusted input: a bad value is a None or a False, never a 500.

Standard library only, so that any module (the authorizer's import path included) can use it.
"""

from __future__ import annotations

import json
import unicodedata
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


def clean_text(value: Any) -> str:
    """A label or a name as stored: trimmed, 1 to 100 characters, no control characters.

    InvalidText otherwise. The API and the legacy-key import apply this one rule.
    """
    if value is None:
        raise InvalidText("is required")
    if not isinstance(value, str):
        raise InvalidText("must be a string")
    text = value.strip()
    if not 1 <= len(text) <= MAX_TEXT_LENGTH:
        raise InvalidText(f"must be 1 to {MAX_TEXT_LENGTH} characters")
    if not is_printable(text):
        raise InvalidText("must not contain control characters")
    return text
