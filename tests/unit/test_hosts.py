"""The host rule (chalicelib/hosts.py): a URL people store names a host, never an IP address,
in any spelling a URL parser, a resolver or a browser would read as one."""

from __future__ import annotations

import ipaddress
import socket

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from chalicelib.hosts import is_address, names_an_address

FULL_WIDTH = str.maketrans("0123456789.", "０１２３４５６７８９．")


def _part(value: int, base: str, upper: bool, zeros: int) -> str:
    if base == "hex":
        digits = format(value, "x")
        return ("0X" if upper else "0x") + "0" * zeros + (digits.upper() if upper else digits)
    if base == "oct":
        return "0" + "0" * zeros + format(value, "o")
    return str(value)


@st.composite
def ipv4_spellings(draw: st.DrawFn) -> tuple[ipaddress.IPv4Address, str]:
    """An IPv4 address and one way inet_aton and browsers read it: 1 to 4 parts (the last
    holds the remaining bytes), each decimal, octal or hex, any case, padded with zeros."""
    address = draw(st.ip_addresses(v=4))
    count = draw(st.integers(1, 4))
    packed = address.packed
    values = [*packed[: count - 1], int.from_bytes(packed[count - 1 :], "big")]
    parts = [
        _part(v, draw(st.sampled_from(["dec", "oct", "hex"])), draw(st.booleans()),
              draw(st.integers(0, 2)))
        for v in values
    ]
    return address, ".".join(parts)


@st.composite
def disguised(draw: st.DrawFn, spelling: str) -> str:
    """The spelling as a URL's host may carry it: a trailing dot, percent-encoded characters,
    full-width digits and dots (a browser maps them back)."""
    text = spelling + draw(st.sampled_from(["", "."]))
    how = draw(st.sampled_from(["plain", "percent", "full-width"]))
    if how == "percent":
        return "".join(f"%{ord(c):02X}" if draw(st.booleans()) else c for c in text)
    if how == "full-width":
        return text.translate(FULL_WIDTH)
    return text


URL_AROUND = st.tuples(
    st.sampled_from(["", "user@", "user:pw@"]),
    st.sampled_from(["", ":443", ":8443"]),
    st.sampled_from(["", "/", "/tenant/v2.0", "/.well-known/openid-configuration"]),
)


@given(ipv4_spellings(), st.data(), URL_AROUND)
@example((ipaddress.IPv4Address("127.0.0.1"), "2130706433"), None, ("", "", ""))
def test_every_spelling_of_an_ipv4_address_is_an_address(
    spelled: tuple[ipaddress.IPv4Address, str], data: st.DataObject, around: tuple[str, str, str]
) -> None:
    address, spelling = spelled
    # The spelling is a real one: the system's own parser reads this very address from it.
    assert socket.inet_aton(spelling) == address.packed
    host = spelling if data is None else data.draw(disguised(spelling))
    userinfo, port, path = around

    assert is_address(host)
    assert names_an_address(f"https://{userinfo}{host}{port}{path}")


@given(st.ip_addresses(v=6), st.sampled_from(["compressed", "exploded", "mapped", "zone"]))
@example(ipaddress.IPv6Address("::1"), "compressed")
@example(ipaddress.IPv6Address("64:ff9b::a9fe:a9fe"), "compressed")
@example(ipaddress.IPv6Address("::ffff:169.254.169.254"), "mapped")
@example(ipaddress.IPv6Address("::a9fe:a9fe"), "mapped")
def test_every_ipv6_literal_is_an_address(address: ipaddress.IPv6Address, form: str) -> None:
    text = {
        "compressed": address.compressed,
        "exploded": address.exploded,
        "mapped": f"::ffff:{ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)}",
        "zone": f"{address.compressed}%25eth0",
    }[form]

    assert names_an_address(f"https://[{text}]/")
    assert names_an_address(f"https://[{text}]:443/tenant")


@given(st.text(alphabet="0123456789abcdefxX.:%", min_size=1, max_size=20))
@example("127.1")
@example("0x7f.1")
@example("1.2.3.4.")
@example("::")
def test_whatever_the_system_reads_as_a_numeric_address_is_an_address(host: str) -> None:
    try:
        socket.getaddrinfo(host, None, flags=socket.AI_NUMERICHOST)
    except (OSError, UnicodeError):
        return  # not an address to the system: the rule may read it either way
    assert is_address(host)


LABEL = st.from_regex(r"[a-z0-9](?:[a-z0-9-]{0,8}[a-z0-9])?", fullmatch=True)
TOP_LEVEL = st.from_regex(r"[a-z][a-z0-9-]{0,6}[a-z]", fullmatch=True).filter(
    lambda label: not label.startswith("0x")
)


@given(st.lists(LABEL, max_size=3), TOP_LEVEL, st.sampled_from(["", "."]), URL_AROUND)
@example(["token", "actions", "githubusercontent"], "com", "", ("", "", ""))
@example(["10", "0", "0"], "example", "", ("", ":443", "/"))
def test_a_host_name_is_not_an_address(
    labels: list[str], top: str, dot: str, around: tuple[str, str, str]
) -> None:
    userinfo, port, path = around
    host = ".".join([*labels, top]) + dot

    assert not is_address(host)
    assert not names_an_address(f"https://{userinfo}{host}{port}{path}")


@pytest.mark.parametrize(
    "url",
    [
        "https://10.0.0.1",
        "https://169.254.169.254/latest/meta-data",
        "https://2130706433",
        "https://0x7f000001",
        "https://0177.0.0.1",
        "https://[::1]",
        "https://[::ffff:a9fe:a9fe]",
        "https://[64:ff9b::a9fe:a9fe]",
        "https://[::a9fe:a9fe]",
        "https://10.0.0.1.",
        "https://%31%30.0.0.1",
        "https://１０．０．０．１",
        "https://10。0。0。1",
        "https://example.123",
        "https://10.0.0.1\\@example.com/",  # a browser goes to 10.0.0.1
        "https://example.com\\@10.0.0.1/",  # Python reads 10.0.0.1
        "myapp://10.0.0.1/callback",
    ],
)
def test_the_addresses_people_try_are_refused(url: str) -> None:
    assert names_an_address(url)


@pytest.mark.parametrize(
    "url",
    [
        "https://token.actions.githubusercontent.com",
        "https://issuer.example:8443/tenant/v2.0",
        "https://cafe",
        "https://1e2.example",
        "https://10.0.0.1.nip.example/",
        "com.example.app:/callback",
    ],
)
def test_host_names_pass(url: str) -> None:
    assert not names_an_address(url)
