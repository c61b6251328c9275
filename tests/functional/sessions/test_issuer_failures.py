"""An issuer's JWKS endpoint failing in any way the network can: 503, never a 500.

PyJWT's real `PyJWKClient` fetches from a loopback server that misbehaves on purpose, so
the failure reaches the exchange exactly as urllib raises it.
"""

from __future__ import annotations

import socket
import struct
import threading
from collections.abc import Iterator

import pytest
from jwt import PyJWKClient

from chalicelib.runtime import Services
from chalicelib.sessions.openid import IdTokenVerifier, TrustedIssuer
from tests.functional.conftest import Api
from tests.functional.oauth import assert_oauth_error, exchange
from tests.oidc_issuer import FakeIssuer

MISBEHAVIOURS = {
    "http 500": b"HTTP/1.1 500 Internal Server Error\r\nContent-Length: 0\r\n\r\n",
    "not json": b"HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\n<html>",
    "nested too deep": b"HTTP/1.1 200 OK\r\nContent-Length: 200000\r\n\r\n" + b"[" * 200000,
    "cut short": b'HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n{"keys": [',
    "no status line": b"garbage\r\n\r\n",
    "reset": None,  # the connection is reset once the request arrived
    "stall": b"",  # accepted, never answered: the client's timeout
}


class MisbehavingIssuer:
    """Answers every connection the same wrong way, on 127.0.0.1."""

    def __init__(self, answer: bytes | None):
        self.answer = answer
        self.socket = socket.create_server(("127.0.0.1", 0))
        self.port = self.socket.getsockname()[1]
        self._open: list[socket.socket] = []
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                connection, _ = self.socket.accept()
            except OSError:
                return
            self._open.append(connection)
            connection.recv(65536)
            if self.answer is None:
                connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                connection.close()
            elif self.answer:
                connection.sendall(self.answer)
                connection.close()

    def close(self) -> None:
        self.socket.close()
        for connection in self._open:
            connection.close()


@pytest.fixture(params=list(MISBEHAVIOURS), ids=list(MISBEHAVIOURS))
def issuer(request: pytest.FixtureRequest) -> Iterator[MisbehavingIssuer]:
    server = MisbehavingIssuer(MISBEHAVIOURS[request.param])
    try:
        yield server
    finally:
        server.close()


def test_an_issuer_whose_keys_cannot_be_read_is_503(
    api: Api, services: Services, issuer: MisbehavingIssuer
) -> None:
    idp = FakeIssuer()
    trusted = TrustedIssuer(idp.issuer, idp.audience, f"http://127.0.0.1:{issuer.port}/jwks")
    services.id_tokens = IdTokenVerifier(  # type: ignore[misc]
        [trusted], lambda entry: PyJWKClient(entry.jwks_uri, timeout=0.5)
    )
    answer = exchange(api, idp.id_token())
    assert_oauth_error(answer, 503, "temporarily_unavailable")
