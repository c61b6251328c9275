"""Importing legacy keys: they authenticate, answer reveal with 410, and keep no plaintext."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from tests.functional.conftest import Api
from tools import import_legacy_keys as tool
from tools.import_legacy_keys import InvalidLine, LegacyKey, import_keys, parse_line

LEGACY = "leg" + "acy_" + "Q7dKx0oldsecret99"


def test_imported_legacy_plaintext_authenticates(api: Api) -> None:
    import_keys(api.services, [LegacyKey("usr_carol", "old", plaintext=LEGACY)])
    assert api.call("GET", "/v1/auth/whoami", LEGACY).json["userId"] == "usr_carol"


def test_imported_legacy_hash_authenticates(api: Api) -> None:
    digest = hashlib.sha256(LEGACY.encode()).hexdigest()
    import_keys(api.services, [LegacyKey("usr_carol", "old", sha256=digest)])
    assert api.call("GET", "/v1/auth/whoami", LEGACY).status == 200


def test_reveal_of_a_key_without_ciphertext_is_410_key_not_revealable(api: Api) -> None:
    import_keys(api.services, [LegacyKey("usr_carol", "old", plaintext=LEGACY)])
    carol = api.token("usr_carol")
    key = api.call("GET", "/v1/auth/api-keys", carol).json["keys"][0]
    assert key["revealable"] is False
    assert key["hint"] == "leg" + "acy_..." + LEGACY[-4:]
    answer = api.call("GET", f"/v1/auth/api-keys/{key['id']}/reveal", carol)
    assert answer.status == 410
    assert answer.code == "key_not_revealable"


def test_imported_workspace_legacy_key_is_bound(api: Api) -> None:
    carol = api.token("usr_carol")
    ws = api.workspace(carol)
    import_keys(
        api.services,
        [LegacyKey("usr_carol", "old", category="workspace", workspace_id=ws, plaintext=LEGACY)],
    )
    assert api.call("GET", "/v1/auth/whoami", LEGACY).json["workspaceId"] == ws
    assert api.call("GET", "/v1/auth/whoami", LEGACY, workspace="ws_" + "1" * 26).status == 403


def test_importing_twice_skips_the_second(api: Api) -> None:
    key = LegacyKey("usr_carol", "old", plaintext=LEGACY)
    assert import_keys(api.services, [key]).imported == 1
    again = import_keys(api.services, [key])
    assert (again.imported, again.skipped) == (0, 1)


def test_import_stores_no_plaintext(api: Api) -> None:
    import_keys(api.services, [LegacyKey("usr_carol", "old", plaintext=LEGACY)])
    items = api.services.dynamodb.scan(TableName="memory-auth-dev")["Items"]
    assert LEGACY not in json.dumps(items, default=str)


@pytest.mark.parametrize(
    "line",
    [
        "not json",
        "[]",
        '{"label": "x"}',
        '{"ownerId": "usr_a", "label": "x", "extra": 1}',
    ],
)
def test_bad_lines_are_rejected(line: str) -> None:
    with pytest.raises(InvalidLine):
        parse_line(line)


@pytest.mark.parametrize(
    "legacy",
    [
        LegacyKey("bob", "x", plaintext=LEGACY),
        LegacyKey("usr_a", "x", plaintext="sv" + "c_notlegacy"),
        LegacyKey("usr_a", "x", sha256="abc"),
        LegacyKey("usr_a", "x"),
        LegacyKey("usr_a", "x", category="admin", workspace_id="ws_1", plaintext=LEGACY),
        LegacyKey("usr_a", "x", category="workspace", plaintext=LEGACY),
        LegacyKey("usr_a", "bell\x07", plaintext=LEGACY),
        LegacyKey("usr_a", "line\nbreak", plaintext=LEGACY),
        LegacyKey("usr_a", "   ", plaintext=LEGACY),
        LegacyKey("usr_a", "x" * 101, plaintext=LEGACY),
        LegacyKey("usr_a", "x", category="workspace", workspace_id="team-1", plaintext=LEGACY),
        LegacyKey("usr_a", "x", plaintext=LEGACY, created_at="1969-12-31T00:00:00Z"),
    ],
    ids=[
        "owner",
        "not-legacy",
        "short-sha256",
        "neither",
        "admin-with-workspace",
        "workspace-without",
        "label-control-character",
        "label-newline",
        "label-blank",
        "label-too-long",
        "workspace-id-not-ours",
        "created-before-1970",
    ],
)
def test_invalid_keys_are_refused(api: Api, legacy: LegacyKey) -> None:
    with pytest.raises(InvalidLine):
        import_keys(api.services, [legacy])


def test_a_label_is_held_to_the_apis_rule_and_stored_trimmed(api: Api) -> None:
    import_keys(api.services, [LegacyKey("usr_carol", "  old key  ", plaintext=LEGACY)])
    carol = api.token("usr_carol")
    assert api.call("GET", "/v1/auth/api-keys", carol).json["keys"][0]["label"] == "old key"


def test_an_imported_key_lists_by_its_created_at_not_by_when_it_was_imported(
    api: Api, alice: str
) -> None:
    newer = api.create_key(alice, label="made today")
    old = LegacyKey("usr_alice", "old", plaintext=LEGACY, created_at="2025-01-02T03:04:05Z")
    import_keys(api.services, [old])
    listed = api.call("GET", "/v1/auth/api-keys", alice).json["keys"]
    assert [key["label"] for key in listed] == ["made today", "old"]
    assert listed[1]["createdAt"] == "2025-01-02T03:04:05Z"
    assert listed[0]["id"] == newer["id"]


def test_command_reports_counts_and_never_prints_the_key(
    api: Api, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tool, "connect", lambda local: api.services)
    source = tmp_path / "keys.jsonl"
    source.write_text(
        json.dumps({"ownerId": "usr_carol", "label": "old", "key": LEGACY})
        + "\n"
        + json.dumps({"ownerId": "nobody", "label": "bad", "key": LEGACY})
        + "\n"
    )
    status = tool.main([str(source)])
    out = capsys.readouterr()
    assert status == 1
    assert "imported 1, skipped 0 (already present), failed 1" in out.out
    assert "line 2: ownerId" in out.err
    assert LEGACY not in out.out + out.err
