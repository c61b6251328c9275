"""The official MCP conformance tool's `authorization-code-grant` scenario against the local
stack's authorization server, for a registered client and for a metadata-document client.

The tool prints an authorization URL for a person to open and waits on its own loopback
callback server. Here the test is that person: it opens the URL, signs in at the development
provider, allows on our consent page and follows the redirect to the tool's callback, which
then redeems the code at our token endpoint and judges every answer. The scenario needs the
metadata scenario's result, so the tool runs both (its `authorization` command with no
`--scenario`).
"""

from __future__ import annotations

import json
import re
import subprocess
import threading
from collections.abc import Iterator
from html.parser import HTMLParser
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urljoin

import httpx
import pytest

from local.running import running_stack
from local.stack import DEV_SUBJECT, free_port
from tests.e2e.node import installed

CONFORMANCE_DIR = Path(__file__).resolve().parents[1] / "conformance"
_COLOURS = re.compile(r"\x1b\[[0-9;]*m")
PASSED = re.compile(r"✓ authorization-code-grant: 1 passed, 0 failed")


@pytest.fixture(scope="module")
def stack() -> Iterator[dict[str, Any]]:
    """A stack of its own: the registrations here leave the other tests' limit alone."""
    with running_stack() as info:
        yield info


class Form(HTMLParser):
    """A page's form as a browser submits it (inputs, each select's first option)."""

    def __init__(self) -> None:
        super().__init__()
        self.action = ""
        self.fields: dict[str, str] = {}
        self._select: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = {name: value or "" for name, value in attrs}
        if tag == "form":
            self.action = found.get("action", "")
        elif tag == "input" and "name" in found:
            self.fields[found["name"]] = found.get("value", "")
        elif tag == "select":
            self._select = found.get("name")
        elif tag == "option" and self._select and self._select not in self.fields:
            self.fields[self._select] = found.get("value", "")

    def handle_endtag(self, tag: str) -> None:
        if tag == "select":
            self._select = None


def sign_in_and_allow(url: str, callback: str) -> None:
    """A person at a browser: signs in as the development user, allows, and lands on the
    tool's callback (which the browser then loads)."""
    with httpx.Client(timeout=30) as browser:  # keeps cookies, follows nothing by itself
        response = browser.get(url)
        for _ in range(20):
            if response.status_code in (302, 303):
                location = urljoin(str(response.url), response.headers["location"])
                response = browser.get(location)
                if location.startswith(callback):
                    assert response.status_code == 200, response.text
                    return
                continue
            assert response.status_code == 200, response.text
            form = Form()
            form.feed(response.text)
            fields = dict(form.fields)
            if "subject" in fields:  # the development provider's sign-in page
                fields.update(subject=DEV_SUBJECT, email="developer@example.test")
            else:  # our consent page
                fields["decision"] = "allow"
            response = browser.post(urljoin(str(response.url), form.action), data=fields)
    raise AssertionError("the browser never reached the callback")


def run_code_grant(stack: dict[str, Any], client_id: str, port: int) -> str:
    """The tool's authorization scenarios for `client_id`, its output once it ended."""
    folder = installed(CONFORMANCE_DIR)
    command = [
        "npm", "run", "--silent", "authorization", "--",
        "--url", stack["endpoint"], "--client-id", client_id, "--port", str(port),
        "--resource", stack["mcpResource"],
    ]
    tool = subprocess.Popen(  # noqa: S603 (the pinned tool, a fixed argument list)
        command, cwd=folder, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    assert tool.stdout is not None
    lines: list[str] = []
    try:
        authorize = stack["endpoint"] + "/v1/oauth/authorize?"
        url = None
        for line in tool.stdout:
            lines.append(line)
            if line.startswith(authorize):
                url = line.strip()
            elif url is not None and line.startswith("Callback server started"):
                sign_in_and_allow(url, f"http://127.0.0.1:{port}/callback")
                break
        lines.extend(tool.stdout)
        tool.wait(timeout=120)
    finally:
        if tool.poll() is None:
            tool.kill()
            tool.wait()
    return _COLOURS.sub("", "".join(lines))


def test_the_code_grant_scenario_passes_for_a_registered_client(
    stack: dict[str, Any],
) -> None:
    port = free_port()
    registered = httpx.post(
        stack["endpoint"] + "/v1/oauth/register",
        json={
            "client_name": "MCP conformance tool",
            "redirect_uris": [f"http://127.0.0.1:{port}/callback"],
            "token_endpoint_auth_method": "none",
        },
        timeout=30,
    )
    assert registered.status_code == 201, registered.text

    output = run_code_grant(stack, registered.json()["client_id"], port)

    assert PASSED.search(output), output
    assert "Total: 3 passed, 0 failed" in output, output


class MetadataDocument:
    """A Client ID Metadata Document on loopback (fetched over http in local mode only)."""

    def __init__(self, port: int) -> None:
        documents: dict[str, Any] = {}

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                body = json.dumps(documents.get(self.path)).encode()
                self.send_response(200 if self.path in documents else 404)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/conformance.json"
        documents["/conformance.json"] = {
            "client_id": self.url,
            "client_name": "MCP conformance tool (metadata document)",
            "redirect_uris": [f"http://127.0.0.1:{port}/callback"],
            "grant_types": ["authorization_code"],
            "token_endpoint_auth_method": "none",
        }
        threading.Thread(target=self._server.serve_forever, args=(0.01,), daemon=True).start()

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()


def test_the_code_grant_scenario_passes_for_a_metadata_document_client(
    stack: dict[str, Any],
) -> None:
    port = free_port()
    document = MetadataDocument(port)
    try:
        output = run_code_grant(stack, document.url, port)
    finally:
        document.close()

    assert PASSED.search(output), output
    assert "Total: 3 passed, 0 failed" in output, output
