"""A headless MCP client: signs in through this service's OAuth, then calls the tools.

    . .local/connection.env && .venv/bin/python examples/mcp_client.py

Reads MEMORY_LOCAL_MCP_RESOURCE (the development MCP server). The `mcp` SDK registers the
client, runs the authorization code flow with PKCE and refreshes; the "browser" below signs
in as `developer` (`login_hint`: the development issuer asks nothing) and allows on the
consent page, in the development user's workspace.
"""

import asyncio
import os
import re
from html import unescape
from urllib.parse import parse_qs, urlsplit

import httpx2
from mcp import Client
from mcp.client.auth import OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientMetadata

CALLBACK = "http://127.0.0.1:47213/callback"  # nothing listens: the browser reads the URL
browser, arrived = httpx2.AsyncClient(follow_redirects=False, timeout=30), []


async def open_in_browser(url: str) -> None:
    response = await browser.get(url + "&login_hint=developer")
    while not str(response.headers.get("location", "")).startswith(CALLBACK):
        if response.is_redirect:
            response = await browser.get(response.headers["location"])
        else:  # the consent page: its hidden fields, the first workspace, then Allow
            page = response.text
            form = dict(re.findall(r'type="hidden" name="(\w+)" value="([^"]*)"', page))
            form["workspace_id"] = re.search(r'<option value="([^"]*)"', page)[1]
            form = {name: unescape(value) for name, value in form.items()} | {"decision": "allow"}
            action = re.search(r'<form method="post" action="([^"]*)"', page)[1]
            response = await browser.post(response.url.join(unescape(action)), data=form)
    arrived.append(response.headers["location"])


async def callback() -> AuthorizationCodeResult:
    query = {k: v[0] for k, v in parse_qs(urlsplit(arrived.pop()).query).items()}
    return AuthorizationCodeResult(code=query["code"], state=query["state"], iss=query["iss"])


class Memory:  # the SDK's TokenStorage; a real client keeps these somewhere safe
    tokens = client_info = None
    async def get_tokens(self): return self.tokens
    async def set_tokens(self, tokens): self.tokens = tokens
    async def get_client_info(self): return self.client_info
    async def set_client_info(self, info): self.client_info = info


async def main() -> None:
    resource = os.environ["MEMORY_LOCAL_MCP_RESOURCE"]
    metadata = OAuthClientMetadata(client_name="example agent", redirect_uris=[CALLBACK])
    auth = OAuthClientProvider(resource, metadata, Memory(), open_in_browser, callback)
    async with (
        httpx2.AsyncClient(auth=auth, timeout=30) as http,
        Client(streamable_http_client(resource, http_client=http)) as client,
    ):
        print((await client.call_tool("echo", {"text": "hello"})).content[0].text)
        print((await client.call_tool("whoami", {})).content[0].text)


asyncio.run(main())
