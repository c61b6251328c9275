"""The API key's plaintext format: generation, offline checksum validation, hashing.

A key is `svc_` + 44 base62 characters from `secrets` (about 262 bits) + a 6-character base62
CRC32 of everything before it (GitHub's token design): a scanner, or our own resolver, can
reject a look-alike without a database read. `legacy_` keys carry no checksum; they are
checked only by lookup.
"""

from __future__ import annotations

import hashlib
import re
import secrets
import zlib
from dataclasses import dataclass, field

BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
PREFIX = "svc_"
LEGACY_PREFIX = "legacy_"
BODY_LENGTH = 44  # 44 * log2(62) ≈ 262 bits, above the 256 that decisions.md asks for
CHECKSUM_LENGTH = 6  # 62**6 > 2**32, so every CRC32 fits

_SVC = re.compile(rf"^{PREFIX}[0-9A-Za-z]{{{BODY_LENGTH + CHECKSUM_LENGTH}}}$")
# Legacy keys predate our format; accept any printable, space-free ASCII of sane length.
_LEGACY = re.compile(rf"^{LEGACY_PREFIX}[\x21-\x7e]{{1,200}}$")


@dataclass(frozen=True)
class ParsedKey:
    plaintext: str = field(repr=False)
    legacy: bool = False

    @property
    def digest(self) -> str:
        return hash_key(self.plaintext)


def _base62(number: int, width: int) -> str:
    chars = []
    while number:
        number, rest = divmod(number, 62)
        chars.append(BASE62[rest])
    return "".join(reversed(chars)).rjust(width, "0")


def checksum(text: str) -> str:
    return _base62(zlib.crc32(text.encode("ascii")), CHECKSUM_LENGTH)


def generate_key() -> str:
    body = PREFIX + "".join(secrets.choice(BASE62) for _ in range(BODY_LENGTH))
    return body + checksum(body)


def parse_key(candidate: str) -> ParsedKey | None:
    """A well-formed key, or None. Never raises: a bad key is a result, not an error."""
    if candidate.startswith(PREFIX):
        if not _SVC.match(candidate):
            return None
        body, tail = candidate[:-CHECKSUM_LENGTH], candidate[-CHECKSUM_LENGTH:]
        if checksum(body) != tail:
            return None
        return ParsedKey(candidate, legacy=False)
    if candidate.startswith(LEGACY_PREFIX) and _LEGACY.match(candidate):
        return ParsedKey(candidate, legacy=True)
    return None


def looks_like_key(candidate: str) -> bool:
    return candidate.startswith((PREFIX, LEGACY_PREFIX))


def hash_key(plaintext: str) -> str:
    """The lookup key: SHA-256 of the whole plaintext, hex. Secrets are compared only this way."""
    return hashlib.sha256(plaintext.encode("utf-8")).hexdigest()


# ASCII, so that a hint reads (and greps) the same in every terminal and log viewer.
HINT_ELLIPSIS = "..."


def hint(plaintext: str) -> str:
    prefix = LEGACY_PREFIX if plaintext.startswith(LEGACY_PREFIX) else PREFIX
    return f"{prefix}{HINT_ELLIPSIS}{plaintext[-4:]}"
