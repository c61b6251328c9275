"""The API-key lifecycle (spec §3, §4; decisions.md "API keys"), for a resolved principal."""

from __future__ import annotations

import hmac
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from chalicelib import errors, ids
from chalicelib.access.policy import require_manager
from chalicelib.access.principal import Principal
from chalicelib.access.scopes import ADMIN, CATEGORIES, SCOPES_BY_CATEGORY, WORKSPACE, ordered
from chalicelib.clock import Clock
from chalicelib.errors import DependencyUnavailable
from chalicelib.idempotency import IdempotencyStore, IdempotentRequest
from chalicelib.keys.model import ApiKey
from chalicelib.keys.plaintext import generate_key, hash_key, hint
from chalicelib.keys.store import KeyNotActive, KeyNotCreated, KeyPage, KeyStore, decode_cursor
from chalicelib.keys.vault import CiphertextMismatch, KeyVault
from chalicelib.logs import logger
from chalicelib.workspaces.store import WorkspaceStore

STATUSES = ("active", "revoked", "expired")


@dataclass(frozen=True)
class NewKey:
    label: str
    category: object = ADMIN  # as the caller sent it: `create` judges it
    workspace_id: str | None = None
    scopes: Sequence[str] | None = None


@dataclass(frozen=True)
class IssuedKey:
    api_key: ApiKey
    plaintext: str = field(repr=False)
    replayed: bool = False  # answered again for a retry with the same Idempotency-Key


# What a 503 says when the write itself failed: its answer may have been lost after it was
# applied, so the caller must be told how to find out, or how to retry safely.
def _created_maybe(idempotent: IdempotentRequest | None) -> str:
    if idempotent is not None:
        return "The key may have been created. Retry with the same Idempotency-Key: you get it."
    return (
        "The key may have been created: list your keys (GET /v1/auth/api-keys) before "
        "creating another, or send an Idempotency-Key to make creation safe to retry."
    )


def _rotated_maybe(key_id: str, idempotent: IdempotentRequest | None) -> str:
    if idempotent is not None:
        return (
            "The rotation may have happened. Retry with the same Idempotency-Key: you get "
            "the new key if it did."
        )
    return (
        f"The rotation may have happened: GET /v1/auth/api-keys/{key_id} and look at "
        "replacedBy. If it names a key, the rotation happened and GET "
        "/v1/auth/api-keys/{replacedBy}/reveal shows the new key; if it is null, retry."
    )


