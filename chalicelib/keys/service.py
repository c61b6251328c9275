"""The API-key lifecycle (spec §3, §4; decisions.md "API keys"), for a resolved principal."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from chalicelib import ids
from chalicelib.access.policy import refused, require_manager
from chalicelib.access.principal import Principal
from chalicelib.access.resolution import NOT_A_MEMBER
from chalicelib.access.scopes import ADMIN, CATEGORIES, SCOPES_BY_CATEGORY, WORKSPACE, ordered
from chalicelib.clock import Clock
from chalicelib.errors import ServiceError, bad_request, forbidden, not_found
from chalicelib.keys.model import KEY_LIFETIME, ApiKey
from chalicelib.keys.plaintext import generate_key, hash_key, hint
from chalicelib.keys.store import KeyNotActive, KeyPage, KeyStore, decode_cursor
from chalicelib.keys.vault import CiphertextMismatch, KeyVault
from chalicelib.logs import logger
from chalicelib.workspaces.store import WorkspaceStore

STATUSES = ("active", "revoked", "expired")


@dataclass(frozen=True)
class NewKey:
    label: str
    category: str = ADMIN
    workspace_id: str | None = None
    scopes: Sequence[str] | None = None


@dataclass(frozen=True)
class IssuedKey:
    api_key: ApiKey
    plaintext: str = field(repr=False)


def key_not_active() -> ServiceError:
    return ServiceError(409, "key_not_active", "Only an active key can be rotated.")


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
        now = self._clock.now()
        api_key = ApiKey(
            id=ids.new_key_id(),
            owner_id=owner_id,
            label=label,
            category=category,
            workspace_id=workspace_id,
            scopes=tuple(ordered(scopes)),
            key_hash=hash_key(plaintext),
            hint=hint(plaintext),
            created_at=now,
            expires_at=now + KEY_LIFETIME,
            revealable=True,
        )
        ciphertext = self._vault.seal(plaintext, api_key.id, owner_id)
        return api_key, plaintext, ciphertext

    def create(self, principal: Principal, request: NewKey) -> IssuedKey:
        require_manager(principal)
        if request.category not in CATEGORIES:
            raise bad_request("invalid_category", "category must be 'workspace' or 'admin'.")
        if request.category == ADMIN and request.workspace_id is not None:
            raise bad_request(
                "workspace_id_not_allowed",
                "An admin key is not bound to a workspace; for a workspace key, send "
                '"category": "workspace" with the workspaceId.',
            )
        if request.category == WORKSPACE and request.workspace_id is None:
            raise bad_request(
                "workspace_id_required", "A workspace key needs the workspaceId it is bound to."
            )
        allowed = SCOPES_BY_CATEGORY[request.category]
        if request.scopes is None:
            scopes = [s for s in allowed if s in principal.scopes]
        else:
            unknown = [s for s in request.scopes if s not in allowed]
            if not request.scopes or unknown:
                raise bad_request(
                    "invalid_scope",
                    f"scopes must be a non-empty subset of {', '.join(allowed)}.",
                )
            scopes = list(dict.fromkeys(request.scopes))
        if not scopes or not set(scopes) <= principal.scopes:
            raise forbidden("insufficient_scope", "A key cannot get scopes its creator lacks.")
        if request.workspace_id is not None and not ids.is_workspace_id(request.workspace_id):
            raise bad_request("invalid_workspace_id", "workspaceId is ws_ and 26 characters.")
        if request.workspace_id is not None and not self._workspaces.is_member(
            request.workspace_id, principal.user_id
        ):
            raise refused(NOT_A_MEMBER)
        api_key, plaintext, ciphertext = self._issue(
            principal.user_id, request.label, request.category, request.workspace_id, scopes
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
                raise bad_request("invalid_parameter", "cursor is not a cursor this API issued.")
        if status is not None and status not in STATUSES:
            raise bad_request("invalid_parameter", "status must be active, revoked or expired.")
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
            raise not_found("No API key with this id.")
        return found

    def _owned(self, principal: Principal, key_id: str) -> ApiKey:
        return self._owned_with_ciphertext(principal, key_id)[0]

    @staticmethod
    def _require_scopes_of(principal: Principal, api_key: ApiKey) -> None:
        """Handing out a key (reveal, or a rotation's successor) hands out its scopes: a
        credential may only do that for keys whose scopes it holds itself."""
        if not set(api_key.scopes) <= principal.scopes:
            raise forbidden("insufficient_scope", "A key cannot get scopes its creator lacks.")

    def get(self, principal: Principal, key_id: str) -> ApiKey:
        return self._owned(principal, key_id)

    def reveal(self, principal: Principal, key_id: str) -> IssuedKey:
        api_key, ciphertext = self._owned_with_ciphertext(principal, key_id)
        now = self._clock.now()
        self._require_scopes_of(principal, api_key)
        if api_key.status(now) == "revoked":
            raise ServiceError(410, "key_revoked", "This key has been revoked.")
        if ciphertext is None:
            raise ServiceError(
                410, "key_not_revealable", "This key was created before encryption at rest."
            )
        try:
            plaintext = self._vault.open(ciphertext, api_key.id, api_key.owner_id)
        except CiphertextMismatch:
            logger.error("stored ciphertext does not match its record", extra={"key_id": key_id})
            raise ServiceError(
                410, "key_not_revealable", "This key's stored secret cannot be recovered."
            ) from None
        logger.info("api key revealed", extra={"key_id": api_key.id})
        return IssuedKey(api_key, plaintext)

    def rotate(self, principal: Principal, key_id: str) -> IssuedKey:
        old = self._owned(principal, key_id)
        if old.status(self._clock.now()) != "active":
            raise key_not_active()
        self._require_scopes_of(principal, old)
        if old.workspace_id is not None and not self._workspaces.is_member(
            old.workspace_id, old.owner_id
        ):
            # Its successor would be refused on every request, as a new key would be at create.
            raise refused(NOT_A_MEMBER)
        successor, plaintext, ciphertext = self._issue(
            old.owner_id, old.label, old.category, old.workspace_id, old.scopes
        )
        try:
            self._keys.rotate(old, successor, ciphertext, self._clock.now())
        except KeyNotActive:
            raise key_not_active() from None
        logger.info("api key rotated", extra={"key_id": old.id, "successor_id": successor.id})
        return IssuedKey(successor, plaintext)

    def revoke(self, principal: Principal, key_id: str) -> None:
        api_key = self._owned(principal, key_id)
        if api_key.revoked_at is not None:
            return  # revoking twice is not an error (204 again)
        if self._keys.revoke(api_key, self._clock.now()):
            logger.info("api key revoked", extra={"key_id": api_key.id})
