import math
import zlib
from datetime import UTC, datetime

import pytest

from chalicelib import ids
from chalicelib.hashing import hash_secret
from chalicelib.keys import plaintext

SVC = "sv" + "c_"
OWNER = "usr_01HZY3K8Q4T9V6W2X5Y7Z0ABCD"
WORKSPACE = "ws_01HZY3K9R2S4T6V8W0X2Y4Z6AB"


def with_checksum(rest: str) -> str:
    """A candidate whose checksum is right, whatever the rest says."""
    return rest + plaintext.checksum(rest)


def body_of(key: str) -> str:
    return key[len(SVC) : -plaintext.CHECKSUM_LENGTH]


def test_a_key_without_owner_is_plain_prefix_44_characters_and_checksum() -> None:
    key = plaintext.generate_key()
    parsed = plaintext.parse_key(key)

    assert key.startswith(SVC)
    assert len(key) == len(SVC) + plaintext.PLAIN_BODY_LENGTH + plaintext.CHECKSUM_LENGTH
    assert parsed is not None and not parsed.located
    assert (parsed.owner_id, parsed.workspace_id) == (None, None)


def test_an_admin_key_carries_its_owner() -> None:
    key = plaintext.generate_key(OWNER)
    parsed = plaintext.parse_key(key)

    assert parsed is not None and parsed.located
    assert (parsed.owner_id, parsed.workspace_id) == (OWNER, None)
    assert body_of(key).startswith("1" + "Q" + OWNER.removeprefix("usr_") + "0")  # Q = 26


def test_a_workspace_key_carries_its_owner_and_workspace() -> None:
    key = plaintext.generate_key(OWNER, WORKSPACE)
    parsed = plaintext.parse_key(key)

    assert parsed is not None
    assert (parsed.owner_id, parsed.workspace_id) == (OWNER, WORKSPACE)


def test_keys_for_the_ids_we_issue_are_82_and_108_characters() -> None:
    # The lengths the README states, for a `usr_` and a `ws_` ULID.
    now = datetime.now(UTC)
    owner, workspace = ids.new_user_id(now), ids.new_workspace_id(now)

    assert len(plaintext.generate_key(owner)) == 82
    assert len(plaintext.generate_key(owner, workspace)) == 108


def test_short_owner_ids_are_carried_too() -> None:
    parsed = plaintext.parse_key(plaintext.generate_key("usr_a", "ws_1"))

    assert parsed is not None
    assert (parsed.owner_id, parsed.workspace_id) == ("usr_a", "ws_1")


@pytest.mark.parametrize(
    ("owner", "workspace"),
    [("bob", None), ("usr_" + "a" * 41, None), ("usr_a", "team-1"), ("usr_a", "ws_a_b")],
)
def test_ids_the_format_cannot_carry_give_a_plain_key(owner: str, workspace: str | None) -> None:
    parsed = plaintext.parse_key(plaintext.generate_key(owner, workspace))

    assert parsed is not None and not parsed.located


def test_every_key_carries_at_least_256_random_bits() -> None:
    assert plaintext.RANDOM_LENGTH * math.log2(62) >= 256
    assert plaintext.PLAIN_BODY_LENGTH * math.log2(62) >= 256
    randomness = body_of(plaintext.generate_key(OWNER, WORKSPACE))[-plaintext.RANDOM_LENGTH :]
    assert len(randomness) == plaintext.RANDOM_LENGTH


def test_generated_keys_differ() -> None:
    assert len({plaintext.generate_key(OWNER, WORKSPACE) for _ in range(200)}) == 200
    assert len({plaintext.generate_key() for _ in range(200)}) == 200


@pytest.mark.parametrize("workspace", [None, WORKSPACE])
def test_checksum_is_base62_crc32_of_the_rest(workspace: str | None) -> None:
    key = plaintext.generate_key(OWNER, workspace)
    rest = key[: -plaintext.CHECKSUM_LENGTH]
    value = 0
    for ch in key[-plaintext.CHECKSUM_LENGTH :]:
        value = value * 62 + plaintext.BASE62.index(ch)
    assert value == zlib.crc32(rest.encode())


def _flip_last_body_char(key: str) -> str:
    i = len(key) - plaintext.CHECKSUM_LENGTH - 1
    replacement = "A" if key[i] != "A" else "B"
    return key[:i] + replacement + key[i + 1 :]


RANDOM = "R" * 43


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
        # located-shaped, each with a correct checksum: the shape itself is wrong
        with_checksum(SVC + "2" + "5alice" + "0" + RANDOM),  # unknown version
        with_checksum(SVC + "1" + "0" + "0" + RANDOM + "RRR"),  # empty owner
        with_checksum(SVC + "1" + "f" + "a" * 41 + "0" + RANDOM),  # owner over 40
        with_checksum(SVC + "1" + "5alice" + "0" + RANDOM[:-1]),  # 42 random characters
        with_checksum(SVC + "1" + "5alice" + "0" + RANDOM + "R"),  # 44 random characters
        with_checksum(SVC + "1" + "5alice" + "z" + RANDOM),  # workspace longer than the rest
        with_checksum(SVC + "1" + "z" + RANDOM + "R" * 5),  # owner longer than the body
        with_checksum(SVC + "x" * 161),  # longer than any located body
    ],
)
def test_malformed_candidates_parse_to_none(candidate: str) -> None:
    assert plaintext.parse_key(candidate) is None


@pytest.mark.parametrize("workspace", [None, WORKSPACE])
def test_a_key_with_one_character_changed_fails_its_checksum(workspace: str | None) -> None:
    key = plaintext.generate_key(OWNER, workspace)
    assert plaintext.parse_key(_flip_last_body_char(key)) is None


def test_altered_ids_with_a_recomputed_checksum_still_parse_for_the_resolver_to_refuse() -> None:
    key = plaintext.generate_key(OWNER, WORKSPACE)
    forged = with_checksum(key[: -plaintext.CHECKSUM_LENGTH].replace(OWNER[4:], "Z" * 26))

    parsed = plaintext.parse_key(forged)

    # The format cannot tell; the stored record does (tests/functional/decisions/).
    assert parsed is not None and parsed.owner_id == "usr_" + "Z" * 26


def test_legacy_keys_parse_without_checksum() -> None:
    parsed = plaintext.parse_key("leg" + "acy_" + "AbC123-._" * 3)
    assert parsed is not None
    assert parsed.legacy and not parsed.located


def test_the_hash_of_a_key_is_sha256_hex_of_the_whole_plaintext() -> None:
    import hashlib

    key = plaintext.generate_key(OWNER, WORKSPACE)
    assert hash_secret(key) == hashlib.sha256(key.encode()).hexdigest()


def test_hint_shows_prefix_and_last_four_only() -> None:
    key = plaintext.generate_key(OWNER)
    assert plaintext.hint(key) == SVC + "..." + key[-4:]
    assert plaintext.hint("leg" + "acy_" + "zzzz1234") == "leg" + "acy_...1234"


def test_a_parsed_keys_repr_shows_its_owner_but_never_its_plaintext() -> None:
    key = plaintext.generate_key(OWNER)
    parsed = plaintext.parse_key(key)
    assert parsed is not None

    shown = repr(parsed)

    assert key not in shown
    assert key[len(plaintext.PREFIX) :] not in shown
    assert OWNER in shown
