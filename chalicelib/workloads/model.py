"""A trust policy: which workload tokens (issuer, audience, subject, claims) may be exchanged
for a token of one workspace, with which scopes and for how long; and the rules that make one
valid. Standard library only: the data-plane authorizer reads a policy on every decision.
"""

from __future__ import annotations

import base64
import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from chalicelib.strict_parsing import is_label_character

MAX_CLAIMS = 10
MAX_TEXT = 255  # issuer, audience, subject, a claim's name or value
MIN_LIFETIME = 60
MAX_LIFETIME = 3600
DEFAULT_LIFETIME = 900
# A subject pattern needs this many characters before its `*`, and one of them a separator
# (`:` or `/`): `repo:*` or `system:*` would trust every repository or every service account.
MIN_PREFIX = 6
PREFIX_SEPARATORS = (":", "/")
# Claims a policy may not match on: they are the policy's own fields, or time.
RESERVED_CLAIMS = frozenset({"iss", "aud", "sub", "exp", "iat", "nbf", "jti"})


class InvalidPolicy(ValueError):
    """A policy field breaks a rule; the message names the field and the rule (safe to show)."""


@dataclass(frozen=True)
class TrustPolicy:
    id: str
    workspace_id: str
    name: str
    issuer: str
    audience: str
    subject: str
    claims: Mapping[str, str]
    scopes: tuple[str, ...]
    max_lifetime_seconds: int
    created_at: datetime
    created_by: str  # the workspace's owner (only the owner manages policies)

    def matches(self, claims: Mapping[str, Any]) -> bool:
        """Whether verified claims satisfy this policy: issuer, audience, subject and every
        claim. Never says which condition failed (the exchange must not either)."""
        if claims.get("iss") != self.issuer:
            return False
        audiences = claims.get("aud")
        audiences = audiences if isinstance(audiences, list) else [audiences]
        if self.audience not in audiences:
            return False
        subject = claims.get("sub")
        if not isinstance(subject, str) or not subject_matches(self.subject, subject):
            return False
        return all(claims.get(name) == value for name, value in self.claims.items())


def subject_matches(pattern: str, subject: str) -> bool:
    if pattern.endswith("*"):
        return subject.startswith(pattern[:-1])
    return subject == pattern


def workload_subject(policy_id: str, subject: str) -> str:
    """`wl_` + base32 of SHA-256 of (policy id, workload sub): stable per workload, and
    different under another policy. The NUL separates the two unambiguously."""
    digest = hashlib.sha256(f"{policy_id}\0{subject}".encode()).digest()
    return "wl_" + base64.b32encode(digest).decode("ascii").rstrip("=").lower()


def _text(value: Any, name: str) -> str:
    """Stored trimmed, as a label is; a label's characters (`strict_parsing.is_label_character`):
    no control characters, bidirectional controls or lone surrogates."""
    if not isinstance(value, str):
        raise InvalidPolicy(f"{name} must be a string.")
    if len(value) > MAX_TEXT:
        raise InvalidPolicy(f"{name} must be at most {MAX_TEXT} characters.")
    text = value.strip()
    if not text:
        raise InvalidPolicy(f"{name} must not be empty.")
    if not all(map(is_label_character, text)):
        raise InvalidPolicy(f"{name} must not contain control characters.")
    return text


# An issuer is an https URL of a DNS name, an optional port and path: no credentials, query,
# fragment or whitespace (the document's `issuer` pattern states the same rule). A local stage
# also trusts its development issuer on a loopback http URL. Compiled at first use (re's
# cache), not at import: the authorizer imports this module for a policy's fields.
_ISSUER = r"https://[A-Za-z0-9.-]+(?::[0-9]{1,5})?(?:/[^?#]*)?"
_LOCAL_ISSUER = r"http://(?:127\.0\.0\.1|localhost|\[::1\])(?::[0-9]{1,5})?(?:/[^?#]*)?"


def check_issuer(value: Any, local_mode: bool) -> str:
    issuer = _text(value, "issuer")
    if any(char.isspace() for char in issuer):
        raise InvalidPolicy("issuer must be a URL without spaces.")
    if local_mode and re.fullmatch(_LOCAL_ISSUER, issuer):
        return issuer
    if not re.fullmatch(_ISSUER, issuer):
        raise InvalidPolicy(
            "issuer must be an https URL of a host name (optional port and path), without "
            "credentials, query or fragment."
        )
    # Here, not at import: the authorizer imports this module for a policy's fields.
    from chalicelib.hosts import ADDRESS_RULE, names_an_address

    if names_an_address(issuer):
        raise InvalidPolicy(f"issuer {ADDRESS_RULE}.")
    return issuer


def check_audience(value: Any) -> str:
    return _text(value, "audience")


def check_subject(value: Any) -> str:
    subject = _text(value, "subject")
    if "*" not in subject:
        return subject
    if subject.count("*") > 1 or not subject.endswith("*"):
        raise InvalidPolicy("subject may hold one '*', at its end (a prefix match).")
    prefix = subject[:-1]
    if not prefix:
        raise InvalidPolicy(
            "subject '*' alone would trust every workload of the issuer: "
            "name the repository, project or service account."
        )
    if len(prefix) < MIN_PREFIX or not any(s in prefix for s in PREFIX_SEPARATORS):
        raise InvalidPolicy(
            f"subject {subject!r} has no fixed prefix: before '*' it needs at least "
            f"{MIN_PREFIX} characters and a ':' or '/' (e.g. "
            "'repo:acme/agents:ref:refs/heads/*'), so it cannot match other owners' workloads."
        )
    return subject


def check_claims(value: Any) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise InvalidPolicy("claims must be an object of claim names to strings.")
    if len(value) > MAX_CLAIMS:
        raise InvalidPolicy(f"claims may hold at most {MAX_CLAIMS} entries.")
    checked: dict[str, str] = {}
    for sent, expected in value.items():
        name = _text(sent, "a claim's name")
        if name in RESERVED_CLAIMS:
            raise InvalidPolicy(f"claims cannot match {name!r}: use the policy's own fields.")
        if name in checked:
            raise InvalidPolicy(f"claims name {name!r} twice.")
        checked[name] = _text(expected, f"claims.{name}")
    return checked


def check_lifetime(value: Any) -> int:
    if value is None:
        return DEFAULT_LIFETIME
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidPolicy("maxLifetimeSeconds must be a whole number.")
    if not MIN_LIFETIME <= value <= MAX_LIFETIME:
        raise InvalidPolicy(
            f"maxLifetimeSeconds must be from {MIN_LIFETIME} to {MAX_LIFETIME} seconds."
        )
    return value
