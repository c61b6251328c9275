"""Fetching a client's metadata document without SSRF (chalicelib/fetch.py).

No test here connects anywhere but loopback: private and link-local addresses are refused
after resolving, before any connection, and the resolver is a stand-in where it matters.
"""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from chalicelib import fetch
from chalicelib.fetch import CachedFetcher, FetchRefused, SafeFetcher, allowed_address
from tests.fixtures.tls import https_documents


@pytest.mark.parametrize(
    ("address", "allowed"),
    [
        ("93.184.215.14", True),
        ("2606:2800:21f:cb07:6820:80da:af6b:8b2c", True),
        ("10.1.2.3", False),
        ("172.16.0.1", False),
        ("192.168.1.1", False),
        ("127.0.0.1", False),
        ("169.254.169.254", False),  # the instance metadata service
        ("100.64.0.1", False),  # carrier-grade NAT
        ("0.0.0.0", False),
        ("224.0.0.1", False),
        ("::1", False),
        ("fd00::1", False),
        ("fe80::1", False),
        ("::ffff:10.0.0.1", False),  # IPv4-mapped private
        ("::ffff:93.184.215.14", True),
        # IPv6 spellings of IPv4 addresses: public only if the IPv4 address is.
        ("64:ff9b::a9fe:a9fe", False),  # NAT64 of 169.254.169.254
        ("64:ff9b::5db8:d70e", True),  # NAT64 of 93.184.215.14
        ("64:ff9b:1::a00:1", False),  # local-use NAT64 (RFC 8215): never public
        ("::10.0.0.1", False),  # IPv4-compatible
        ("::93.184.215.14", True),
        ("2002:a9fe:a9fe::1", False),  # 6to4 through 169.254.169.254
        ("2002:5db8:d70e::1", True),
        ("2001:0:a00:1::5db8:d70e", False),  # Teredo, server 10.0.0.1
        ("2001:0:5db8:d70e::f5ff:fffe", False),  # Teredo, client 10.0.0.1
        ("2001:0:5db8:d70e::a247:28f1", True),  # Teredo, both public
        ("::ffff:0:a00:1", False),  # IPv4-translated (SIIT)
        ("3fff::1", False),  # documentation (RFC 9637)
        ("5f00::1", False),  # segment routing (RFC 9602), outside global unicast
        ("not an address", False),
    ],
)
def test_only_public_unicast_addresses_are_allowed(address: str, allowed: bool) -> None:
    assert allowed_address(address, local_mode=False) is allowed


def test_loopback_is_allowed_in_local_mode_only() -> None:
    assert allowed_address("127.0.0.1", local_mode=True)
    assert not allowed_address("10.0.0.1", local_mode=True)


class Never:
    """A resolver that must not be asked, and a record of what was."""

    def __init__(self, answers: dict[str, list[str]] | None = None):
        self.answers = answers or {}
        self.asked: list[str] = []

    def __call__(self, host: str, port: int) -> list[str]:
        self.asked.append(host)
        return self.answers[host]


@pytest.mark.parametrize(
    "url",
    [
        "http://app.example/client.json",  # http outside local mode
        "ftp://app.example/client.json",
        "https://user:pw@app.example/client.json",
        "https://app.example/client.json#x",
        "https:///client.json",
        "https://app.example:99999/client.json",
    ],
)
def test_urls_we_never_fetch_are_refused_before_resolving(url: str) -> None:
    resolver = Never()
    with pytest.raises(FetchRefused):
        SafeFetcher(resolve=resolver).fetch_json(url)
    assert resolver.asked == []


