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
