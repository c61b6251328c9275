"""Redirect URI matching (chalicelib/oauth/clients.py), as properties.

The rule: a requested redirect URI matches a registered one only if it is the same string,
except that a loopback `http` redirect may name another port (RFC 8252 §7.3); scheme and host
compare without case. The oracle below says so on the raw strings, without a URL parser: a
browser, not Python's `urlsplit`, decides where a code is sent.
"""

from __future__ import annotations

import re

from hypothesis import example, given
from hypothesis import strategies as st

from chalicelib.oauth.clients import InvalidClientMetadata, check_redirect_uri, matches_redirect

LOOPBACK = re.compile(r"(http://(?:127\.0\.0\.1|\[::1\]|localhost))(?::[0-9]*)?(?=[/?#]|$)", re.I)


def same_but_port(registered: str, requested: str) -> bool:
    if registered == requested:
        return True
    a, b = LOOPBACK.match(registered), LOOPBACK.match(requested)
    if a is None or b is None or "#" in requested:
        return False
    return (a.group(1).lower(), registered[a.end() :]) == (b.group(1).lower(), requested[b.end() :])


PIECES = {
    "scheme": st.sampled_from(["http", "https", "HTTP", "com.example.app"]),
    "userinfo": st.sampled_from(["", "", "x@", "evil.example\\@", "evil.example%5C@", "a:b@"]),
    "host": st.sampled_from(
        ["127.0.0.1", "[::1]", "localhost", "LocalHost", "127.0.0.2", "[::ffff:127.0.0.1]",
         "app.example", "evil.example", "127.0.0.1.evil.example"]
    ),
    "port": st.sampled_from(["", ":", ":80", ":8080", ":65535", ":99999", ":0x50"]),
    "path": st.sampled_from(["", "/", "/cb", "/cb/", "/CB", "/cb%2F", "\\cb", "/cb/../x"]),
    "query": st.sampled_from(["", "", "?", "?a=1", "?a=2"]),
    "fragment": st.sampled_from(["", "", "", "#", "#x"]),
}
ORDER = ("scheme", "userinfo", "host", "port", "path", "query", "fragment")


def assemble(pieces: dict[str, str]) -> str:
    return pieces["scheme"] + "://" + "".join(pieces[name] for name in ORDER[1:])


@st.composite
def pairs(draw: st.DrawFn) -> tuple[str, str]:
    """(registered, requested): the second shares each piece of the first, or not."""
    registered = {name: draw(PIECES[name]) for name in ORDER}
    requested = {
        name: draw(PIECES[name]) if draw(st.booleans()) else registered[name] for name in ORDER
    }
    return assemble(registered), assemble(requested)


@given(pairs())
@example(("http://127.0.0.1/cb", "http://evil.example\\@127.0.0.1:1234/cb"))
@example(("http://127.0.0.1/cb", "http://x@127.0.0.1:1234/cb"))
def test_a_redirect_matches_only_itself_or_itself_on_another_loopback_port(
    pair: tuple[str, str],
) -> None:
    registered, requested = pair
    assert matches_redirect(registered, requested) is same_but_port(registered, requested)


@given(
    st.sampled_from(["http://127.0.0.1", "http://[::1]", "http://localhost"]),
    st.integers(1, 65535),
    st.sampled_from(["", "/", "/cb", "/cb?a=1"]),
)
def test_a_loopback_redirect_matches_on_any_port(origin: str, port: int, rest: str) -> None:
    assert matches_redirect(origin + rest, f"{origin}:{port}{rest}")


@given(st.fixed_dictionaries(PIECES).map(assemble))
@example("http://evil.example\\@127.0.0.1/cb")
def test_an_http_redirect_can_be_registered_only_for_a_loopback_host(uri: str) -> None:
    try:
        check_redirect_uri(uri)
        accepted = True
    except InvalidClientMetadata:
        accepted = False
    if uri.lower().startswith("http:"):
        assert not accepted or LOOPBACK.match(uri)
