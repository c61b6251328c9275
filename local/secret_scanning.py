"""A development stand-in for GitHub's secret scanning, for local runs only.

It holds an ECDSA P-256 key, publishes it as GitHub publishes its own, and signs any body
handed to it, so that a signed leaked-key report can be replayed against the local service
(`python -m local.scan_report`). `make run` starts it on http://127.0.0.1:8003 and points
the local service's SECRET_SCANNING_KEYS_URL at its key list. Anyone who can reach it can
have anything signed: it refuses to start unless LOCAL_MODE=1 and binds loopback only; the
service accepts its plain-http key list only in local mode. `local/` is never deployed.

    GET  /meta/public_keys/secret_scanning
         -> {"public_keys": [{"key_identifier", "key", "is_current"}]}
    POST /sign  <raw body>  ->  {"key_identifier": "...", "signature": "<base64 DER>"}
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from local.idp import LOOPBACK, NotLocal

KEYS_PATH = "/meta/public_keys/secret_scanning"
SIGN_PATH = "/sign"
MAX_BODY_BYTES = 1024 * 1024


class DevSigner:
    """A P-256 key pair, as GitHub's signer: its published list and its signatures."""

    def __init__(self) -> None:
        from cryptography.hazmat.primitives import serialization
        from cryptography.hazmat.primitives.asymmetric import ec

        self._private_key = ec.generate_private_key(ec.SECP256R1())
        self.public_pem = (
            self._private_key.public_key()
            .public_bytes(
                serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
            )
            .decode("ascii")
        )
        # GitHub's identifiers are hex digests; ours is the SHA-256 of the public key.
        self.key_identifier = hashlib.sha256(self.public_pem.encode()).hexdigest()
        self.lists_served = 0  # how often the key list was fetched (tests check the cache)

    def key_list(self) -> dict[str, Any]:
        self.lists_served += 1
        return {
            "public_keys": [
                {"key_identifier": self.key_identifier, "key": self.public_pem, "is_current": True}
            ]
        }

    def sign(self, body: bytes) -> str:
        from cryptography.hazmat.primitives import hashes
        from cryptography.hazmat.primitives.asymmetric import ec

        signature = self._private_key.sign(body, ec.ECDSA(hashes.SHA256()))
        return base64.b64encode(signature).decode("ascii")


def _handler(signer: DevSigner, quiet: bool) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        disable_nagle_algorithm = True  # headers and body are two writes (local/gateway.py)

        def _answer(self, status: int, body: dict[str, Any]) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            if self.path == KEYS_PATH:
                self._answer(200, signer.key_list())
            else:
                self._answer(404, {"message": "Not Found"})

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            if self.path != SIGN_PATH or length > MAX_BODY_BYTES:
                self._answer(404 if self.path != SIGN_PATH else 413, {"message": "refused"})
                return
            body = self.rfile.read(length)
            self._answer(
                200, {"key_identifier": signer.key_identifier, "signature": signer.sign(body)}
            )

        def log_message(self, format: str, *args: Any) -> None:
            if not quiet:
                super().log_message(format, *args)

    return Handler


class DevSecretScanningServer:
    """The stand-in over HTTP on loopback, served from a daemon thread."""

    def __init__(self, host: str = "127.0.0.1", port: int = 8003, quiet: bool = True):
        if os.environ.get("LOCAL_MODE") != "1":
            raise NotLocal("the development secret-scanning signer runs only with LOCAL_MODE=1")
        if host not in LOOPBACK:
            raise NotLocal("the development secret-scanning signer binds loopback only")
        self.signer = DevSigner()
        self._server = ThreadingHTTPServer((host, port), _handler(self.signer, quiet))
        self._server.daemon_threads = True
        self.port = int(self._server.server_address[1])
        self.endpoint = f"http://{host}:{self.port}"
        self.keys_url = self.endpoint + KEYS_PATH
        self._thread: threading.Thread | None = None

    def start(self) -> DevSecretScanningServer:
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
