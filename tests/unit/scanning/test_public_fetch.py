"""The SSRF rules of the key-list fetch, decided before any connection is made (no I/O)."""

from __future__ import annotations

import socket
from typing import Any

import pytest

from chalicelib.scanning import public_fetch
from chalicelib.scanning.public_fetch import FetchRefused, check_url, fetch


def resolving_to(*addresses: str) -> Any:
    def getaddrinfo(host: str, port: int, **_: Any) -> list[Any]:
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (a, port)) for a in addresses]

    return getaddrinfo


def never_connect(*_: Any, **__: Any) -> Any:
    raise AssertionError("a refused URL must not be connected to")


@pytest.fixture(autouse=True)
def no_connections(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(socket, "create_connection", never_connect)


@pytest.mark.parametrize(
    "url",
    ["http://api.github.com/keys", "ftp://api.github.com/keys", "file:///etc/passwd",
     "https:///nohost", "gopher://x"],
)
def test_only_https_urls_outside_local_mode(url: str) -> None:
    with pytest.raises(FetchRefused):
        check_url(url, local_mode=False)


def test_http_is_checked_only_in_local_mode() -> None:
    check_url("http://127.0.0.1:8002/meta", local_mode=True)


@pytest.mark.parametrize(
    "addresses",
    [("10.0.0.5",), ("127.0.0.1",), ("169.254.169.254",), ("192.168.1.1",), ("::1",),
     ("fd00::1",), ("140.82.112.5", "10.0.0.5"), ("100.64.0.1",), ("0.0.0.0",)],
)
def test_https_to_a_host_with_any_non_public_address_is_refused(
    monkeypatch: pytest.MonkeyPatch, addresses: tuple[str, ...]
) -> None:
    monkeypatch.setattr(socket, "getaddrinfo", resolving_to(*addresses))

    with pytest.raises(FetchRefused, match="not allowed"):
        fetch("https://keys.example.com/meta")


def test_local_http_must_resolve_to_loopback_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(socket, "getaddrinfo", resolving_to("140.82.112.5"))

    with pytest.raises(FetchRefused, match="not allowed"):
        fetch("http://sneaky.example.com/meta", local_mode=True)


def test_a_host_that_does_not_resolve_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    def fails(*_: Any, **__: Any) -> Any:
        raise socket.gaierror("no such host")

    monkeypatch.setattr(socket, "getaddrinfo", fails)

    with pytest.raises(FetchRefused, match="resolve"):
        fetch("https://nowhere.invalid/meta")


def test_defaults_are_small_and_quick() -> None:
    assert public_fetch.MAX_BYTES <= 64 * 1024
    assert public_fetch.TIMEOUT_SECONDS <= 5
