"""Why the key lifecycle says no: each refusal a value (`KeyRefusal`), named for the rule it
applies, never for a status code or a query parameter (warehouse's caveats, unkey's key
statuses). The routes (`api/keys.py`) answer each rule with its problem, in one place.

A check that only decides returns its refusal; a step inside a change (create, rotate,
update, reveal) raises `KeyRefused` carrying it, before the change's commit point.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum, auto


class Rule(Enum):
    CATEGORY_UNKNOWN = auto()
    ADMIN_KEY_WITH_WORKSPACE = auto()  # an admin key is bound to no workspace
    WORKSPACE_KEY_WITHOUT_WORKSPACE = auto()
    SCOPES_OUTSIDE_CATEGORY = auto()
    SCOPES_BEYOND_CREATOR = auto()  # a key never gets a scope its creator lacks
    WORKSPACE_ID_MALFORMED = auto()
    NOT_A_MEMBER = auto()  # of the workspace the key would be bound to
    KEY_LIMIT = auto()
    CURSOR_NOT_OURS = auto()  # a listing's position this service did not issue
    STATUS_UNKNOWN = auto()
    NO_SUCH_KEY = auto()  # none, or another user's: indistinguishable
    KEY_REVOKED = auto()
    NOT_REVEALABLE = auto()
    SECRET_LOST = auto()  # its stored ciphertext does not open on its record
    KEY_NOT_ACTIVE = auto()
    USAGE_START_NOT_A_TIME = auto()
    USAGE_END_NOT_A_TIME = auto()
    USAGE_RANGE_BACKWARDS = auto()
    USAGE_RANGE_TOO_LONG = auto()


@dataclass(frozen=True)
class KeyRefusal:
    """A rule that said no, and what a person is told about it (None: the rule's own words,
    which the routes hold)."""

    rule: Rule
    detail: str | None = None


class KeyRefused(Exception):
    """A refusal raised from inside a change, where it cannot be returned."""

    def __init__(self, refusal: KeyRefusal) -> None:
        super().__init__(refusal.rule.name)
        self.refusal = refusal


def refused(rule: Rule, detail: str | None = None) -> KeyRefused:
    return KeyRefused(KeyRefusal(rule, detail))
