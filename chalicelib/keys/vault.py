"""Plaintext keys at rest: KMS ciphertext bound to its record by the encryption context.

The context names the key id and its owner, so a ciphertext copied onto another record
(another id, or another owner) does not decrypt: KMS refuses it.
"""

from __future__ import annotations

from typing import Any

from botocore.exceptions import ClientError

from chalicelib.dependencies import failures_of


class CiphertextMismatch(Exception):
    """The ciphertext does not belong to this record (its encryption context differs)."""


def encryption_context(key_id: str, owner_id: str) -> dict[str, str]:
    return {"keyId": key_id, "ownerId": owner_id}


class KeyVault:
    def __init__(self, kms: Any, kms_key_id: str):
        self._kms = kms
        self._kms_key_id = kms_key_id

    def seal(self, plaintext: str, key_id: str, owner_id: str) -> bytes:
        with failures_of("KMS"):
            answer = self._kms.encrypt(
                KeyId=self._kms_key_id,
                Plaintext=plaintext.encode("utf-8"),
                EncryptionContext=encryption_context(key_id, owner_id),
            )
        return bytes(answer["CiphertextBlob"])

    def open(self, ciphertext: bytes, key_id: str, owner_id: str) -> str:
        with failures_of("KMS"):
            try:
                answer = self._kms.decrypt(
                    CiphertextBlob=ciphertext,
                    EncryptionContext=encryption_context(key_id, owner_id),
                )
            except ClientError as error:
                if error.response.get("Error", {}).get("Code") == "InvalidCiphertextException":
                    raise CiphertextMismatch(key_id) from None
                raise
        return bytes(answer["Plaintext"]).decode("utf-8")
