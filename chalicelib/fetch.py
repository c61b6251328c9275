"""Fetching a URL that a client named (its Client ID Metadata Document), without SSRF.

A `client_id` URL is chosen by whoever starts an authorization, so fetching it must never
reach anything but the public internet: `https` only; the host resolved once and every
address checked by `is_public` (public unicast only; an IPv6 spelling of an IPv4 address,
NAT64, 6to4 and the like, counts as that IPv4 address), an address literal checked as it
is, before any lookup; the connection made to that checked address (the certificate still
verified for the host name), so a second DNS answer cannot send us to `169.254.169.254` or
`10.x` (DNS rebinding); no redirects; at most `MAX_BYTES` in `TIMEOUT`
seconds, all told. In local mode only, `http` and loopback are allowed too, so the tests can
serve a document on 127.0.0.1. GitHub's published secret-scanning keys (scanning/github.py)
are fetched the same way, with a larger size limit.

Results are cached per their HTTP caching headers, at most `MAX_CACHE` seconds.
"""

from __future__ import annotations

import http.client
import ipaddress
import json
import re
import socket
import ssl
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

MAX_BYTES = 5 * 1024
TIMEOUT = 3.0  # seconds for resolving, connecting, sending and reading, together
MAX_CACHE = 24 * 3600  # seconds
DEFAULT_CACHE = 300  # seconds, when the answer says nothing about caching
_MAX_AGE = re.compile(r"(?:^|,)\s*max-age\s*=\s*\"?(\d+)\"?\s*(?:,|$)", re.IGNORECASE)

Resolve = Callable[[str, int], list[str]]


class FetchRefused(Exception):
    """The URL may not be fetched, or its answer is not usable. `reason` is safe to show."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


def system_resolve(host: str, port: int) -> list[str]:
    try:
        answers = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError):
        raise FetchRefused("its host name does not resolve") from None
    return [str(answer[4][0]) for answer in answers]


IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

# Global unicast IPv6 is allocated from 2000::/3 only (RFC 4291 §2.5.4, IANA). Outside it are
# ::/8 (IPv4-compatible, IPv4-mapped, SIIT's ::ffff:0:0:0/96, NAT64's 64:ff9b::/96 and the
# local-use 64:ff9b:1::/48), unique-local, link-local and multicast: nothing we may fetch.
_GLOBAL_UNICAST = ipaddress.IPv6Network("2000::/3")
# Inside 2000::/3, what this Python's `is_global` does not yet know is not reachable.
_NOT_GLOBAL = (ipaddress.IPv6Network("3fff::/20"),)  # documentation (RFC 9637)
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")  # RFC 6052's well-known prefix
_IPV4_COMPATIBLE = ipaddress.IPv6Network("::/96")


def embedded_ipv4(ip: ipaddress.IPv6Address) -> tuple[ipaddress.IPv4Address, ...]:
    """The IPv4 addresses an IPv6 address spells: where a kernel, a NAT64 gateway or a tunnel
    relay on our side may send a packet for it. Empty for an ordinary IPv6 address.

    Teredo (2001::/32) carries two: its server in bits 32-63 and its client, inverted, in the
    low 32 bits (`teredo` undoes the inversion). Packets go to the client through a relay,
    the server is asked when a tunnel is set up: both are checked. 6to4 (2002::/16) carries
    its router's address in bits 16-47. The local-use NAT64 prefix (RFC 8215) puts the IPv4
    address where the operator's prefix length says, which we cannot know: it lies outside
    2000::/3 and is refused whole. Network-specific NAT64 prefixes look like any address of
    their operator; only a gateway of our own could use one, and we run none. ISATAP's
    IPv4 interface ids are reached by routing to their own /64 first, so they are not here.
    """
    if ip.ipv4_mapped is not None:
        return (ip.ipv4_mapped,)
    if ip in _NAT64 or ip in _IPV4_COMPATIBLE:
        return (ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF),)
    if ip.sixtofour is not None:
        return (ip.sixtofour,)
    if ip.teredo is not None:
        return ip.teredo
    return ()


def is_public(ip: IPAddress) -> bool:
    """Public unicast only: the address rule for anything we fetch.

    IPv4: `is_global` (it also refuses 100.64/10, 192.0.0/24, documentation and benchmarking
    ranges), and not multicast. IPv6: an address that spells IPv4 addresses is public iff
    every one of them is; any other must be global unicast (2000::/3) and `is_global`.
    `is_global` alone is not enough: it calls NAT64 and IPv4-compatible addresses global, so
    [64:ff9b::a9fe:a9fe] would reach 169.254.169.254 through a NAT64 gateway.
    """
    if isinstance(ip, ipaddress.IPv4Address):
        return ip.is_global and not ip.is_multicast
    embedded = embedded_ipv4(ip)
    if embedded:
        return all(is_public(v4) for v4 in embedded)
    return (
        ip in _GLOBAL_UNICAST
        and ip.is_global
        and not any(ip in network for network in _NOT_GLOBAL)
    )


def parse_address(text: str) -> IPAddress | None:
    """An IP address (a zone id dropped), or None if `text` is not one."""
    try:
        return ipaddress.ip_address(text.split("%", 1)[0])
    except ValueError:
        return None


def _is_loopback(ip: IPAddress) -> bool:
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return ip.is_loopback


def allowed_address(address: str, local_mode: bool) -> bool:
    """`is_public`; loopback too in local mode."""
    ip = parse_address(address)
    if ip is None:
        return False
    return (local_mode and _is_loopback(ip)) or is_public(ip)


@dataclass(frozen=True)
class Fetched:
    body: Any  # the parsed JSON document
    max_age: int  # seconds it may be cached


class _PinnedHTTPSConnection(http.client.HTTPSConnection):
    """HTTPS to one already-checked address, with SNI and verification for the host name."""

    def __init__(self, host: str, port: int, address: str, timeout: float):
        super().__init__(host, port, timeout=timeout, context=ssl.create_default_context())
        self._address = address

    def connect(self) -> None:
        sock = socket.create_connection((self._address, self.port), self.timeout)
        self.sock = self._context.wrap_socket(sock, server_hostname=self.host)  # type: ignore[attr-defined]


class _PinnedHTTPConnection(http.client.HTTPConnection):
    """Plain HTTP to one already-checked address (local mode, loopback only)."""

    def __init__(self, host: str, port: int, address: str, timeout: float):
        super().__init__(host, port, timeout=timeout)
        self._address = address

    def connect(self) -> None:
        self.sock = socket.create_connection((self._address, self.port), self.timeout)


def check_fetchable(url: str, local_mode: bool) -> tuple[str, str, int]:
    """(scheme, host, port) of a URL we may fetch, else FetchRefused (no I/O). A host that is
    an address literal must be public (loopback in local mode) here, before any lookup."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        raise FetchRefused("it is not a valid URL") from None
    if parts.scheme == "http" and local_mode:
        pass  # its address must still be loopback: checked after resolving
    elif parts.scheme != "https":
        raise FetchRefused("it must be an https URL")
    if not parts.hostname or parts.username is not None or parts.password is not None:
        raise FetchRefused("it must name a host, without user or password")
    if parts.fragment or "#" in url:
        raise FetchRefused("it must not have a fragment")
    if parse_address(parts.hostname) is not None and not allowed_address(
        parts.hostname, local_mode
    ):
        raise FetchRefused("its address is not public")
    return parts.scheme, parts.hostname, port or (443 if parts.scheme == "https" else 80)


