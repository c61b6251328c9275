"""IP allow-lists of API keys: parsing what a client sends, and checking a source address.

Standard library only (`ipaddress`, imported when first needed), so that the authorizer's
cold start pays for it only when a key with an allow-list arrives.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

MAX_CIDRS = 20


class InvalidCidr(ValueError):
    """A value that is not an IPv4 or IPv6 network (the message names it, never a secret)."""


def parse_cidrs(values: Any) -> tuple[str, ...]:
    """1 to 20 CIDR strings as their canonical spellings, without duplicates.

    A bare address is its own /32 (or /128). Host bits set (`10.0.0.1/24`) are refused
    rather than silently widened: the caller most likely meant something else.
    """
    import ipaddress

    if not isinstance(values, list) or not 1 <= len(values) <= MAX_CIDRS:
        raise InvalidCidr(
            f"allowedCidrs must be a list of 1 to {MAX_CIDRS} CIDRs, or null for any address."
        )
    found: dict[str, None] = {}
    for value in values:
        if not isinstance(value, str) or not 1 <= len(value) <= 64:
            raise InvalidCidr("Each allowed CIDR must be a string such as 203.0.113.0/24.")
        try:
            network = ipaddress.ip_network(value.strip(), strict=True)
        except ValueError:
            raise InvalidCidr(_not_a_network(value.strip())) from None
        found[str(network)] = None
    return tuple(found)


def _not_a_network(value: str) -> str:
    """Why `value` is no network: its host bits set (naming the network it is inside), or
    not a CIDR at all."""
    import ipaddress

    try:
        widened = ipaddress.ip_network(value, strict=False)
    except ValueError:
        return f"{value!r} is not an IPv4 or IPv6 CIDR (such as 203.0.113.0/24)."
    return (
        f"{value!r} has host bits set: write its network, {widened}, "
        f"or the single address {value.split('/')[0]}."
    )


def allows(cidrs: Sequence[str], source_ip: str | None) -> bool:
    """True when `source_ip` lies in one of `cidrs`. An unknown or malformed source address
    is outside every list: an allow-list fails closed."""
    import ipaddress

    if not source_ip:
        return False
    try:
        address = ipaddress.ip_address(source_ip.strip())
    except ValueError:
        return False
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped  # ::ffff:203.0.113.7 is 203.0.113.7
    for cidr in cidrs:
        try:
            if address in ipaddress.ip_network(cidr):
                return True
        except ValueError:
            continue
    return False
