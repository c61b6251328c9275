"""The key-list fetch over real loopback HTTP (local mode): answers, limits, no redirects."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from chalicelib.scanning.public_fetch import FetchRefused, fetch


class Handler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        if self.path == "/ok":
            self._send(200, b'{"public_keys": []}')
        elif self.path == "/big":
            self._send(200, b"x" * (70 * 1024))
        elif self.path == "/big-unannounced":
            self.send_response(200)
            self.end_headers()
            self.wfile.write(b"x" * (70 * 1024))
        elif self.path == "/redirect":
            self.send_response(302)
            self.send_header("Location", "http://127.0.0.1:1/ok")
            self.send_header("Content-Length", "0")
            self.end_headers()
        elif self.path == "/slow":
            threading.Event().wait(2)
            self._send(200, b"{}")
        else:
            self._send(404, b"{}")

    def _send(self, status: int, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):  # a client gave up
            self.wfile.write(body)

    def log_message(self, *_: Any) -> None:
        pass


@pytest.fixture
def server() -> Iterator[str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_a_loopback_document_is_fetched_in_local_mode(server: str) -> None:
    assert fetch(server + "/ok", local_mode=True) == b'{"public_keys": []}'


def test_loopback_http_is_refused_outside_local_mode(server: str) -> None:
    with pytest.raises(FetchRefused):
        fetch(server + "/ok", local_mode=False)


@pytest.mark.parametrize("path", ["/big", "/big-unannounced"])
def test_an_answer_over_the_size_limit_is_refused(server: str, path: str) -> None:
    with pytest.raises(FetchRefused, match="too large"):
        fetch(server + path, local_mode=True)


@pytest.mark.parametrize("path", ["/redirect", "/missing"])
def test_redirects_and_errors_are_not_followed(server: str, path: str) -> None:
    with pytest.raises(FetchRefused, match="HTTP"):
        fetch(server + path, local_mode=True)


def test_a_slow_answer_is_cut_off(server: str) -> None:
    with pytest.raises(FetchRefused):
        fetch(server + "/slow", local_mode=True, timeout=0.5)