def max_age(headers: http.client.HTTPMessage) -> int:
    """How long an answer may be reused (RFC 9111), capped at MAX_CACHE."""
    control = ", ".join(headers.get_all("Cache-Control") or [])
    lowered = control.lower()
    if "no-store" in lowered or "no-cache" in lowered:
        return 0
    found = _MAX_AGE.search(control)
    seconds = int(found.group(1)) if found else DEFAULT_CACHE
    return max(0, min(seconds, MAX_CACHE))


def failure_reason(failure: OSError | http.client.HTTPException) -> str:
    """What went wrong on the connection, in words safe to show (no address, no body)."""
    if isinstance(failure, ssl.SSLCertVerificationError):
        return "its TLS certificate could not be verified"
    if isinstance(failure, ssl.SSLError):
        return "the TLS handshake failed"
    if isinstance(failure, TimeoutError):  # socket.timeout is TimeoutError
        return "it did not answer in time"
    if isinstance(failure, ConnectionRefusedError):
        return "it refused the connection"
    if isinstance(failure, ConnectionError):
        return "the connection was closed before it answered"
    if isinstance(failure, http.client.HTTPException):
        return "its answer is not valid HTTP"
    return "it could not be reached"


class SafeFetcher:
    def __init__(
        self,
        local_mode: bool = False,
        resolve: Resolve = system_resolve,
        max_bytes: int = MAX_BYTES,
    ):
        self._local_mode = local_mode
        self._resolve = resolve
        self._max_bytes = max_bytes

    def _connect(self, url: str, deadline: float) -> tuple[http.client.HTTPConnection, str]:
        """A connection to `url`'s host pinned to a checked address, and the request target:
        every address the name resolves to must be public (a resolver may rotate them), and
        the connection goes to the one checked, so no second lookup can rebind the name."""
        scheme, host, port = check_fetchable(url, self._local_mode)
        # A literal address is its own answer (already checked): no resolver is asked.
        addresses = [host] if parse_address(host) is not None else self._resolve(host, port)
        if not addresses:
            raise FetchRefused("its host name does not resolve")
        if not all(allowed_address(a, self._local_mode) for a in addresses):
            raise FetchRefused("its host resolves to an address that is not public")
        address = addresses[0]
        checked = parse_address(address)
        if scheme == "http" and not (checked is not None and _is_loopback(checked)):
            raise FetchRefused("it must be an https URL")
        parts = urlsplit(url)
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise FetchRefused("it did not answer in time")
        connection: http.client.HTTPConnection = (
            _PinnedHTTPSConnection(host, port, address, remaining)
            if scheme == "https"
            else _PinnedHTTPConnection(host, port, address, remaining)
        )
        return connection, target

    def fetch_json(self, url: str) -> Fetched:
        deadline = time.monotonic() + TIMEOUT
        connection, target = self._connect(url, deadline)
        try:
            connection.request(
                "GET", target, headers={"Accept": "application/json", "User-Agent": "memory-auth"}
            )
            response = connection.getresponse()
            if 300 <= response.status < 400:
                raise FetchRefused(f"it answered a redirect (HTTP {response.status}), not followed")
            if response.status != 200:
                raise FetchRefused(f"it answered HTTP {response.status}, not 200")
            length = response.getheader("Content-Length")
            if length is not None and length.isdigit() and int(length) > self._max_bytes:
                raise FetchRefused(f"it is larger than {self._max_bytes} bytes")
            body = self._read(connection, response, deadline)
            media_type = (response.getheader("Content-Type") or "").split(";")[0].strip().lower()
            if media_type != "application/json" and not media_type.endswith("+json"):
                raise FetchRefused("it is not served as application/json")
            cache_for = max_age(response.headers)
        except (OSError, http.client.HTTPException) as failure:
            raise FetchRefused(failure_reason(failure)) from None
        finally:
            connection.close()
        try:
            document = json.loads(body)
        except (ValueError, UnicodeDecodeError, RecursionError):
            raise FetchRefused("it is not valid JSON") from None
        return Fetched(document, cache_for)

    def post(self, url: str, body: bytes, headers: dict[str, str], timeout: float) -> int:
        """POSTs `body` to `url` by the same rules as `fetch_json` (public addresses only, the
        connection pinned to the checked address, no redirects), within `timeout` seconds;
        the answer's status. Its body is not read. FetchRefused when the URL may not be
        reached or nothing answered in time."""
        deadline = time.monotonic() + timeout
        connection, target = self._connect(url, deadline)
        try:
            connection.request(
                "POST",
                target,
                body=body,
                headers={
                    "Content-Type": "application/json",
                    "User-Agent": "memory-auth-webhooks",
                    **headers,
                },
            )
            return connection.getresponse().status  # a 3xx is an answer, not followed
        except (OSError, http.client.HTTPException):
            raise FetchRefused("it did not answer in time") from None
        finally:
            connection.close()

    def _read(
        self,
        connection: http.client.HTTPConnection,
        response: http.client.HTTPResponse,
        deadline: float,
    ) -> bytes:
        chunks: list[bytes] = []
        size = 0
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise FetchRefused("it did not answer in time")
            if connection.sock is not None:
                connection.sock.settimeout(remaining)
            chunk = response.read1(1024)
            if not chunk:
                return b"".join(chunks)
            size += len(chunk)
            if size > self._max_bytes:
                raise FetchRefused(f"it is larger than {self._max_bytes} bytes")
            chunks.append(chunk)


class CachedFetcher:
    """SafeFetcher's answers, kept in this process as long as their headers allow."""

    def __init__(self, fetcher: SafeFetcher, now: Callable[[], float] = time.monotonic):
        self._fetcher = fetcher
        self._now = now
        self._cache: dict[str, tuple[float, Any]] = {}
        self._lock = threading.Lock()

    def fetch_json(self, url: str) -> Any:
        with self._lock:
            cached = self._cache.get(url)
            if cached is not None and cached[0] > self._now():
                return cached[1]
        fetched = self._fetcher.fetch_json(url)
        with self._lock:
            if fetched.max_age > 0:
                self._cache[url] = (self._now() + fetched.max_age, fetched.body)
            else:
                self._cache.pop(url, None)
        return fetched.body

    def forget(self, url: str) -> None:
        """Drops a document that turned out not to be usable (it is never kept)."""
        with self._lock:
            self._cache.pop(url, None)
