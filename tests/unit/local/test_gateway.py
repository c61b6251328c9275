"""The local server's access log never prints a query string (a credential may be in it)."""

from __future__ import annotations

import pytest

from local.gateway import LocalApiGatewayHandler, without_query

SECRET = "sv" + "c_" + "Q" * 50


def handler(requestline: str) -> LocalApiGatewayHandler:
    made = object.__new__(LocalApiGatewayHandler)  # no socket: only its logging is used
    made.requestline = requestline
    made.client_address = ("127.0.0.1", 50000)
    return made


@pytest.mark.parametrize(
    "path",
    [
        f"/v1/auth/whoami?api_key={SECRET}",
        f"/v1/auth/api-keys?limit=5&token={SECRET}",
        f"/nowhere?{SECRET}",
    ],
)
def test_the_access_log_line_has_the_path_without_its_query(
    capsys: pytest.CaptureFixture[str], path: str
) -> None:
    handler(f"GET {path} HTTP/1.1").log_request(200)

    line = capsys.readouterr().err
    assert path.split("?")[0] in line
    assert SECRET not in line and "?" not in line


def test_an_error_log_line_has_no_query_either(capsys: pytest.CaptureFixture[str]) -> None:
    made = handler(f"GET /x?key={SECRET} HTTP/9")
    made.log_error("code %d, message %s", 400, f"Bad request version ('GET /x?key={SECRET}')")

    assert SECRET not in capsys.readouterr().err


def test_without_query_keeps_everything_else() -> None:
    assert without_query('"GET /a/b?c=d HTTP/1.1" 200 -') == '"GET /a/b HTTP/1.1" 200 -'


def test_every_local_server_answers_without_waiting_for_a_delayed_ack() -> None:
    """http.server writes the headers, then the body: with Nagle's algorithm on, the body
    waits for the client's delayed ACK, 40 ms on every answer over a kept-alive connection."""
    from local.idp import DevIdentityProvider
    from local.idp import _handler as idp_handler
    from local.secret_scanning import DevSigner
    from local.secret_scanning import _handler as scan_handler

    handlers = [
        LocalApiGatewayHandler,
        idp_handler(DevIdentityProvider("http://127.0.0.1:1"), True, frozenset()),
        scan_handler(DevSigner(), True),
    ]

    assert [handler.disable_nagle_algorithm for handler in handlers] == [True, True, True]
