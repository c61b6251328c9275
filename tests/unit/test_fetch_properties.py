"""The address rule of the SSRF-safe fetcher (`fetch.is_public`), as properties.

The oracle is IANA's special-purpose address registries, transcribed here independently of
the implementation (and of Python's `is_global`): an address in a range that is not
globally reachable is never public. Hypothesis' `ip_addresses()` favours special ranges.
"""

from __future__ import annotations

import socket
from ipaddress import IPv4Address, IPv4Network, IPv6Address, IPv6Network
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from chalicelib.fetch import FetchRefused, SafeFetcher, is_public

# IANA IPv4 Special-Purpose Address Registry, "Globally Reachable: False", plus multicast
# (reachable, but never a document server) and 192.0.0.0/24 whole but for its two global
# anycast addresses.
NOT_PUBLIC_V4 = [
    IPv4Network(n)
    for n in (
        "0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16",
        "172.16.0.0/12", "192.0.2.0/24", "192.168.0.0/16", "198.18.0.0/15",
        "198.51.100.0/24", "203.0.113.0/24", "224.0.0.0/4", "240.0.0.0/4",
    )
]
V4_GLOBAL_EXCEPTIONS = {IPv4Address("192.0.0.9"), IPv4Address("192.0.0.10")}

# IANA IPv6 Special-Purpose Address Registry, "Globally Reachable: False" (2001::/23 has
# reachable exceptions, listed below), and everything outside global unicast 2000::/3.
NOT_PUBLIC_V6 = [
    IPv6Network(n)
    for n in ("2001::/23", "2001:db8::/32", "3fff::/20", "fc00::/7", "fe80::/10")
]
V6_GLOBAL_EXCEPTIONS = [
    IPv6Network(n)
    for n in ("2001:1::1/128", "2001:1::2/128", "2001:3::/32", "2001:4:112::/48",
              "2001:20::/28", "2001:30::/28")
]
GLOBAL_UNICAST = IPv6Network("2000::/3")


def public_v4(ip: IPv4Address) -> bool:
    if ip in V4_GLOBAL_EXCEPTIONS:
        return True
    if ip in IPv4Network("192.0.0.0/24"):
        return False
    return not any(ip in network for network in NOT_PUBLIC_V4)


def spellings(v4: IPv4Address, low: int) -> list[IPv6Address]:
    """The IPv6 addresses that stand for `v4` (`low`: any bits a 6to4 host may choose)."""
    return [
        IPv6Address((0xFFFF << 32) | int(v4)),  # IPv4-mapped
        IPv6Address(int(v4)),  # IPv4-compatible
        IPv6Address((0x64FF9B << 96) | int(v4)),  # NAT64, well-known prefix
        IPv6Address((0x2002 << 112) | (int(v4) << 80) | (low & (2**80 - 1))),  # 6to4
    ]


def teredo(server: IPv4Address, client: IPv4Address, flags_and_port: int) -> IPv6Address:
    return IPv6Address(
        (0x20010000 << 96)
        | (int(server) << 64)
        | ((flags_and_port & 0xFFFFFFFF) << 32)
        | (int(client) ^ 0xFFFFFFFF)
    )


@given(st.ip_addresses(v=4))
@example(IPv4Address("169.254.169.254"))
@example(IPv4Address("192.0.0.9"))
def test_an_ipv4_address_is_public_unless_iana_says_it_is_not_reachable(
    ip: IPv4Address,
) -> None:
    assert is_public(ip) is public_v4(ip)


@given(st.ip_addresses(v=4), st.integers(min_value=0, max_value=2**80 - 1))
@example(IPv4Address("169.254.169.254"), 0)
@example(IPv4Address("10.0.0.1"), 1)
def test_every_ipv6_spelling_of_an_ipv4_address_is_public_iff_that_address_is(
    v4: IPv4Address, low: int
) -> None:
    for spelling in spellings(v4, low):
        assert is_public(spelling) is is_public(v4), spelling


@given(st.ip_addresses(v=4), st.ip_addresses(v=4), st.integers(0, 2**32 - 1))
def test_a_teredo_address_is_public_iff_its_server_and_its_client_are(
    server: IPv4Address, client: IPv4Address, flags_and_port: int
) -> None:
    address = teredo(server, client, flags_and_port)
    assert is_public(address) is (is_public(server) and is_public(client))


@given(st.ip_addresses(v=6))
@example(IPv6Address("64:ff9b:1::a9fe:a9fe"))  # local-use NAT64 (RFC 8215)
@example(IPv6Address("::ffff:0:a9fe:a9fe"))  # SIIT's IPv4-translated
def test_an_ipv6_address_that_spells_no_ipv4_address_is_public_iff_reachable_unicast(
    ip: IPv6Address,
) -> None:
    in_a_spelling = (
        ip in IPv6Network("::ffff:0:0/96")
        or ip in IPv6Network("::/96")
        or ip in IPv6Network("64:ff9b::/96")
        or ip in IPv6Network("2002::/16")
        or ip in IPv6Network("2001::/32")
    )
    if in_a_spelling:
        return  # the two properties above
    reachable = ip in GLOBAL_UNICAST and (
        not any(ip in network for network in NOT_PUBLIC_V6)
        or any(ip in network for network in V6_GLOBAL_EXCEPTIONS)
    )
    assert is_public(ip) is reachable


@settings(max_examples=50)  # each try builds a TLS context: ~20 ms
@given(st.ip_addresses())
@example(IPv6Address("64:ff9b::a9fe:a9fe"))
@example(IPv6Address("::a00:1"))
def test_the_fetcher_connects_to_an_address_iff_the_rule_calls_it_public(ip: Any) -> None:
    dialled: list[tuple[str, int]] = []

    def dial(address: tuple[str, int], *args: Any, **kwargs: Any) -> Any:
        dialled.append(address)
        raise OSError("stop here")

    original = socket.create_connection
    socket.create_connection = dial  # type: ignore[assignment]
    try:
        with pytest.raises(FetchRefused) as refused:
            SafeFetcher(resolve=lambda host, port: [str(ip)]).fetch_json(
                "https://client.example/c.json"
            )
    finally:
        socket.create_connection = original
    assert dialled == ([(str(ip), 443)] if is_public(ip) else [])
    assert ("not public" in refused.value.reason) is not is_public(ip)
