from datetime import UTC, datetime, timedelta

from chalicelib.ids import ulid
from chalicelib.keys.model import KEY_LIFETIME, REVOKED_RETENTION, ApiKey

NOW = datetime(2026, 11, 21, 12, 0, tzinfo=UTC)


def make_key() -> ApiKey:
    return ApiKey(
        id="key_01ARZ3NDEKTSV4RRFFQ69G5FAV",
        owner_id="usr_a",
        label="k",
        category="admin",
        workspace_id=None,
        scopes=("memory",),
        key_hash="0" * 64,
        created_at=NOW,
        expires_at=NOW + KEY_LIFETIME,
    )


def test_key_is_active_until_ninety_days_after_creation() -> None:
    key = make_key()
    assert key.status(NOW + timedelta(days=89, hours=23)) == "active"
    assert key.status(NOW + timedelta(days=90)) == "expired"


def test_revoked_key_is_retained_thirty_days_then_gone() -> None:
    revoked = make_key().revoked(NOW)
    assert revoked.status(NOW) == "revoked"
    assert not revoked.gone(NOW + REVOKED_RETENTION - timedelta(seconds=1))
    assert revoked.gone(NOW + REVOKED_RETENTION)


def test_repr_shows_no_hash() -> None:
    assert "0" * 64 not in repr(make_key())


def test_a_new_key_expires_after_its_lifetime_and_its_id_carries_its_creation_time() -> None:
    created = NOW - timedelta(days=400)
    key = ApiKey.new(
        owner_id="usr_a",
        label="old",
        category="admin",
        workspace_id=None,
        scopes=("memory",),
        key_hash="0" * 64,
        hint=None,
        created_at=created,
        revealable=False,
    )
    assert key.expires_at == created + KEY_LIFETIME
    assert key.id.startswith("key_" + ulid(created)[:10])  # the 48-bit time part
    assert key.id < "key_" + ulid(NOW)
