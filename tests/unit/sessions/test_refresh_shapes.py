"""The refresh token's and its family's items keep their attribute names: an item written
before the shapes were declared reads into the same record, and a record writes those names."""

from __future__ import annotations

from datetime import UTC, datetime

from chalicelib.sessions.refresh import (
    FAMILY_SHAPE,
    TOKEN_SHAPE,
    RefreshFamily,
    RefreshToken,
    family_values,
)

NOW = datetime(2026, 11, 27, 12, 0, tzinfo=UTC)
STAMP = "2026-11-27T12:00:00Z"


def test_a_stored_used_token_reads_its_use_and_successor() -> None:
    stored = {
        "userId": "u1", "familyId": "f1", "issuedAt": STAMP, "expiresAt": STAMP,
        "usedAt": STAMP, "replacedBy": "next-digest", "ttl": 1,
    }

    token = TOKEN_SHAPE.record(stored, digest="d")

    assert (token.user_id, token.family_id, token.digest) == ("u1", "f1", "d")
    assert token.expires_at == NOW and token.used_at == NOW
    assert token.successor_digest == "next-digest" and token.grant is None


def test_a_new_token_writes_its_attributes_but_not_its_use() -> None:
    token = RefreshToken("d", "u1", "f1", NOW, issued_at=NOW, retain_until=1)

    assert TOKEN_SHAPE.values(token) == {
        "userId": "u1", "familyId": "f1", "issuedAt": STAMP, "expiresAt": STAMP, "ttl": 1,
    }


def test_a_stored_grant_family_reads_its_binding_and_revocation() -> None:
    stored = {
        "userId": "u1", "familyId": "f1", "createdAt": STAMP, "ttl": 1,
        "clientId": "c1", "resource": "https://mcp.example", "scope": "memory:read",
        "workspaceId": "w1", "revokedAt": STAMP, "revokedReason": "reuse", "revokedBy": "m",
        "lastRefreshedAt": STAMP,
    }

    family = FAMILY_SHAPE.record(stored)

    assert family.grant == {
        "clientId": "c1", "resource": "https://mcp.example", "scope": "memory:read",
        "workspaceId": "w1",
    }
    assert family.revoked_at == NOW and family.revoked_by == "m"
    assert family.last_refreshed_at == NOW and family.dpop_jkt is None


def test_a_sign_in_family_has_no_grant_and_writes_its_binding_key() -> None:
    family = RefreshFamily("u1", "f1", NOW, 1, dpop_jkt="jkt")

    assert FAMILY_SHAPE.record(family_values(family)).grant is None
    assert family_values(family) == {
        "userId": "u1", "familyId": "f1", "createdAt": STAMP, "dpopJkt": "jkt", "ttl": 1,
    }


def test_a_grant_family_writes_its_binding_under_its_own_names() -> None:
    grant = {"clientId": "c1", "resource": "r", "scope": "s", "workspaceId": "w1"}
    family = RefreshFamily("u1", "f1", NOW, 1, grant=grant)

    written = family_values(family)

    assert {n: written[n] for n in grant} == grant
    assert written["dpopJkt"] is None  # left out of the item (`to_item`)
