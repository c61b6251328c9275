"""The wire shapes of /v1/workspaces/{id}/trust-policies (`api/trust_policies.py`)."""

from __future__ import annotations

from typing import Annotated

from pydantic import WithJsonSchema

from chalicelib import errors
from chalicelib.access.scopes import DATA_PLANE_SCOPES
from chalicelib.api.wire import (
    TRUST_POLICY_ID,
    UNPRINTABLE,
    VISIBLE,
    Invalid,
    Name,
    Request,
    Resource,
    Scopes,
    Time,
    UserId,
    WorkspaceId,
)
from chalicelib.workloads import model as trust

# A policy's texts (`workloads.model._text`): up to MAX_TEXT characters as sent, stored
# trimmed, not empty once trimmed; a label's characters.
_POLICY_TEXT = {
    "type": "string",
    "minLength": 1,
    "maxLength": trust.MAX_TEXT,
    "pattern": rf"^\s*(?:{VISIBLE}|{VISIBLE}[^{UNPRINTABLE}]*{VISIBLE})\s*$",
}
# `hosts.is_address` as a pattern: a host of letters, digits, dots and hyphens whose last label
# (trailing dots aside) is not a number (digits, or 0x and hex digits), or only dots. Without
# lookahead, "not a number" is spelled as the ways a label can fail to be one: a character no
# number has, a letter first, a letter after a non-zero digit, or after a leading 0 a second
# x, a hex letter, or an x that does not follow the 0 directly.
_HEX, _HEX_X = "0-9a-fA-F", "0-9a-fA-FxX"
_NOT_A_NUMBER = "|".join([
    "[A-Za-z0-9-]*[G-Wg-wYZyz-][A-Za-z0-9-]*",
    f"[a-fA-FxX][{_HEX_X}]*",
    f"[1-9][0-9]*[a-fA-FxX][{_HEX_X}]*",
    f"0[xX][{_HEX}]*[xX][{_HEX_X}]*",
    f"0[0-9]*[a-fA-F][{_HEX_X}]*",
    f"0[0-9]+[xX][{_HEX_X}]*",
])
_NAMED_HOST = rf"(?:[A-Za-z0-9.-]*\.)?(?:{_NOT_A_NUMBER})\.*|\.+"
# `workloads.model.check_issuer`: https, a host name (never an address), an optional port and
# path.
_ISSUER = (
    rf"^\s*https://(?:{_NAMED_HOST})(?::[0-9]{{1,5}})?(?:/[^?#\s{UNPRINTABLE}]*)?\s*$"
)

_RESERVED_CLAIM = rf"^\s*(?:{'|'.join(sorted(trust.RESERVED_CLAIMS))})\s*$"


def _subject_pattern() -> str:
    """`workloads.model.check_subject` as a pattern: a text without `*`, or a prefix then one
    `*`, the prefix at least MIN_PREFIX characters with a `:` or `/` among them. A pattern
    without lookahead (not every generator has it) says "at least n, one a separator" as a
    choice of where a separator stands: after k characters, k < n - 1, then n - 1 - k or more
    characters; or after n - 1 or more."""
    first = rf"[^*\s{UNPRINTABLE}]"
    char = rf"[^*{UNPRINTABLE}]"
    plain = rf"{first}(?:{char}*{first})?"
    n = trust.MIN_PREFIX
    prefixes = [f"[:/]{char}{{{n - 1},}}"]
    prefixes += [
        f"{first}{char}{{{k - 1}}}[:/]{char}{{{n - 1 - k},}}" for k in range(1, n - 1)
    ]
    prefixes.append(f"{first}{char}{{{n - 2},}}[:/]{char}*")
    return rf"^\s*(?:{plain}|(?:{'|'.join(prefixes)})\*)\s*$"


def _policy_field(name: str, rule: str) -> Invalid:
    return Invalid(errors.INVALID_TRUST_POLICY, f"{name} must be {rule}.")


class NewTrustPolicy(Request):
    """What creates a trust policy (docs/guides/workload-identity.md)."""

    name: Annotated[Name, Invalid(errors.INVALID_NAME)]
    issuer: Annotated[
        str,
        _policy_field("issuer", "an https URL"),
        WithJsonSchema(
            {**_POLICY_TEXT, "pattern": _ISSUER,
             "examples": ["https://token.actions.githubusercontent.com"],
             "description": "The workload's OIDC issuer (https, a host name: never an IP "
             "address, in any spelling; its discovery document and JWKS are fetched from it)."}
        ),
    ]
    audience: Annotated[
        str,
        _policy_field("audience", "a string"),
        WithJsonSchema({**_POLICY_TEXT, "examples": ["memory-service"],
                        "description": "The `aud` the workload's token must carry."}),
    ]
    subject: Annotated[
        str,
        _policy_field("subject", "a string"),
        WithJsonSchema(
            {**_POLICY_TEXT, "pattern": _subject_pattern(),
             "examples": ["repo:acme/agents:ref:refs/heads/main"],
             "description": "The `sub` to match: exact, or ending in `*` for a prefix "
             f"(at least {trust.MIN_PREFIX} characters and a `:` or `/` before it)."}
        ),
    ]
    claims: Annotated[
        dict[str, str] | None,
        _policy_field("claims", "an object of claim names to strings"),
        WithJsonSchema(
            {"type": "object", "maxProperties": trust.MAX_CLAIMS,
             "propertyNames": {**_POLICY_TEXT, "not": {"pattern": _RESERVED_CLAIM}},
             "additionalProperties": _POLICY_TEXT, "examples": [{"repository_owner": "acme"}],
             "description": f"Up to {trust.MAX_CLAIMS} exact matches on other claims."}
        ),
    ] = None
    scopes: Annotated[
        list[str],
        Invalid(errors.INVALID_SCOPE, "scopes must be a list of strings."),
        WithJsonSchema(
            {"type": "array", "minItems": 1, "uniqueItems": True,
             "items": {"type": "string", "enum": list(DATA_PLANE_SCOPES)},
             "description": "A subset of the workspace-key scopes."}
        ),
    ]
    max_lifetime_seconds: Annotated[
        int | None,
        _policy_field("maxLifetimeSeconds", f"a whole number from {trust.MIN_LIFETIME} to "
                      f"{trust.MAX_LIFETIME}"),
        WithJsonSchema({"type": "integer", "minimum": trust.MIN_LIFETIME,
                        "maximum": trust.MAX_LIFETIME, "default": trust.DEFAULT_LIFETIME}),
    ] = None


class TrustPolicyBody(Resource):
    id: Annotated[str, WithJsonSchema(TRUST_POLICY_ID)]
    workspace_id: WorkspaceId
    name: str
    issuer: str
    audience: str
    subject: str
    claims: dict[str, str]
    scopes: Scopes
    max_lifetime_seconds: int
    created_at: Time
    created_by: UserId

    @classmethod
    def of(cls, policy: trust.TrustPolicy) -> TrustPolicyBody:
        return cls.model_validate(policy, from_attributes=True)


class TrustPolicyList(Resource):
    trust_policies: list[TrustPolicyBody]
