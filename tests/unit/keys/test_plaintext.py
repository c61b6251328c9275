import zlib

import pytest

from chalicelib.keys import plaintext

SVC = "sv" + "c_"


def test_generated_key_has_prefix_body_and_checksum() -> None:
    key = plaintext.generate_key()
    assert key.startswith(SVC)
    assert len(key) == len(SVC) + plaintext.BODY_LENGTH + plaintext.CHECKSUM_LENGTH
    assert plaintext.parse_key(key) is not None


def test_generated_keys_carry_at_least_256_random_bits() -> None:
    import math

    key = plaintext.generate_key()
    body = key[len(SVC) : -plaintext.CHECKSUM_LENGTH]
    assert set(body) <= set(plaintext.BASE62)
    assert len(body) * math.log2(len(plaintext.BASE62)) >= 256


def test_generated_keys_differ() -> None:
    assert len({plaintext.generate_key() for _ in range(200)}) == 200


def test_checksum_is_base62_crc32_of_the_rest() -> None:
    key = plaintext.generate_key()
    body = key[: -plaintext.CHECKSUM_LENGTH]
    crc = zlib.crc32(body.encode())
    tail = key[-plaintext.CHECKSUM_LENGTH :]
    value = 0
    for ch in tail:
        value = value * 62 + plaintext.BASE62.index(ch)
    assert value == crc


def _flip_last_body_char(key: str) -> str:
    i = len(key) - plaintext.CHECKSUM_LENGTH - 1
    replacement = "A" if key[i] != "A" else "B"
    return key[:i] + replacement + key[i + 1 :]


@pytest.mark.parametrize(
    "candidate",
    [
        "",
        SVC,
        SVC + "short",
        SVC + "x" * 60,
        SVC + "!" * 50,
        "Bearer " + SVC + "a" * 50,
        "sk_" + "a" * 50,
        "leg" + "acy_",
        "leg" + "acy_with space",
        "leg" + "acy_" + "a" * 201,
    ],
)
def test_malformed_candidates_parse_to_none(candidate: str) -> None:
    assert plaintext.parse_key(candidate) is None


def test_a_key_with_one_character_changed_fails_its_checksum() -> None:
    key = plaintext.generate_key()
    assert plaintext.parse_key(_flip_last_body_char(key)) is None


def test_legacy_keys_parse_without_checksum() -> None:
    parsed = plaintext.parse_key("leg" + "acy_" + "AbC123-._" * 3)
    assert parsed is not None
    assert parsed.legacy


def test_hash_is_sha256_hex_of_whole_plaintext() -> None:
    import hashlib

    key = plaintext.generate_key()
    assert plaintext.hash_key(key) == hashlib.sha256(key.encode()).hexdigest()


def test_hint_shows_prefix_and_last_four_only() -> None:
    key = plaintext.generate_key()
    assert plaintext.hint(key) == SVC + "..." + key[-4:]
    assert plaintext.hint("leg" + "acy_" + "zzzz1234") == "leg" + "acy_...1234"
