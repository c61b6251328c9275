"""GET a small document from a URL outside our control, safely.

Only `https` to public addresses (and, in local mode, `http` to loopback); the host is
resolved once and every address it resolves to must qualify, then the connection goes to
that address (so a second, different DNS answer cannot point it inside); no redirects; a
size limit and a time limit. Standard library only, imported when a fetch happens.
"""

from __future__ import annotations

from urllib.parse import urlsplit

MAX_BYTES = 64 * 1024
TIMEOUT_SECONDS = 3.0


class FetchRefused(Exception):
    """The URL, its addresses or its answer are not acceptable (the message names no secret)."""


def _qualifies(address: str, local_http: bool) -> bool:
    import ipaddress

    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if local_http:
        return ip.is_loopback
    return ip.is_global and not ip.is_multicast


def check_url(url: str, local_mode: bool) -> None:
    """Refuse a URL this module would never fetch."""
    parts = urlsplit(url)
    if not parts.hostname:
        raise FetchRefused("the URL names no host")
    if parts.scheme == "https":
        return
    if parts.scheme == "http" and local_mode:
        return  # loopback only: checked on the resolved addresses
    raise FetchRefused("only https URLs are fetched (http only for loopback in local mode)")


def fetch(
    url: str,
    local_mode: bool = False,
    max_bytes: int = MAX_BYTES,
    timeout: float = TIMEOUT_SECONDS,
) -> bytes:
    """The body of a 200 answer to GET `url`, or FetchRefused."""
    import http.client
    import socket
    import ssl
    import time

    check_url(url, local_mode)
    parts = urlsplit(url)
    https = parts.scheme == "https"
    host = parts.hostname or ""
    port = parts.port or (443 if https else 80)
    deadline = time.monotonic() + timeout
    try:
        found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError):
        raise FetchRefused("the host does not resolve") from None
    addresses = sorted({str(info[4][0]) for info in found})
    if not addresses or not all(_qualifies(a, local_http=not https) for a in addresses):
        raise FetchRefused("the host resolves to an address that is not allowed")
    try:
        sock = socket.create_connection((addresses[0], port), timeout=timeout)
        if https:
            sock = ssl.create_default_context().wrap_socket(sock, server_hostname=host)
        connection = http.client.HTTPConnection(host, port, timeout=timeout)
        connection.sock = sock  # already connected, to the address checked above
        path = parts.path or "/"
        if parts.query:
            path += "?" + parts.query
        connection.request(
            "GET", path, headers={"Accept": "application/json", "User-Agent": "memory-auth"}
        )
        answer = connection.getresponse()
        if answer.status != 200:
            raise FetchRefused(f"the answer was HTTP {answer.status}")
        declared = answer.getheader("Content-Length")
        if declared and declared.isdigit() and int(declared) > max_bytes:
            raise FetchRefused("the answer is too large")
        chunks: list[bytes] = []
        size = 0
        while size <= max_bytes:
            if time.monotonic() > deadline:
                raise FetchRefused("the answer took too long")
            chunk = answer.read(min(8192, max_bytes + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if size > max_bytes:
            raise FetchRefused("the answer is too large")
        connection.close()
        return b"".join(chunks)
    except (OSError, http.client.HTTPException, ssl.SSLError):
        raise FetchRefused("the host could not be reached") from None
