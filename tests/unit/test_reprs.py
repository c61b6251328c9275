"""Objects that hold a plaintext key or token never show it in their repr."""

from datetime import UTC, datetime

from chalicelib.keys.model import ApiKey
from chalicelib.keys.plaintext import generate_key, parse_key
from chalicelib.keys.service import IssuedKey
from chalicelib.sessions.access_tokens import MintedToken


def test_parsed_key_repr_hides_the_plaintext() -> None:
    key = generate_key()
    parsed = parse_key(key)
    assert parsed is not None
    assert key not in repr(parsed)


def test_issued_key_repr_hides_the_plaintext() -> None:
    key = generate_key()
    now = datetime.now(UTC)
    api_key = ApiKey("key_x", "usr_a", "l", "admin", None, (), "h", now, now)
    assert key not in repr(IssuedKey(api_key, key))


def test_minted_token_repr_hides_the_token() -> None:
    token = "ey" + "J" + "x" * 40
    assert token not in repr(MintedToken(token, 3600))
