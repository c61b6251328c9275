"""The host rule for every URL a person stores here (a trust policy's issuer, a client's
redirect URIs, a Client ID Metadata Document's URL): it names a host, never an IP address.

Why at creation: an issuer is fetched later, and only then would an address be judged (a
private one, `10.0.0.1` or `169.254.169.254`, refused as "retry later" on every exchange);
a redirect URI sends people's browsers, with an authorization code, to wherever it points. A
host name is what a certificate names and what a reader of the policy or the consent page
recognises; an address is neither. So an address is refused when the URL is stored, with a
message that names the rule, whatever its spelling.

Every spelling counts: what a URL parser, a resolver or a browser would take for an address.
The URL Standard's rule decides (as browsers and `inet_aton` read hosts): a host whose last
label is a number (decimal digits, or `0x` and hex digits) is an IPv4 address, whatever its
other labels are (`127.1`, `2130706433`, `0x7f000001`, `0177.0.0.1`, `10.0.0.1.`), and a host
in brackets, or with a `:`, is an IPv6 address (mapped, compatible, NAT64, with a zone id).
The host is first read as a browser reads it: percent-decoded, full-width digits and dots
mapped (NFKC, and the ideographic full stop), letters lower-cased.

Loopback `http` URLs are not this module's business: where they are allowed (a development
issuer in local mode, a native app's redirect, RFC 8252), the caller allows them before.
"""

from __future__ import annotations

import re
import unicodedata
from urllib.parse import unquote, urlsplit

ADDRESS_RULE = (
    "must name a host, not an IP address (10.0.0.1, [::1], 2130706433 and every other "
    "spelling of an address are refused)"
)
# The URL Standard's "ends in a number": the last label is decimal digits, or 0x and hex
# digits (even none: `0x` is the number 0).
_NUMBER = re.compile(r"[0-9]+|0x[0-9a-f]*")
# Dots a browser reads as `.` in a host (UTS 46), after NFKC has mapped the full-width ones.
_DOTS = str.maketrans({"\u3002": ".", "\uff0e": ".", "\uff61": "."})


def is_address(host: str) -> bool:
    """Whether a URL's host, as written (brackets and all), is an IP address in any spelling."""
    read = unicodedata.normalize("NFKC", unquote(host)).translate(_DOTS).lower()
    if read.startswith("[") or ":" in read:
        return True  # IPv6 (or IPvFuture): only an address is written in brackets
    labels = read.rstrip(".").split(".")
    return _NUMBER.fullmatch(labels[-1]) is not None


def _host(authority: str) -> str:
    """The host of an authority: no credentials, no port; brackets kept."""
    host = authority.rpartition("@")[2]
    if host.startswith("[") and "]" in host:
        return host[: host.index("]") + 1]
    if host.count(":") > 1:
        return host  # an IPv6 address without its brackets
    return host.partition(":")[0]


def names_an_address(url: str) -> bool:
    """Whether the URL's host is an IP address in any spelling (`is_address`). The host is
    taken as Python reads it and as a browser does (where a `\\` ends the authority too:
    `https://10.0.0.1\\@example.com/` goes to 10.0.0.1): either being an address is enough."""
    _, separator, rest = url.partition("://")
    if not separator:
        return False
    try:
        as_python = urlsplit(url).netloc
    except ValueError:
        as_python = ""
    as_browser = re.match(r"[^/\\?#]*", rest)
    authorities = {as_python, as_browser.group(0) if as_browser else ""}
    return any(is_address(_host(a)) for a in authorities if _host(a))
