"""No plaintext key at rest or in logs; ciphertexts bound to their own record."""

from __future__ import annotations

import io
import json
import logging

import pytest
from botocore.exceptions import ClientError

from chalicelib.keys.vault import CiphertextMismatch
from tests.functional.conftest import Api
from tools.import_legacy_keys import LegacyKey, import_keys

KEYS = "/v1/auth/api-keys"


def full_lifecycle(api: Api, alice: str) -> list[str]:
    """Every operation of the key service once; returns every plaintext it saw."""
    seen: list[str] = []
    ws = api.workspace(alice)
    admin = api.create_key(alice)
    bound = api.create_key(alice, category="workspace", workspaceId=ws)
    seen += [admin["key"], bound["key"]]
    api.call("GET", "/v1/auth/whoami", admin["key"], workspace=ws)
    api.call("GET", "/v1/auth/whoami", bound["key"])
    api.call("GET", KEYS, admin["key"])
    api.call("GET", f"{KEYS}/{bound['id']}", alice)
    revealed = api.call("GET", f"{KEYS}/{bound['id']}/reveal", alice).json["key"]
    rotated = api.call("POST", f"{KEYS}/{bound['id']}/rotate", admin["key"]).json
    seen.append(rotated["key"])
    api.call("DELETE", f"{KEYS}/{rotated['id']}", alice)
    api.call("GET", "/v1/auth/whoami", rotated["key"])  # refused: revoked
    api.call("GET", "/v1/auth/whoami", bound["key"], workspace="ws_other")  # refused
    legacy = "leg" + "acy_" + "LifecycleOld77"
    import_keys(api.services, [LegacyKey("usr_alice", "old", plaintext=legacy)])
    api.call("GET", "/v1/auth/whoami", legacy)
    seen += [revealed, legacy, alice]
    return seen


def test_no_plaintext_key_in_any_stored_item_or_log_line(
    api: Api, alice: str, capfd: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    from chalicelib.logs import logger

    caplog.set_level(logging.DEBUG)
    # The service's own JSON lines, formatted exactly as Lambda would print them.
    lines = io.StringIO()
    handler = logging.StreamHandler(lines)
    handler.setFormatter(logger.registered_formatter)
    logging.getLogger("memory-auth").addHandler(handler)
    try:
        secrets = full_lifecycle(api, alice)
    finally:
        logging.getLogger("memory-auth").removeHandler(handler)
    items = api.services.dynamodb.scan(TableName="memory-auth-dev", ConsistentRead=True)["Items"]
    assert len(items) >= 8
    stored = json.dumps(items, default=lambda b: b.hex() if isinstance(b, bytes) else str(b))
    captured = capfd.readouterr()
    logged = lines.getvalue() + captured.out + captured.err
    records = "\n".join(
        f"{r.getMessage()} {json.dumps(r.__dict__, default=str)}" for r in caplog.records
    )
    assert "api key created" in logged  # the logs were captured, so the scan means something
    for secret in secrets:
        assert secret not in stored
        assert secret not in logged
        assert secret not in records


def test_ciphertext_decrypts_only_with_its_own_records_encryption_context(
    api: Api, alice: str, bob: str
) -> None:
    mine = api.create_key(alice)
    other = api.create_key(alice)
    found = api.services.key_store.get_with_ciphertext("usr_alice", mine["id"])
    assert found is not None
    _, ciphertext = found
    assert ciphertext is not None
    vault = api.services.vault
    assert vault.open(ciphertext, mine["id"], "usr_alice") == mine["key"]
    with pytest.raises(CiphertextMismatch):
        vault.open(ciphertext, other["id"], "usr_alice")
    with pytest.raises(CiphertextMismatch):
        vault.open(ciphertext, mine["id"], "usr_bob")
    with pytest.raises(ClientError):
        api.services.kms.decrypt(CiphertextBlob=ciphertext)


def test_a_ciphertext_moved_onto_another_record_is_not_revealed(api: Api, alice: str) -> None:
    victim = api.create_key(alice, label="victim")
    decoy = api.create_key(alice, label="decoy")
    found = api.services.key_store.get_with_ciphertext("usr_alice", victim["id"])
    assert found is not None
    api.services.dynamodb.update_item(
        TableName="memory-auth-dev",
        Key={"pk": {"S": "USER#usr_alice"}, "sk": {"S": f"KEY#{decoy['id']}"}},
        UpdateExpression="SET ciphertext = :c",
        ExpressionAttributeValues={":c": {"B": found[1]}},
    )
    answer = api.call("GET", f"{KEYS}/{decoy['id']}/reveal", alice)
    assert answer.status == 410
    assert victim["key"].encode() not in answer.body


def test_plaintext_is_stored_only_as_kms_ciphertext(api: Api, alice: str) -> None:
    key = api.create_key(alice)
    items = api.services.dynamodb.scan(TableName="memory-auth-dev")["Items"]
    mine = [
        i
        for i in items
        if i.get("keyId", {}).get("S") == key["id"] and not i["sk"]["S"].startswith("EVT#")
    ]
    assert {i["pk"]["S"].split("#")[0] for i in mine} == {"USER", "CRED"}
    owner_item = next(i for i in mine if i["pk"]["S"].startswith("USER#"))
    credential_item = next(i for i in mine if i["pk"]["S"].startswith("CRED#"))
    assert "ciphertext" in owner_item
    assert "ciphertext" not in credential_item
    import hashlib

    assert credential_item["pk"]["S"] == "CRED#" + hashlib.sha256(key["key"].encode()).hexdigest()
