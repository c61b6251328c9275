"""The data-plane path rule (chalicelib/access/paths.py): a path is plain exactly when no way
of reading it (decoding it once, twice, ...; a backslash read as a slash; dot segments
removed, `..;` read as `..`; empty segments collapsed) moves a segment boundary."""

from __future__ import annotations

from urllib.parse import unquote

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from chalicelib.access.paths import MAX_DECODINGS, is_plain_path


def decoded(text: str, times: int) -> str:
    for _ in range(times):
        text = unquote(text)
    return text


def read(path: str, decodings: int) -> list[str]:
    """The segments a normalising reader finds: the whole path decoded, `\\` as `/`, dot
    segments removed (a `;` parameter ignored), empty segments collapsed."""
    segments: list[str] = []
    for segment in decoded(path, decodings).replace("\\", "/")[1:].split("/"):
        head = segment.split(";", 1)[0]
        if head == "..":
            if segments:
                segments.pop()
        elif head != "." and segment:
            segments.append(segment)
    return segments


def segments_read_alone(path: str, decodings: int) -> list[str]:
    return [decoded(segment, decodings) for segment in path[1:].split("/")]


def every_reading_keeps_the_segments(path: str) -> bool:
    return all(
        read(path, k) == segments_read_alone(path, k) for k in range(MAX_DECODINGS + 2)
    )


def settles(path: str) -> bool:
    """Every segment is decoded to the end within MAX_DECODINGS decodings."""
    return all(
        decoded(s, MAX_DECODINGS) == decoded(s, MAX_DECODINGS + 1) for s in path[1:].split("/")
    )


PIECES = st.sampled_from(
    ["a", "memory", "x.json", ".", "..", "%2e", "%2E", "%2f", "%2F", "%5c", "%5C", "%25",
     "%252f", "%252e", "\\", ";", "..;", "%3b", "%41", "%ff", "%", ""]
)
SEGMENTS = st.lists(PIECES, max_size=3).map("".join)
PATHS = st.lists(SEGMENTS, min_size=1, max_size=6).map(lambda s: "/" + "/".join(s))


@given(PATHS)
@example("/v1/a%2Fb/%2e")  # one segment more and one less: the count alone would not tell
@example("/v1/memory/%25252525252e")
def test_a_plain_path_keeps_its_segments_under_every_reading(path: str) -> None:
    if is_plain_path(path):
        assert every_reading_keeps_the_segments(path)


@given(PATHS)
def test_a_path_refused_is_one_some_reading_changes(path: str) -> None:
    if not is_plain_path(path) and settles(path):
        assert not every_reading_keeps_the_segments(path)


@pytest.mark.parametrize(
    ("path", "plain"),
    [
        ("/v1/memory", True),
        ("/v1/memory/items/42", True),
        ("/v1/memory/items/file.json", True),
        ("/v1/memory/a;b", True),
        ("/v1/memory/%25", True),
        ("/mcp", True),
        ("/v1/memory/../entities/x", False),
        ("/v1/memory%2F..%2Fentities/x", False),
        ("/v1/memory/../workspaces/ws_1/members", False),
        ("/v1/memory/%2e%2e/entities/x", False),
        ("/v1/memory/%2E./entities/x", False),
        ("/v1/memory/%252e%252e/entities/x", False),
        ("/v1/memory%2fx", False),
        ("/v1/memory%5Cx", False),
        ("/v1/memory%5cx", False),
        ("/v1/memory%255Cx", False),
        ("/v1/memory\\x", False),
        ("/v1/memory/..;/x", False),
        ("/v1/memory/./x", False),
        ("/v1//memory", False),
        ("/v1/memory/", False),
        ("/", False),
        ("v1/memory", False),
        ("", False),
    ],
)
def test_the_rule_on_the_paths_people_try(path: str, plain: bool) -> None:
    assert is_plain_path(path) is plain