@pytest.mark.parametrize(
    "addresses",
    [
        ["10.0.0.5"],
        ["169.254.169.254"],
        ["93.184.215.14", "192.168.0.2"],
        ["64:ff9b::a9fe:a9fe"],
        ["::10.0.0.1"],
        [],
    ],
)
def test_a_host_resolving_to_any_non_public_address_is_refused_without_connecting(
    addresses: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    connections: list[Any] = []
    monkeypatch.setattr(socket, "create_connection", lambda *a, **k: connections.append(a))
    resolver = Never({"rebind.example": addresses})
    with pytest.raises(FetchRefused) as refused:
        SafeFetcher(resolve=resolver).fetch_json("https://rebind.example/client.json")
    assert connections == []
    assert "public" in refused.value.reason or "resolve" in refused.value.reason


def test_the_connection_goes_to_the_checked_address_not_a_second_lookup(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """DNS rebinding: the name is resolved once; the socket is opened to that answer."""
    dialled: list[tuple[str, int]] = []

    def dial(address: tuple[str, int], *args: Any, **kwargs: Any) -> Any:
        dialled.append(address)
        raise OSError("stop here")

    monkeypatch.setattr(socket, "create_connection", dial)
    resolver = Never({"app.example": ["93.184.215.14"]})
    with pytest.raises(FetchRefused):
        SafeFetcher(resolve=resolver).fetch_json("https://app.example:8443/client.json")
    assert dialled == [("93.184.215.14", 8443)]
    assert resolver.asked == ["app.example"]


@pytest.mark.parametrize(
    "url",
    [
        "https://[64:ff9b::a9fe:a9fe]/c.json",  # the metadata service through a NAT64 gateway
        "https://[::10.0.0.1]/c.json",  # IPv4-compatible
        "https://[::ffff:10.0.0.1]/c.json",  # IPv4-mapped
        "https://[2002:a00:1::1]/c.json",  # 6to4
        "https://169.254.169.254/c.json",
    ],
)
def test_a_literal_address_that_is_not_public_is_refused_before_any_lookup_or_connection(
    url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    dialled: list[Any] = []

    def dial(address: tuple[str, int], *args: Any, **kwargs: Any) -> Any:
        dialled.append(address)
        raise OSError("stop here")

    monkeypatch.setattr(socket, "create_connection", dial)
    host = url.split("/")[2].strip("[]")
    resolver = Never({host: [host]})  # what getaddrinfo answers for a literal
    with pytest.raises(FetchRefused) as refused:
        SafeFetcher(resolve=resolver).fetch_json(url)
    assert "not public" in refused.value.reason
    assert dialled == []
    assert resolver.asked == []


def test_a_public_literal_address_is_connected_to_without_a_lookup(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    dialled: list[tuple[str, int]] = []

    def dial(address: tuple[str, int], *args: Any, **kwargs: Any) -> Any:
        dialled.append(address)
        raise OSError("stop here")

    monkeypatch.setattr(socket, "create_connection", dial)
    resolver = Never()
    with pytest.raises(FetchRefused):
        SafeFetcher(resolve=resolver).fetch_json("https://[64:ff9b::5db8:d70e]:8443/c.json")
    assert dialled == [("64:ff9b::5db8:d70e", 8443)]
    assert resolver.asked == []


# -- against a loopback server (local mode) ---------------------------------------------------


class Served:
    def __init__(self) -> None:
        self.status = 200
        self.body: bytes = b"{}"
        self.headers: dict[str, str] = {"Content-Type": "application/json"}
        self.requests = 0
        self.delay: threading.Event | None = None


@pytest.fixture
def served() -> Iterator[tuple[Served, str]]:
    state = Served()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            state.requests += 1
            if state.delay is not None:
                state.delay.wait(5)
            self.send_response(state.status)
            for name, value in state.headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(state.body)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    # shutdown() waits for serve_forever's next poll: 10 ms, not the default 0.5 s a test.
    threading.Thread(target=server.serve_forever, args=(0.01,), daemon=True).start()
    try:
        yield state, f"http://127.0.0.1:{server.server_address[1]}/client.json"
    finally:
        if state.delay is not None:
            state.delay.set()
        server.shutdown()
        server.server_close()


def test_a_document_is_fetched_in_local_mode(served: tuple[Served, str]) -> None:
    state, url = served
    state.body = json.dumps({"client_id": url}).encode()
    state.headers["Cache-Control"] = "public, max-age=600"
    fetched = SafeFetcher(local_mode=True).fetch_json(url)
    assert fetched.body == {"client_id": url} and fetched.max_age == 600


def test_loopback_is_refused_outside_local_mode(served: tuple[Served, str]) -> None:
    state, url = served
    with pytest.raises(FetchRefused):
        SafeFetcher(local_mode=False).fetch_json(url)
    assert state.requests == 0


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"status": 302, "headers": {"Location": "http://169.254.169.254/"}}, "302"),
        ({"status": 404}, "404"),
        ({"body": b"{" + b" " * fetch.MAX_BYTES + b"}"}, "larger"),
        ({"headers": {"Content-Type": "text/html"}}, "application/json"),
        ({"body": b"not json"}, "JSON"),
    ],
)
def test_answers_we_do_not_use(
    served: tuple[Served, str], change: dict[str, Any], reason: str
) -> None:
    state, url = served
    for name, value in change.items():
        setattr(state, name, value)
    with pytest.raises(FetchRefused) as refused:
        SafeFetcher(local_mode=True).fetch_json(url)
    assert reason in refused.value.reason


