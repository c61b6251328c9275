"""The one hash of a secret this service stores: API keys, refresh tokens, authorization codes.

Each is a long random value, so SHA-256 alone suffices (nothing to slow a guesser down on);
the hex digest is the item's lookup key, and a presented secret is compared only through it.
Standard library only: the authorizer hashes every presented API key.
"""

from __future__ import annotations

import hashlib


def hash_secret(plaintext: str) -> str:
    """The lookup key: SHA-256 of the whole plaintext, hex. Secrets are compared only this way."""
    return hashlib.sha256(plaintext.encode("utf-8")).hexdigest()
