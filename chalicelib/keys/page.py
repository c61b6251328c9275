"""A page of a user's API keys, as `KeyStore.list` reads it.

Apart from keys/store.py so that the authorizer, which imports the store, does not build it.
"""

from __future__ import annotations

from dataclasses import dataclass

from chalicelib.keys.model import ApiKey


@dataclass(frozen=True)
class KeyPage:
    keys: list[ApiKey]
    next_cursor: str | None
