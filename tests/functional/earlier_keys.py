"""Keys as the service minted and stored them before keys carried their owner (the plain
`svc_` body): such keys stay in use until they expire or are rotated, and must keep working."""

from __future__ import annotations

from chalicelib import ids
from chalicelib.access.scopes import ADMIN, SCOPES_BY_CATEGORY, WORKSPACE
from chalicelib.keys.model import KEY_LIFETIME, ApiKey
from chalicelib.keys.plaintext import generate_key, hash_key, hint, parse_key
from chalicelib.runtime import Services


def mint_plain_key(services: Services, owner_id: str, workspace_id: str | None = None) -> str:
    """Stores a plain-format key for `owner_id` (bound to `workspace_id` if given) and returns
    its plaintext, exactly as create did before."""
    plaintext = generate_key()
    parsed = parse_key(plaintext)
    assert parsed is not None and not parsed.located
    category = WORKSPACE if workspace_id is not None else ADMIN
    now = services.clock.now()
    api_key = ApiKey(
        id=ids.new_key_id(),
        owner_id=owner_id,
        label="minted before",
        category=category,
        workspace_id=workspace_id,
        scopes=SCOPES_BY_CATEGORY[category],
        key_hash=hash_key(plaintext),
        hint=hint(plaintext),
        created_at=now,
        expires_at=now + KEY_LIFETIME,
        revealable=True,
    )
    services.keys.create(api_key, services.vault.seal(plaintext, api_key.id, owner_id))
    return plaintext
