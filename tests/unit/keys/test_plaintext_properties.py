"""The key format's offline checks (chalicelib/keys/plaintext.py), as properties."""

from __future__ import annotations

import re
import zlib
from collections import Counter

from hypothesis import event, example, given, settings
from hypothesis import strategies as st

from chalicelib.keys import plaintext

SVC = "sv" + "c_"
BASE62 = plaintext.BASE62


def base62(size: int, max_size: int | None = None) -> st.SearchStrategy[str]:
    return st.text(alphabet=BASE62, min_size=size, max_size=size if max_size is None else max_size)


@st.composite
def keys(draw: st.DrawFn) -> tuple[str, str | None, str | None]:
    """(a key as we mint it, its owner id or None, its workspace id or None)."""
    if draw(st.booleans()):
        rest = SVC + draw(base62(plaintext.PLAIN_BODY_LENGTH))
        return rest + plaintext.checksum(rest), None, None
    owner = "usr_" + draw(base62(1, plaintext.MAX_OWNER_LENGTH))
    workspace = draw(st.none() | base62(1, plaintext.MAX_WORKSPACE_LENGTH).map("ws_".__add__))
    ids = plaintext.located_body(owner, workspace)
    assert ids is not None
    rest = SVC + ids + draw(base62(plaintext.RANDOM_LENGTH))
    return rest + plaintext.checksum(rest), owner, workspace


def from_base62(text: str) -> int:
    return sum(BASE62.index(char) * 62**power for power, char in enumerate(reversed(text)))


@given(st.text(alphabet=st.characters(max_codepoint=127)))
def test_the_checksum_is_crc32_in_six_base62_digits(text: str) -> None:
    digits = plaintext.checksum(text)
    assert len(digits) == 6 and set(digits) <= set(BASE62)
    assert from_base62(digits) == zlib.crc32(text.encode("ascii"))


@given(keys())
def test_a_well_formed_key_parses_and_says_whose_it_is(
    minted: tuple[str, str | None, str | None],
) -> None:
    key, owner, workspace = minted
    parsed = plaintext.parse_key(key)
    event(kind(key))
    assert parsed is not None and not parsed.legacy
    assert (parsed.owner_id, parsed.workspace_id) == (owner, workspace)


@given(keys(), st.data())
def test_a_key_with_any_single_changed_character_is_refused(
    minted: tuple[str, str | None, str | None], data: st.DataObject
) -> None:
    key = minted[0]
    at = data.draw(st.integers(0, len(key) - 1))
    char = data.draw(st.characters().filter(lambda c: c != key[at]))
    assert plaintext.parse_key(key[:at] + char + key[at + 1 :]) is None


@given(keys(), st.data())
def test_a_key_with_two_neighbours_swapped_is_refused(
    minted: tuple[str, str | None, str | None], data: st.DataObject
) -> None:
    key = minted[0]
    end = len(key) - plaintext.CHECKSUM_LENGTH
    at = data.draw(st.integers(len(SVC), end - 2).filter(lambda i: key[i] != key[i + 1]))
    assert plaintext.parse_key(key[:at] + key[at + 1] + key[at] + key[at + 2 :]) is None


# The two shapes a key may have, written out here: ours (base62 between the prefix and a
# checksum of all before it) and legacy ones (printable, space-free ASCII, 1 to 200 of it).
OURS = re.compile(SVC + r"[0-9A-Za-z]{50,}")
LEGACY = re.compile(r"legacy_[\x21-\x7e]{1,200}")


def with_checksum(rest: str) -> str:
    return rest + plaintext.checksum(rest)


# Texts a parser meets: anything, our prefix with anything, base62 bodies with and without a
# valid checksum (any length: most parse to no key), keys as we mint them, and legacy shapes.
CANDIDATES = (
    st.text()
    | st.text().map(SVC.__add__)
    | base62(50, 160).map(SVC.__add__)
    | base62(44, 160).map(SVC.__add__).map(with_checksum)
    | keys().map(lambda minted: minted[0])
    | st.from_regex(r"^legacy_[\x21-\x7e]{1,200}$")  # `$` lets a newline follow
)


def kind(candidate: str) -> str:
    """What the parser makes of a text: refused, legacy, plain (the older shape of ours) or
    located (the shape minted today, carrying its owner and workspace)."""
    parsed = plaintext.parse_key(candidate)
    if parsed is None:
        return "refused"
    return "legacy" if parsed.legacy else "located" if parsed.located else "plain"


def test_the_candidates_draw_keys_of_every_shape_and_refusals() -> None:
    # Else the property below would hold only of refusals (no key of ours ever drawn). The
    # same counts show per run with `pytest --hypothesis-show-statistics` (its `event`s).
    drawn: Counter[str] = Counter()

    @settings(max_examples=300, derandomize=True, database=None)
    @given(CANDIDATES)
    def draw(candidate: str) -> None:
        drawn[kind(candidate)] += 1

    draw()

    assert {"refused", "legacy", "plain", "located"} <= set(drawn), drawn
    assert drawn["located"] >= 30, drawn  # a tenth of the examples at least: keys minted today


@given(CANDIDATES)
@example("legacy_" + "x\n")
def test_any_text_parses_to_none_or_to_a_key_of_one_of_the_two_shapes(candidate: str) -> None:
    parsed = plaintext.parse_key(candidate)
    event(kind(candidate))
    if parsed is None:
        return
    assert parsed.plaintext == candidate
    if parsed.legacy:
        assert LEGACY.fullmatch(candidate)
    else:
        assert OURS.fullmatch(candidate)
        assert from_base62(candidate[-6:]) == zlib.crc32(candidate[:-6].encode())
