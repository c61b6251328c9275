"""The API key's plaintext format: generation, offline checksum validation, hashing.

A key is `svc_` + a body of base62 characters + a 6-character base62 CRC32 of everything
before it (GitHub's token design): a scanner, or our own resolver, can reject a look-alike
without a database read. The body comes in two shapes, told apart by its length:

- **located** (minted today): `1` (the format's version), then the owner's id and, for a
  workspace key, its workspace's id, each as one base62 digit giving its length followed by
  the id without its `usr_` / `ws_` prefix (length 0: no workspace, an admin key), then 43
  random characters from `secrets` (256 bits). Carrying the ids lets the resolver read the
  key and its owner's membership in one round trip (README, "API keys"). They are hints,
  never authority: the SHA-256 of the whole plaintext still finds the record, and a key
  whose ids disagree with that record is refused.
- **plain** (minted before; still minted for ids the located shape cannot carry): exactly 44
  random characters (262 bits). Resolving it takes a second read for the membership.

`legacy_` keys carry no checksum; they are checked only by lookup.
"""

from __future__ import annotations

import re
import secrets
import zlib
from typing import NamedTuple

from chalicelib.hashing import hash_secret

BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
PREFIX = "svc_"
LEGACY_PREFIX = "legacy_"
CHECKSUM_LENGTH = 6  # 62**6 > 2**32, so every CRC32 fits
PLAIN_BODY_LENGTH = 44  # 44 * log2(62) ≈ 262 bits
LOCATED_VERSION = "1"
RANDOM_LENGTH = 43  # 43 * log2(62) ≈ 256.03 bits, at least the 256 a key must carry
OWNER_PREFIX = "usr_"
WORKSPACE_PREFIX = "ws_"
MAX_OWNER_LENGTH = 40  # the longest user id suffix we issue or import (ids.USER_ID)
MAX_WORKSPACE_LENGTH = len(BASE62) - 1  # what one base62 length digit can say
# The longest located body: version, two length digits, both ids at their longest, randomness.
MAX_BODY_LENGTH = 3 + MAX_OWNER_LENGTH + MAX_WORKSPACE_LENGTH + RANDOM_LENGTH

_SVC = re.compile(rf"^{PREFIX}[0-9A-Za-z]{{{PLAIN_BODY_LENGTH + CHECKSUM_LENGTH},"
                  rf"{MAX_BODY_LENGTH + CHECKSUM_LENGTH}}}$")
_OWNER = re.compile(rf"^{OWNER_PREFIX}([0-9A-Za-z]{{1,{MAX_OWNER_LENGTH}}})$")
_WORKSPACE = re.compile(rf"^{WORKSPACE_PREFIX}([0-9A-Za-z]{{1,{MAX_WORKSPACE_LENGTH}}})$")
# Legacy keys predate our format; accept any printable, space-free ASCII of sane length.
_LEGACY = re.compile(rf"^{LEGACY_PREFIX}[\x21-\x7e]{{1,200}}$")


class ParsedKey(NamedTuple):
    plaintext: str  # never in its repr (below)
    legacy: bool = False
    # What a located key says about itself (None for plain and legacy keys): its owner, and
    # for a workspace key its workspace. Unverified until the stored record agrees.
    owner_id: str | None = None
    workspace_id: str | None = None

    @property
    def digest(self) -> str:
        return hash_secret(self.plaintext)

    @property
    def located(self) -> bool:
        return self.owner_id is not None

    def __repr__(self) -> str:
        return (
            f"ParsedKey(legacy={self.legacy!r}, owner_id={self.owner_id!r},"
            f" workspace_id={self.workspace_id!r})"
        )


def _base62(number: int, width: int) -> str:
    chars = []
    while number:
        number, rest = divmod(number, 62)
        chars.append(BASE62[rest])
    return "".join(reversed(chars)).rjust(width, "0")


def checksum(text: str) -> str:
    return _base62(zlib.crc32(text.encode("ascii")), CHECKSUM_LENGTH)


def _random(length: int) -> str:
    return "".join(secrets.choice(BASE62) for _ in range(length))


def _field(suffix: str) -> str:
    return BASE62[len(suffix)] + suffix


def located_body(owner_id: str, workspace_id: str | None) -> str | None:
    """The ids part of a located body (without the randomness), or None when an id does not
    fit the format (an imported key's odd workspace id, say)."""
    owner = _OWNER.fullmatch(owner_id)
    workspace = _WORKSPACE.fullmatch(workspace_id) if workspace_id is not None else None
    if owner is None or (workspace_id is not None and workspace is None):
        return None
    bound = workspace.group(1) if workspace else ""
    return LOCATED_VERSION + _field(owner.group(1)) + _field(bound)


def generate_key(owner_id: str | None = None, workspace_id: str | None = None) -> str:
    """A new key: located when its owner (and bound workspace) are given and fit, else plain."""
    ids = located_body(owner_id, workspace_id) if owner_id is not None else None
    body = PREFIX + (ids + _random(RANDOM_LENGTH) if ids else _random(PLAIN_BODY_LENGTH))
    return body + checksum(body)


def _digit(char: str) -> int:
    return BASE62.index(char)  # the regex has already limited the body to base62


def _parse_located(body: str) -> tuple[str, str | None] | None:
    """(owner id, workspace id or None) from a located body, or None if it is not one."""
    if not body.startswith(LOCATED_VERSION):
        return None
    at = len(LOCATED_VERSION)
    owner_length = _digit(body[at])
    if not 1 <= owner_length <= MAX_OWNER_LENGTH:
        return None
    owner = body[at + 1 : at + 1 + owner_length]
    at += 1 + owner_length
    if at >= len(body):
        return None
    workspace_length = _digit(body[at])
    workspace = body[at + 1 : at + 1 + workspace_length]
    at += 1 + workspace_length
    if len(body) - at != RANDOM_LENGTH:
        return None
    return OWNER_PREFIX + owner, (WORKSPACE_PREFIX + workspace if workspace else None)


def parse_key(candidate: str) -> ParsedKey | None:
    """A well-formed key, or None. Never raises: a bad key is a result, not an error."""
    if candidate.startswith(PREFIX):
        if not _SVC.fullmatch(candidate):
            return None
        rest, tail = candidate[:-CHECKSUM_LENGTH], candidate[-CHECKSUM_LENGTH:]
        if checksum(rest) != tail:
            return None
        body = rest[len(PREFIX) :]
        if len(body) == PLAIN_BODY_LENGTH:
            return ParsedKey(candidate)
        located = _parse_located(body)
        if located is None:
            return None
        return ParsedKey(candidate, owner_id=located[0], workspace_id=located[1])
    if candidate.startswith(LEGACY_PREFIX) and _LEGACY.fullmatch(candidate):
        return ParsedKey(candidate, legacy=True)
    return None


def looks_like_key(candidate: str) -> bool:
    return candidate.startswith((PREFIX, LEGACY_PREFIX))


# ASCII, so that a hint reads (and greps) the same in every terminal and log viewer.
HINT_ELLIPSIS = "..."


def hint(plaintext: str) -> str:
    prefix = LEGACY_PREFIX if plaintext.startswith(LEGACY_PREFIX) else PREFIX
    return f"{prefix}{HINT_ELLIPSIS}{plaintext[-4:]}"
