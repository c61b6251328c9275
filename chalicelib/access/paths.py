"""The data-plane path rule: the authorizer decides only on a path no one reads as another.

The scope a data-plane request needs comes from its first segment after `/v1/`, as the path
is written (a REST API hands the authorizer the path as sent, still percent-encoded). A
backend, or a proxy before it, that normalises the path would serve
`/v1/memory/../workspaces/ws_1/members` as `/v1/workspaces/ws_1/members`, and
`/v1/memory%2F..%2Fentities/x` as `/v1/entities/x`: the decision would be about another area
than the one served. So a path is decided on only if every segment, decoded as many times as
a reader might decode it, is plain:

- no dot segment: `.` or `..`, also percent-encoded (`%2e`), also before a `;` parameter
  (`..;`, which some servers read as `..`);
- no slash or backslash inside a segment: `%2F`, `%5C` (any case, encoded again or not), `\\`;
- no empty segment (`//`, or a trailing `/`).

Anything else is refused (`invalid_path`) before any scope is chosen. Standard library only:
the authorizer's cold start imports this module.
"""

from __future__ import annotations

from urllib.parse import unquote

# A path encoded more times than this is refused: nobody's reader decodes that deep, and
# every legitimate client encodes once.
MAX_DECODINGS = 4


def is_plain_path(path: str) -> bool:
    """Whether `path` (absolute, as received) names the same resource however it is read."""
    if not path.startswith("/"):
        return False
    return all(_is_plain_segment(segment) for segment in path[1:].split("/"))


def _is_plain_segment(segment: str) -> bool:
    text = segment
    for _ in range(MAX_DECODINGS + 1):
        if not text or "/" in text or "\\" in text:  # empty, or an encoded separator
            return False
        if text.split(";", 1)[0] in (".", ".."):
            return False
        decoded = unquote(text)  # bytes that are not UTF-8 become U+FFFD: no separator
        if decoded == text:
            return True
        text = decoded
    return False
