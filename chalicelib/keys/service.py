"""The API-key lifecycle (spec §3, §4; decisions.md "API keys"), for a resolved principal."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from chalicelib import errors, ids
from chalicelib.access.policy import require_manager
from chalicelib.access.principal import Principal
from chalicelib.access.scopes import ADMIN, CATEGORIES, SCOPES_BY_CATEGORY, WORKSPACE, ordered
from chalicelib.clock import Clock
from chalicelib.keys.model import ApiKey
from chalicelib.keys.plaintext import generate_key, hash_key, hint
from chalicelib.keys.store import KeyNotActive, KeyPage, KeyStore, decode_cursor
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


class KeyService:
    def __init__(self, keys: KeyStore, workspaces: WorkspaceStore, vault: KeyVault, clock: Clock):
        self._keys = keys
        self._workspaces = workspaces
        self._vault = vault
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

    def create(self, principal: Principal, request: NewKey) -> IssuedKey:
        require_manager(principal)
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
        if request.workspace_id is not None and not ids.is_workspace_id(request.workspace_id):
            raise errors.INVALID_WORKSPACE_ID.error("workspaceId is ws_ and 26 characters.")
        if request.workspace_id is not None and not self._workspaces.is_member(
            request.workspace_id, principal.user_id
        ):
            raise errors.NOT_A_MEMBER.error()
        api_key, plaintext, ciphertext = self._issue(
            principal.user_id, request.label, category, request.workspace_id, scopes
        )
        self._keys.create(api_key, ciphertext)
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
        if ciphertext is None:
            raise errors.KEY_NOT_REVEALABLE.error()
        try:
            plaintext = self._vault.open(ciphertext, api_key.id, api_key.owner_id)
        except CiphertextMismatch:
            logger.error("stored ciphertext does not match its record", extra={"key_id": key_id})
            raise errors.KEY_NOT_REVEALABLE.error(
                "This key's stored secret cannot be recovered."
            ) from None
        logger.info("api key revealed", extra={"key_id": api_key.id})
        return IssuedKey(api_key, plaintext)

    def rotate(self, principal: Principal, key_id: str) -> IssuedKey:
        old = self._owned(principal, key_id)
        if old.status(self._clock.now()) != "active":
            raise errors.KEY_NOT_ACTIVE.error()
        self._require_scopes_of(principal, old)
        if old.workspace_id is not None and not self._workspaces.is_member(
            old.workspace_id, old.owner_id
        ):
            # Its successor would be refused on every request, as a new key would be at create.
            raise errors.NOT_A_MEMBER.error()
        successor, plaintext, ciphertext = self._issue(
            old.owner_id, old.label, old.category, old.workspace_id, old.scopes
        )
        try:
            self._keys.rotate(old, successor, ciphertext, self._clock.now())
        except KeyNotActive:
            raise errors.KEY_NOT_ACTIVE.error() from None
        logger.info("api key rotated", extra={"key_id": old.id, "successor_id": successor.id})
        return IssuedKey(successor, plaintext)

    def revoke(self, principal: Principal, key_id: str) -> None:
        api_key = self._owned(principal, key_id)
        if api_key.revoked_at is not None:
            return  # revoking twice is not an error (204 again)
        if self._keys.revoke(api_key, self._clock.now()):
            logger.info("api key revoked", extra={"key_id": api_key.id})