def test_a_slow_answer_is_cut_off(
    served: tuple[Served, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    state, url = served
    state.delay = threading.Event()
    monkeypatch.setattr(fetch, "TIMEOUT", 0.3)
    with pytest.raises(FetchRefused) as refused:
        SafeFetcher(local_mode=True).fetch_json(url)
    assert "time" in refused.value.reason


@pytest.mark.parametrize(
    ("cache_control", "expected"),
    [
        (None, fetch.DEFAULT_CACHE),
        ("max-age=60", 60),
        ("public, max-age=999999", fetch.MAX_CACHE),
        ("no-store", 0),
        ("no-cache", 0),
    ],
)
def test_caching_follows_the_answer_up_to_a_day(
    served: tuple[Served, str], cache_control: str | None, expected: int
) -> None:
    state, url = served
    if cache_control:
        state.headers["Cache-Control"] = cache_control
    assert SafeFetcher(local_mode=True).fetch_json(url).max_age == expected


def test_the_cache_serves_until_the_answer_expires(served: tuple[Served, str]) -> None:
    state, url = served
    state.headers["Cache-Control"] = "max-age=60"
    clock = [1000.0]
    cached = CachedFetcher(SafeFetcher(local_mode=True), now=lambda: clock[0])
    cached.fetch_json(url)
    cached.fetch_json(url)
    assert state.requests == 1
    clock[0] += 61
    cached.fetch_json(url)
    assert state.requests == 2
    cached.forget(url)
    cached.fetch_json(url)
    assert state.requests == 3


# -- why a fetch failed: each failure says which ---------------------------------------------


def test_a_refused_connection_says_so() -> None:
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]

    with pytest.raises(FetchRefused) as refused:
        SafeFetcher(local_mode=True).fetch_json(f"http://127.0.0.1:{port}/client.json")

    assert refused.value.reason == "it refused the connection"


def test_a_redirect_says_it_is_not_followed(served: tuple[Served, str]) -> None:
    state, url = served
    state.status, state.headers["Location"] = 307, "http://127.0.0.1/elsewhere.json"

    with pytest.raises(FetchRefused) as refused:
        SafeFetcher(local_mode=True).fetch_json(url)

    assert refused.value.reason == "it answered a redirect (HTTP 307), not followed"


def test_a_certificate_of_an_untrusted_authority_says_tls_verification_failed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    with (
        https_documents(tmp_path, {"/client.json": {"client_id": "x"}}) as (base, _),
        pytest.raises(FetchRefused) as refused,
    ):
        SafeFetcher(local_mode=True).fetch_json(base + "/client.json")

    assert refused.value.reason == "its TLS certificate could not be verified"


def test_ssl_cert_file_trusts_a_test_authority_for_https_on_loopback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with https_documents(tmp_path, {"/client.json": {"client_id": "x"}}) as (base, ca_file):
        monkeypatch.setenv("SSL_CERT_FILE", str(ca_file))
        fetched = SafeFetcher(local_mode=True).fetch_json(base + "/client.json")

    assert fetched.body == {"client_id": "x"}


def test_a_connection_closed_before_an_answer_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    server = socket.create_server(("127.0.0.1", 0))

    def hang_up() -> None:
        connection, _ = server.accept()
        connection.recv(1024)
        connection.close()

    threading.Thread(target=hang_up, daemon=True).start()
    try:
        with pytest.raises(FetchRefused) as refused:
            port = server.getsockname()[1]
            SafeFetcher(local_mode=True).fetch_json(f"http://127.0.0.1:{port}/client.json")
    finally:
        server.close()

    assert refused.value.reason in (
        "its answer is not valid HTTP", "the connection was closed before it answered"
    )