class KeyService:
    def __init__(
        self,
        keys: KeyStore,
        workspaces: WorkspaceStore,
        vault: KeyVault,
        idempotency: IdempotencyStore,
        clock: Clock,
    ):
        self._keys = keys
        self._workspaces = workspaces
        self._vault = vault
        self._idempotency = idempotency
        self._clock = clock

    def _issue(
        self,
        owner_id: str,
        label: str,
        category: str,
        workspace_id: str | None,
        scopes: Sequence[str],
    ) -> tuple[ApiKey, str, bytes]:
        plaintext = generate_key()
        api_key = ApiKey.new(
            owner_id=owner_id,
            label=label,
            category=category,
            workspace_id=workspace_id,
            scopes=tuple(ordered(scopes)),
            key_hash=hash_key(plaintext),
            hint=hint(plaintext),
            created_at=self._clock.now(),
            revealable=True,
        )
        ciphertext = self._vault.seal(plaintext, api_key.id, owner_id)
        return api_key, plaintext, ciphertext

    def create(
        self, principal: Principal, request: NewKey, idempotent: IdempotentRequest | None = None
    ) -> IssuedKey:
        require_manager(principal)
        replayed = self._replay(principal, idempotent)
        if replayed is not None:
            return replayed
        category = request.category
        if not isinstance(category, str) or category not in CATEGORIES:
            raise errors.INVALID_CATEGORY.error()
        if category == ADMIN and request.workspace_id is not None:
            raise errors.WORKSPACE_ID_NOT_ALLOWED.error()
        if category == WORKSPACE and request.workspace_id is None:
            raise errors.WORKSPACE_ID_REQUIRED.error()
        allowed = SCOPES_BY_CATEGORY[category]
        if request.scopes is None:
            scopes = [s for s in allowed if s in principal.scopes]
        else:
            unknown = [s for s in request.scopes if s not in allowed]
            if not request.scopes or unknown:
                raise errors.INVALID_SCOPE.error(
                    f"scopes must be a non-empty subset of {', '.join(allowed)}."
                )
            scopes = list(dict.fromkeys(request.scopes))
        if not scopes or not set(scopes) <= principal.scopes:
            raise errors.INSUFFICIENT_SCOPE.error("A key cannot get scopes its creator lacks.")
        if request.workspace_id is not None and not (
            ids.is_workspace_id(request.workspace_id)
            and self._workspaces.is_member(request.workspace_id, principal.user_id)
        ):
            raise errors.NOT_A_MEMBER.error()
        api_key, plaintext, ciphertext = self._issue(
            principal.user_id, request.label, category, request.workspace_id, scopes
        )
        claim = self._claim(idempotent, api_key.id)
        try:
            self._keys.create(api_key, ciphertext, claim)
        except DependencyUnavailable as failure:
            raise DependencyUnavailable(failure.dependency, _created_maybe(idempotent)) from None
        except KeyNotCreated:
            # A concurrent request with the same Idempotency-Key committed first: its key is
            # the answer to both.
            replayed = self._replay(principal, idempotent)
            if replayed is None:  # it committed, yet no record: a conflict, not a race lost
                raise DependencyUnavailable("DynamoDB", _created_maybe(idempotent)) from None
            return replayed
        logger.info("api key created", extra={"key_id": api_key.id, "category": api_key.category})
        return IssuedKey(api_key, plaintext)

    def list(
        self, principal: Principal, limit: int, cursor: str | None, status: str | None
    ) -> KeyPage:
        require_manager(principal)
        after = None
        if cursor is not None:
            after = decode_cursor(cursor)
            if after is None:
                raise errors.INVALID_PARAMETER.error("cursor is not a cursor this API issued.")
        if status is not None and status not in STATUSES:
            raise errors.INVALID_PARAMETER.error("status must be active, revoked or expired.")
        now = self._clock.now()
        workspace_id = principal.workspace_id

        def keep(api_key: ApiKey) -> bool:
            if api_key.gone(now):
                return False
            if workspace_id is not None and api_key.workspace_id != workspace_id:
                return False
            return status is None or api_key.status(now) == status

        return self._keys.list(principal.user_id, limit, after, keep)

    def _owned_with_ciphertext(
        self, principal: Principal, key_id: str
    ) -> tuple[ApiKey, bytes | None]:
        """The caller's own key, or 404: another user's key is indistinguishable from none."""
        require_manager(principal)
        found = (
            self._keys.get_with_ciphertext(principal.user_id, key_id)
            if ids.is_key_id(key_id)
            else None
        )
        if found is None or found[0].gone(self._clock.now()):
            raise errors.NOT_FOUND.error("No API key with this id.")
        return found

    def _owned(self, principal: Principal, key_id: str) -> ApiKey:
        return self._owned_with_ciphertext(principal, key_id)[0]

    @staticmethod
    def _require_scopes_of(principal: Principal, api_key: ApiKey) -> None:
        """Handing out a key (reveal, or a rotation's successor) hands out its scopes: a
        credential may only do that for keys whose scopes it holds itself."""
        if not set(api_key.scopes) <= principal.scopes:
            raise errors.INSUFFICIENT_SCOPE.error("A key cannot get scopes its creator lacks.")

    def get(self, principal: Principal, key_id: str) -> ApiKey:
        return self._owned(principal, key_id)

    def reveal(self, principal: Principal, key_id: str) -> IssuedKey:
        api_key, ciphertext = self._owned_with_ciphertext(principal, key_id)
        now = self._clock.now()
        self._require_scopes_of(principal, api_key)
        if api_key.status(now) == "revoked":
            raise errors.KEY_REVOKED.error()
        plaintext = self._open(api_key, ciphertext)
        logger.info("api key revealed", extra={"key_id": api_key.id})
        return IssuedKey(api_key, plaintext)

    def _open(self, api_key: ApiKey, ciphertext: bytes | None) -> str:
        if ciphertext is None:
            raise errors.KEY_NOT_REVEALABLE.error()
        try:
            return self._vault.open(ciphertext, api_key.id, api_key.owner_id)
        except CiphertextMismatch:
            logger.error(
                "stored ciphertext does not match its record", extra={"key_id": api_key.id}
            )
            raise errors.KEY_NOT_REVEALABLE.error(
                "This key's stored secret cannot be recovered."
            ) from None

    def rotate(
        self, principal: Principal, key_id: str, idempotent: IdempotentRequest | None = None
    ) -> IssuedKey:
        old = self._owned(principal, key_id)
        replayed = self._replay(principal, idempotent)
        if replayed is not None:
            return replayed
        if old.status(self._clock.now()) != "active":
            raise errors.KEY_NOT_ACTIVE.error()
        self._require_scopes_of(principal, old)
        successor, plaintext, ciphertext = self._issue(
            old.owner_id, old.label, old.category, old.workspace_id, old.scopes
        )
        claim = self._claim(idempotent, successor.id)
        try:
            self._keys.rotate(old, successor, ciphertext, self._clock.now(), claim)
        except DependencyUnavailable as failure:
            raise DependencyUnavailable(
                failure.dependency, _rotated_maybe(old.id, idempotent)
            ) from None
        except KeyNotActive:
            # Lost to a concurrent request: if it carried the same Idempotency-Key, its
            # successor is the answer to both; otherwise the key is no longer active.
            replayed = self._replay(principal, idempotent)
            if replayed is None:
                raise errors.KEY_NOT_ACTIVE.error() from None
            return replayed
        logger.info("api key rotated", extra={"key_id": old.id, "successor_id": successor.id})
        return IssuedKey(successor, plaintext)

    # -- Idempotency-Key ---------------------------------------------------------------

    def _claim(self, idempotent: IdempotentRequest | None, result_id: str) -> dict[str, Any] | None:
        if idempotent is None:
            return None
        return self._idempotency.claim(idempotent, result_id, self._clock.now())

    def _replay(
        self, principal: Principal, idempotent: IdempotentRequest | None
    ) -> IssuedKey | None:
        """The first answer to this Idempotency-Key, given again: the same key id and, from
        the vault, the same plaintext. None when the key was not used yet; 422 when it was
        used for another request."""
        if idempotent is None:
            return None
        record = self._idempotency.find(idempotent, self._clock.now())
        if record is None:
            return None
        if not hmac.compare_digest(record.fingerprint, idempotent.fingerprint):
            raise errors.IDEMPOTENCY_KEY_REUSED.error()
        api_key, ciphertext = self._owned_with_ciphertext(principal, record.result_id)
        self._require_scopes_of(principal, api_key)
        plaintext = self._open(api_key, ciphertext)
        logger.info("api key answered again (Idempotency-Key)", extra={"key_id": api_key.id})
        return IssuedKey(api_key, plaintext, replayed=True)

    def revoke(self, principal: Principal, key_id: str) -> None:
        api_key = self._owned(principal, key_id)
        if api_key.revoked_at is not None:
            return  # revoking twice is not an error (204 again)
        if self._keys.revoke(api_key, self._clock.now()):
            logger.info("api key revoked", extra={"key_id": api_key.id})
