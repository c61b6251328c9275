"""Property tests of the `htu` comparison: equal spellings of one URL compare equal, and
a URL that differs in what names the resource never does."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from chalicelib.access.dpop import normalized_url, same_url

hosts = st.from_regex(r"[a-z][a-z0-9-]{0,12}(\.[a-z][a-z0-9-]{0,12}){0,3}", fullmatch=True)
paths = st.lists(st.from_regex(r"[A-Za-z0-9_~-]{1,10}", fullmatch=True), max_size=5).map(
    lambda segments: "/" + "/".join(segments)
)
schemes = st.sampled_from(["http", "https"])
ports = st.integers(min_value=1, max_value=65535)
queries = st.from_regex(r"[A-Za-z0-9=&]{0,20}", fullmatch=True)


def _case(text: str, flips: list[bool]) -> str:
    padded = (flips + [False] * len(text))[: len(text)]
    return "".join(c.upper() if flip else c for c, flip in zip(text, padded, strict=True))


@given(schemes, hosts, paths, queries, st.lists(st.booleans(), max_size=40))
def test_case_of_scheme_and_host_default_port_query_and_fragment_do_not_matter(
    scheme: str, host: str, path: str, query: str, flips: list[bool]
) -> None:
    default = {"http": 80, "https": 443}[scheme]
    plain = f"{scheme}://{host}{path}"
    spelled = f"{_case(scheme, flips)}://{_case(host, flips[5:])}:{default}{path}?{query}#f"
    assert same_url(plain, spelled)
    assert normalized_url(spelled) == normalized_url(plain)


@given(schemes, hosts, paths, paths)
def test_another_path_is_another_url(scheme: str, host: str, path: str, other: str) -> None:
    assert same_url(f"{scheme}://{host}{path}", f"{scheme}://{host}{other}") == (
        (path or "/") == (other or "/")
    )


@given(schemes, hosts, hosts, paths)
def test_another_host_is_another_url(scheme: str, host: str, other: str, path: str) -> None:
    assert same_url(f"{scheme}://{host}{path}", f"{scheme}://{other}{path}") == (host == other)


@given(hosts, paths, ports)
def test_a_port_other_than_the_default_is_part_of_the_url(host: str, path: str, port: int) -> None:
    assert same_url(f"https://{host}{path}", f"https://{host}:{port}{path}") == (port == 443)
    assert not same_url(f"https://{host}{path}", f"http://{host}{path}")


@given(st.text(max_size=40))
def test_anything_that_is_not_an_http_url_never_matches(text: str) -> None:
    if normalized_url(text) is None:
        assert not same_url(text, text)
