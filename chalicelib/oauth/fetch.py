"""Fetching a URL that a client named (its Client ID Metadata Document), without SSRF.

A `client_id` URL is chosen by whoever starts an authorization, so fetching it must never
reach anything but the public internet: `https` only; the host resolved once and every
address checked (public unicast only); the connection made to that checked address (the
certificate still verified for the host name), so a second DNS answer cannot send us to
`169.254.169.254` or `10.x` (DNS rebinding); no redirects; at most `MAX_BYTES` in `TIMEOUT`
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


def allowed_address(address: str, local_mode: bool) -> bool:
    """Public unicast only (`is_global` also refuses 100.64/10, 192.0.0/24, documentation
    and benchmarking ranges); loopback too in local mode."""
    try:
        ip = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        return False
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    if local_mode and ip.is_loopback:
        return True
    return ip.is_global and not ip.is_multicast


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
    """(scheme, host, port) of a URL we may fetch, else FetchRefused (no I/O)."""
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

    def fetch_json(self, url: str) -> Fetched:
        deadline = time.monotonic() + TIMEOUT
        scheme, host, port = check_fetchable(url, self._local_mode)
        addresses = self._resolve(host, port)
        if not addresses:
            raise FetchRefused("its host name does not resolve")
        # Every address must pass, not just the first: a resolver may rotate them.
        if not all(allowed_address(a, self._local_mode) for a in addresses):
            raise FetchRefused("its host resolves to an address that is not public")
        address = addresses[0]
        if scheme == "http" and not ipaddress.ip_address(address.split("%", 1)[0]).is_loopback:
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
        try:
            connection.request(
                "GET", target, headers={"Accept": "application/json", "User-Agent": "memory-auth"}
            )
            response = connection.getresponse()
            if response.status != 200:  # redirects are not followed
                raise FetchRefused(f"it answered HTTP {response.status}, not 200")
            length = response.getheader("Content-Length")
            if length is not None and length.isdigit() and int(length) > self._max_bytes:
                raise FetchRefused(f"it is larger than {self._max_bytes} bytes")
            body = self._read(connection, response, deadline)
            media_type = (response.getheader("Content-Type") or "").split(";")[0].strip().lower()
            if media_type != "application/json" and not media_type.endswith("+json"):
                raise FetchRefused("it is not served as application/json")
            cache_for = max_age(response.headers)
        except (OSError, http.client.HTTPException):
            raise FetchRefused("it could not be fetched in time") from None
        finally:
            connection.close()
        try:
            document = json.loads(body)
        except (ValueError, UnicodeDecodeError, RecursionError):
            raise FetchRefused("it is not valid JSON") from None
        return Fetched(document, cache_for)

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
