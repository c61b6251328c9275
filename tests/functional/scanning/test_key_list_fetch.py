"""GitHub's key list through the shared SSRF-safe fetcher, over loopback HTTP (local mode)."""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from chalicelib.fetch import FetchRefused
from chalicelib.scanning.github import KEY_LIST_MAX_BYTES, fetch_key_list


def key_list(size: int) -> bytes:
    """A key list in GitHub's format, padded to about `size` bytes with unusable entries."""
    entries = [{"key_identifier": f"k{i}", "key": "x" * 200} for i in range(size // 230 + 1)]
    return json.dumps({"public_keys": entries}).encode()


class Handler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        sizes = {"/small": 1024, "/larger-than-a-client-document": 10 * 1024,
                 "/too-large": KEY_LIST_MAX_BYTES + 1024}
        if self.path not in sizes:
            self.send_response(302)
            self.send_header("Location", "http://127.0.0.1:1/small")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        body = key_list(sizes[self.path])
        self.send_response(200)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            self.wfile.write(body)

    def log_message(self, *_: Any) -> None:
        pass


@pytest.fixture
def server() -> Iterator[str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_a_key_list_larger_than_a_client_document_is_fetched(server: str) -> None:
    document = fetch_key_list(server + "/larger-than-a-client-document", local_mode=True)

    assert len(document["public_keys"]) > 40


@pytest.mark.parametrize("path", ["/too-large", "/redirected"])
def test_an_oversized_or_redirected_list_is_refused(server: str, path: str) -> None:
    with pytest.raises(FetchRefused):
        fetch_key_list(server + path, local_mode=True)


def test_loopback_http_is_refused_outside_local_mode(server: str) -> None:
    with pytest.raises(FetchRefused):
        fetch_key_list(server + "/small", local_mode=False)
