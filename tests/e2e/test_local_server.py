"""The local server answers as the deployed API does where a client can tell the difference:
repeated headers, non-ASCII header bytes, HEAD and 204 without a body, no query strings in
its log lines."""

from __future__ import annotations

import http.client
import socket
from urllib.parse import urlsplit

import pytest

from tests.e2e.conftest import Stack

WHOAMI = "/v1/auth/whoami"
KEYS = "/v1/auth/api-keys"


def connection(stack: Stack) -> http.client.HTTPConnection:
    parts = urlsplit(stack.endpoint)
    return http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=30)


def raw_exchange(stack: Stack, request: bytes) -> bytes:
    """Sends `request` as bytes and reads until the server closes or a full answer came."""
    parts = urlsplit(stack.endpoint)
    with socket.create_connection((parts.hostname, parts.port), timeout=30) as sock:
        sock.sendall(request)
        received = b""
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                break
            received += chunk
            head, _, body = received.partition(b"\r\n\r\n")
            lengths = [
                int(line.split(b":", 1)[1])
                for line in head.split(b"\r\n")
                if line.lower().startswith(b"content-length:")
            ]
            if lengths and len(body) >= lengths[0]:
                break
    return received


def status_of(answer: bytes) -> int:
    return int(answer.split(b" ", 2)[1])


@pytest.mark.parametrize(
    "header",
    [
        b"Authorization: Bearer\xa0" + b"sv" + b"c_" + b"A" * 50,  # a no-break space (latin-1)
        b"Authorization: Bearer \xc2\xa0token",  # a no-break space in UTF-8
        b"Authorization: \xe2\x80\x9cBearer token\xe2\x80\x9d",  # curly quotes from a web page
        b"X-Workspace-Id: ws_\xc3\xa9",
    ],
)
@pytest.mark.parametrize("path", [WHOAMI, "/v1/no/such/route"])
def test_a_non_ascii_header_byte_gets_an_answer(stack: Stack, header: bytes, path: str) -> None:
    host = urlsplit(stack.endpoint).netloc.encode()
    request = b"GET " + path.encode() + b" HTTP/1.1\r\nHost: " + host + b"\r\n"
    request += header + b"\r\nConnection: close\r\n\r\n"

    answer = raw_exchange(stack, request)

    assert answer.startswith(b"HTTP/1.1 ")
    assert status_of(answer) in (400, 401, 404)


@pytest.mark.parametrize("order", ["valid first", "valid last"])
def test_two_authorization_headers_are_refused_with_401(stack: Stack, order: str) -> None:
    values = [f"Bearer {stack.token}", "Bearer not-a-credential"]
    if order == "valid last":
        values.reverse()
    conn = connection(stack)
    conn.putrequest("GET", WHOAMI)
    for value in values:
        conn.putheader("Authorization", value)
    conn.endheaders()

    answer = conn.getresponse()
    body = answer.read()

    assert answer.status == 401
    assert b'"code":"invalid_credentials"' in body
    assert stack.token.encode() not in body


def test_two_workspace_headers_are_400(stack: Stack) -> None:
    conn = connection(stack)
    conn.putrequest("GET", WHOAMI)
    conn.putheader("Authorization", f"Bearer {stack.token}")
    conn.putheader("X-Workspace-Id", stack.workspace_id)
    conn.putheader("X-Workspace-Id", stack.workspace_id)
    conn.endheaders()

    answer = conn.getresponse()
    answer.read()

    assert answer.status == 400


@pytest.mark.parametrize("path", [WHOAMI, "/.well-known/jwks.json", "/v1/no/such/route"])
def test_a_head_answer_has_no_body_so_keep_alive_stays_in_step(stack: Stack, path: str) -> None:
    conn = connection(stack)  # one connection for both requests

    conn.request("HEAD", path, headers={"Authorization": f"Bearer {stack.token}"})
    head = conn.getresponse()
    head.read()
    conn.request("GET", WHOAMI, headers={"Authorization": f"Bearer {stack.token}"})
    after = conn.getresponse()

    assert head.status in (200, 404, 405)
    assert after.status == 200  # a stray HEAD body would have been read as this answer
    assert b'"userId"' in after.read()


def test_a_204_has_no_body_and_no_content_type(stack: Stack) -> None:
    key = stack.call("POST", KEYS, stack.token, body={"label": "to revoke"}).json()
    conn = connection(stack)

    auth = {"Authorization": f"Bearer {stack.token}"}
    conn.request("DELETE", f"{KEYS}/{key['id']}", headers=auth)
    answer = conn.getresponse()
    body = answer.read()
    conn.request("GET", WHOAMI, headers={"Authorization": f"Bearer {stack.token}"})
    after = conn.getresponse()

    assert answer.status == 204
    assert body == b""
    assert answer.getheader("Content-Type") is None
    assert after.status == 200


def test_error_bodies_of_the_local_server_use_the_services_json_spacing(stack: Stack) -> None:
    unknown = stack.call("GET", "/v1/no/such/route")
    refused = stack.call("GET", WHOAMI)

    assert unknown.text.startswith('{"type":') and ", " not in unknown.text.split('"detail"')[0]
    assert refused.text.startswith('{"type":') and '": ' not in refused.text


@pytest.mark.parametrize("parameter", ["api_key", "access_token", "key", "token"])
def test_a_credential_in_the_url_is_refused_with_the_header_to_use(
    stack: Stack, parameter: str
) -> None:
    # That no log line prints it: tests/unit/local/test_gateway.py (the access log).
    marker = f"querymarker{parameter}"

    answer = stack.call("GET", f"{WHOAMI}?{parameter}={marker}")

    assert answer.status_code == 400
    assert answer.json()["code"] == "credential_in_url"
    assert "Authorization" in answer.json()["detail"]
    assert marker not in answer.text


@pytest.mark.parametrize(
    ("option", "variable", "what"),
    [
        ("--port", "PORT", "the service"),
        ("--idp-port", "IDP_PORT", "development OpenID issuer"),
        ("--moto-port", "MOTO_PORT", "moto"),
        ("--mcp-port", "MCP_PORT", "development MCP server"),
    ],
)
def test_a_busy_port_stops_the_stack_with_one_line_before_anything_starts(
    option: str, variable: str, what: str
) -> None:
    import subprocess
    import sys

    from infra.template import PROJECT_DIR

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        busy = taken.getsockname()[1]
        arguments = ["--port", "0", "--idp-port", "0", "--mcp-port", "0", option, str(busy)]
        result = subprocess.run(
            [sys.executable, "-m", "local.stack", *arguments],
            cwd=PROJECT_DIR, capture_output=True, text=True, timeout=60,
        )

    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1
    assert str(busy) in lines[0] and what in lines[0] and f"{variable}=" in lines[0]
    assert result.stdout == ""  # nothing was started


@pytest.mark.parametrize("method", ["TRACE", "CONNECT"])
def test_an_unrouted_method_is_the_apps_405_not_a_501_page(stack: Stack, method: str) -> None:
    conn = connection(stack)
    conn.request(method, "/.well-known/jwks.json")
    answer = conn.getresponse()
    body = answer.read()

    assert answer.status == 405
    assert answer.getheader("Content-Type") == "application/problem+json"
    assert b'"code":"method_not_allowed"' in body
    assert "GET" in (answer.getheader("Allow") or "")
